// Playing with friends: the table shows an invitation (a link with Copy,
// and the terminal's command); a friend who opens the link is asked their
// name once and sits down, in place of a bot when the owner already filled
// the seats; the owner takes a bot out and swaps seats before the start;
// during the match the owner hands the seat of a player who left to a
// person with a link of its own.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { createFromLobby, openPage, shot, tableStatus } from '../lib/harness.mjs';

async function seatsOf(api, id) {
  return (await tableStatus(api, id)).seats.map((s) => [s.seat, s.name, s.kind]);
}

async function until(what, fn, timeout = 10000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    assert.ok(Date.now() < deadline, what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function friendTests(suite) {
  it('invites a friend by link into a bot\'s seat, asks the name once, and lets the owner arrange the seats', async () => {
    const { browser, stack } = suite;
    const owner = await openPage(browser, stack.url);
    const friend = await openPage(browser, stack.url);
    try {
      const id = await createFromLobby(owner.page, { player: 'Olga', table: 'Friends', options: { seat: 'south' } });
      // The invitation: a link to copy and the terminal's command.
      await owner.page.waitForSelector('#invite-link');
      const link = await owner.page.inputValue('#invite-link');
      assert.equal(link, `${new URL(stack.url).origin}/#/table/${id}/join`);
      assert.equal(await owner.page.inputValue('#invite-command'), `spades-tui --url ${new URL(stack.url).origin} --join ${id}`);
      await owner.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(stack.url).origin });
      await owner.page.click('#invite .copy-btn >> nth=0');
      await owner.page.waitForSelector('#invite .copy-said:has-text("Copied.")');
      assert.equal(await owner.page.evaluate(() => navigator.clipboard.readText()), link);
      await assertAccessible(assert, owner.page, 'the invitation', '#invite');
      // The owner fills the seats with bots before anyone came.
      await owner.page.click('#btn-add-bots');
      await owner.page.waitForSelector('#btn-start:not([disabled])');

      // The friend opens the link: asked their name, then seated in place
      // of a bot (the table lets people take bots' seats).
      await friend.page.goto(link.replace(new URL(stack.url).origin, ''));
      await friend.page.waitForSelector('dialog#name-dialog[open]');
      await friend.page.fill('#sit-name', 'Bea');
      await friend.page.click('dialog#name-dialog [data-action="ok"]');
      await friend.page.waitForSelector('.table-screen .seat.me');
      const beaSeat = await friend.page.getAttribute('.seat.me', 'data-seat');
      assert.equal(await friend.page.evaluate(() => location.hash), `#/table/${id}`, 'the address keeps only the table');
      let seats = await seatsOf(stack.api, id);
      assert.deepEqual(seats.find((s) => s[0] === beaSeat), [beaSeat, 'Bea', 'human']);
      assert.equal(seats.filter((s) => s[2] === 'bot').length, 2, 'Bea took a bot\'s seat');
      await shot(friend.page, 'friend-seated.png');
      // The name is remembered: another invitation does not ask it again.
      assert.equal(await friend.page.evaluate(() => JSON.parse(localStorage.getItem('spades.v1.name'))), 'Bea');

      // The owner arranges the seats: a bot out, then Bea moved.
      await owner.page.click('#btn-arrange');
      const botSeat = seats.find((s) => s[2] === 'bot')[0];
      await owner.page.click(`dialog#arrange #remove-bot-${botSeat}`);
      await until('the bot left its seat', async () => (await seatsOf(stack.api, id)).find((s) => s[0] === botSeat)[2] == null);
      await owner.page.click('#btn-arrange');
      await owner.page.selectOption(`dialog#arrange #swap-${beaSeat}`, botSeat);
      await until('Bea moved', async () => (await seatsOf(stack.api, id)).find((s) => s[0] === botSeat)[1] === 'Bea');
      await friend.page.waitForSelector(`.table-screen .seat.me[data-seat="${botSeat}"]`);
      seats = await seatsOf(stack.api, id);
      assert.equal(seats.find((s) => s[0] === beaSeat)[2], null, 'her old seat is empty');
      owner.assertClean();
      friend.assertClean();
    } finally {
      await owner.close();
      await friend.close();
    }
  });

  it('hands the seat of a player who left to a person the owner invites, mid-match', async () => {
    const { browser, stack } = suite;
    const owner = await openPage(browser, stack.url);
    const leaver = await openPage(browser, stack.url);
    const newcomer = await openPage(browser, stack.url);
    try {
      const id = await createFromLobby(owner.page, { player: 'Oona', table: 'Hand over', options: { seat: 'south' } });
      await leaver.page.goto(`/#/table/${id}/join`);
      await leaver.page.fill('#sit-name', 'Luz');
      await leaver.page.click('dialog#name-dialog [data-action="ok"]');
      await leaver.page.waitForSelector('.table-screen .seat.me');
      const seat = await leaver.page.getAttribute('.seat.me', 'data-seat');
      await owner.page.click('#btn-add-bots');
      await owner.page.click('#btn-start:not([disabled])');
      await leaver.page.waitForSelector('#btn-leave:not([hidden])');
      await leaver.page.click('#btn-leave');
      await leaver.page.locator('dialog#leave-confirm [data-action="true"]').click();
      // The owner invites someone to the seat.
      await owner.page.click(`#btn-invite-${seat}`);
      await owner.page.waitForSelector('dialog#invite-seat[open] #invite-seat-link');
      const link = await owner.page.inputValue('#invite-seat-link');
      assert.match(link, new RegExp(`/#/table/${id}/invite/${seat}/[0-9a-f]{64}$`));
      await owner.page.keyboard.press('Escape');
      await newcomer.page.goto(link.replace(new URL(stack.url).origin, ''));
      await newcomer.page.fill('#sit-name', 'Nia');
      await newcomer.page.click('dialog#name-dialog [data-action="ok"]');
      await newcomer.page.waitForSelector(`.table-screen .seat.me[data-seat="${seat}"]`);
      const status = await until('Nia plays the seat', async () => {
        const st = await tableStatus(stack.api, id);
        const s = st.seats.find((x) => x.seat === seat);
        return s.name === 'Nia' && s.kind === 'human' ? st : null;
      });
      assert.notEqual(status.phase, 'lobby');
      owner.assertClean();
      newcomer.assertClean();
    } finally {
      await owner.close();
      await leaver.close();
      await newcomer.close();
    }
  });
}
