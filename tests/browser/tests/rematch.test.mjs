// Rematch: after the match the players see who is ready, the owner starts
// another with the same seats and options, the page follows to it with its
// seat, and the finished match's record stays as it was.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createFromLobby, fillBotsAndStart, openPage, tableIdOf, tableStatus } from '../lib/harness.mjs';

export function rematchTests(suite) {
  it('shows who is ready after the match and lets the owner start a rematch with the same seats and options', async () => {
    const { browser, fastStack: stack } = suite;
    const p = await openPage(browser, stack.url);
    const { page } = p;
    try {
      const id = await createFromLobby(page, { player: 'Rex', table: 'Again', options: { match_end: 'hands:5', seat: 'west', nil: 'off' } });
      await fillBotsAndStart(page);
      // The clock plays for Rex (the autopilot after three timeouts) until the end.
      for (;;) {
        const el = await page.waitForSelector('dialog#hand-scoring[open], dialog#match-over[open]', { timeout: 60000 });
        if (await el.evaluate((d) => d.id === 'match-over')) break;
        const n = await el.$eval('.scoring', (t) => t.dataset.hand);
        await el.$eval('[data-action="ok"]', (b) => b.click());
        await page.waitForFunction((num) => !document.querySelector(`dialog#hand-scoring[open] .scoring[data-hand="${num}"]`), n);
      }
      const before = await (await fetch(`${stack.api}/api/v1/matches/${id}`)).json();
      assert.equal(before.finished, true);
      // The rematch is offered in the match-over dialog itself: who is
      // ready (the bots are, Rex not yet), and the buttons.
      const dlg = 'dialog#match-over';
      await page.waitForSelector(`${dlg} #dlg-rematch-ready`);
      assert.match(await page.textContent(`${dlg} #dlg-rematch-ready [data-seat="west"]`), /Rex: not yet/);
      assert.match(await page.textContent(`${dlg} #dlg-rematch-ready [data-seat="north"]`), /ready/);
      await page.click(`${dlg} #dlg-btn-ready`);
      await page.waitForSelector(`${dlg} #dlg-rematch-ready [data-seat="west"].ready`);
      assert.equal(await page.getAttribute(`${dlg} #dlg-btn-ready`, 'aria-pressed'), 'true');
      assert.ok(p.rec.sent.some((m) => m.type === 'rematch' && m.ready === true));
      // The table behind the dialog says the same.
      await page.click(`${dlg} [data-action="stay"]`);
      await page.waitForSelector('#rematch-ready [data-seat="west"].ready');
      assert.equal(await page.getAttribute('#btn-ready', 'aria-pressed'), 'true');

      // The owner starts it: the page follows to the new table, same seat.
      await page.click('#btn-rematch');
      await page.waitForFunction((old) => /#\/table\//.test(location.hash) && !location.hash.includes(old), id, { timeout: 10000 });
      const next = tableIdOf(page);
      assert.notEqual(next, id);
      await page.waitForSelector('.table-screen .seat.me[data-seat="west"]');
      const status = await tableStatus(stack.api, next);
      assert.deepEqual(status.options, (await tableStatus(stack.api, id)).options, 'the same options');
      assert.deepEqual(status.seats.map((s) => [s.seat, s.name, s.kind]), before.seats.map((s) => [s.seat, s.name, s.kind]), 'the same seats');
      // It starts by itself (the owner's page sends start) with new deals.
      const deadline = Date.now() + 10000;
      let st = status;
      while (st.phase === 'lobby' && Date.now() < deadline) {
        await page.waitForTimeout(100);
        st = await tableStatus(stack.api, next);
      }
      assert.notEqual(st.phase, 'lobby', 'the rematch started');
      assert.equal(st.seats.find((s) => s.seat === 'west').status, 'present', 'Rex plays the seat again');
      assert.ok(p.rec.sent.some((m) => m.type === 'resume'), 'the seat token of the old table worked');
      // The finished match's record is intact.
      const after = await (await fetch(`${stack.api}/api/v1/matches/${id}`)).json();
      assert.deepEqual(after, before);
      p.assertClean();
    } finally {
      await p.close();
    }
  });
}
