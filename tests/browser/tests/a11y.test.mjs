// Accessibility: axe-core finds no serious or critical violation in the
// lobby, at the table while bidding and playing, and in the table's
// dialogs; the bids are one radio group driven by the arrow keys; focus
// goes to the bid picker or the hand when the turn starts and never falls
// to the page's body. The hand is one tab stop, a toolbar whose cards the
// arrow keys move between; Enter plays the focused card, and the focus
// stays on its card while new views are drawn.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { bid, createFromLobby, fillBotsAndStart, handCards, openPage, waitTurnOrScoring } from '../lib/harness.mjs';

const focused = (page) => page.evaluate(() => {
  const a = document.activeElement;
  return {
    tag: a?.tagName,
    body: a === document.body || a == null,
    bid: a?.dataset?.bid ?? null,
    role: a?.getAttribute('role'),
    card: a?.closest?.('#hand') ? a.dataset.card : null,
  };
});

export function a11yTests(suite) {
  it('has no serious accessibility violation in the lobby, at the table and in its dialogs; bids are a radio group; focus follows the turn', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 1366, height: 768 } });
    const { page } = p;
    try {
      await page.goto('/');
      await page.waitForSelector('#play-now');
      assert.equal(await page.locator('h1').count(), 1, 'the page has one h1');
      await assertAccessible(assert, page, 'the lobby');

      await createFromLobby(page, { player: 'Ada', table: 'Accessible' });
      await assertAccessible(assert, page, 'the table before the match');
      await fillBotsAndStart(page);
      await page.waitForSelector('#bid-picker:not([hidden])', { timeout: 20000 });
      // The turn starts: focus is on the bid picker, in one radio group.
      await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'radio');
      assert.equal(await page.getAttribute('#bid-picker .bid-grid', 'role'), 'radiogroup');
      const radios = page.locator('#bid-picker [role="radio"]');
      assert.equal(await radios.count(), 14);
      assert.equal(await page.locator('#bid-picker [role="radio"][tabindex="0"]').count(), 1, 'one tab stop');
      await assertAccessible(assert, page, 'the table while bidding');

      // Arrow keys move the choice; Enter bids it.
      const start = Number((await focused(page)).bid);
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      let f = await focused(page);
      assert.equal(Number(f.bid), start + 2, 'two steps right');
      assert.equal(await page.getAttribute(`[role="radio"][data-bid="${start + 2}"]`, 'aria-checked'), 'true');
      assert.equal(await page.locator('[role="radio"][aria-checked="true"]').count(), 1);
      await page.keyboard.press('ArrowLeft');
      f = await focused(page);
      const chosen = Number(f.bid);
      assert.equal(chosen, start + 1);
      assert.equal(await page.textContent('.bid-confirm'), chosen === 0 ? 'Bid nil' : `Bid ${chosen}`);
      await page.keyboard.press('Enter');
      await page.waitForSelector('#bid-picker', { state: 'hidden' });
      assert.ok(p.rec.sent.some((m) => m.type === 'bid' && m.bid === chosen), 'the bid chosen with the keyboard was sent');
      // The picker went away: focus did not fall to the body.
      assert.equal((await focused(page)).body, false, 'focus kept after bidding');

      // The turn to play: focus is on a card of the hand.
      assert.equal(await waitTurnOrScoring(page), 'turn');
      await page.waitForFunction(() => document.activeElement?.closest?.('#hand'));
      assert.ok((await focused(page)).card, 'focus on a card');
      await assertAccessible(assert, page, 'the table while playing');
      // Play it with the keyboard: the card leaves the hand, focus stays.
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.querySelectorAll('#hand .card').length === 12, null, { timeout: 10000 });
      assert.equal((await focused(page)).body, false, 'focus kept after playing');

      // The dialogs.
      for (const [button, id] of [['#btn-rules', 'rules'], ['#btn-alerts', 'alerts'], ['#btn-sheet', 'score-sheet']]) {
        await page.click(button);
        await page.waitForSelector(`dialog#${id}[open]`);
        await assertAccessible(assert, page, `the ${id} dialog`, `dialog#${id}`);
        await page.keyboard.press('Escape');
        await page.waitForSelector(`dialog#${id}`, { state: 'detached' });
        assert.equal((await focused(page)).body, false, `focus kept after closing ${id}`);
      }
      await page.waitForSelector('#btn-last-trick:not([disabled])', { timeout: 15000 });
      await page.click('#btn-last-trick');
      await page.waitForSelector('dialog#last-trick[open]');
      await assertAccessible(assert, page, 'the last trick', 'dialog#last-trick');
      await page.keyboard.press('Escape');
      p.assertClean();
    } finally {
      await p.close();
    }
  });

  it('makes the hand one tab stop: arrow keys move between the cards, Enter plays one, the focus survives new views', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 1366, height: 768 } });
    const { page } = p;
    const activeId = () => page.evaluate(() => document.activeElement?.id || null);
    const stops = () => page.$$eval('#hand .card', (els) => els.filter((e) => e.tabIndex === 0).map((e) => e.dataset.card));
    try {
      await createFromLobby(page, { player: 'Kit', table: 'Keys' });
      await fillBotsAndStart(page);
      await bid(page, 3);
      assert.equal(await waitTurnOrScoring(page), 'turn');
      await page.waitForFunction(() => document.activeElement?.closest?.('#hand'));
      assert.equal(await page.getAttribute('#hand', 'role'), 'toolbar');
      assert.equal(await page.getAttribute('#hand', 'aria-label'), 'Your hand');
      const start = (await focused(page)).card;
      assert.deepEqual(await stops(), [start], 'one tab stop, the focused card');

      // Between the hand and the toolbar's Chat: a few presses, not a card each.
      let presses = 0;
      while ((await activeId()) !== 'btn-chat' && presses < 10) {
        await page.keyboard.press('Shift+Tab');
        presses += 1;
      }
      assert.equal(await activeId(), 'btn-chat');
      assert.ok(presses <= 3, `${presses} Shift+Tabs from the hand to Chat`);
      presses = 0;
      while (!(await focused(page)).card && presses < 10) {
        await page.keyboard.press('Tab');
        presses += 1;
      }
      assert.ok(presses <= 3, `${presses} Tabs from Chat to the hand`);
      assert.equal((await focused(page)).card, start, 'back on the card that had the focus');
      await page.keyboard.press('Tab');
      assert.equal((await focused(page)).card, null, 'one Tab leaves the hand');
      await page.focus(`#hand .card[data-card="${start}"]`);

      // The arrow keys, Home and End move the focus, and the tab stop with it.
      const order = await handCards(page);
      const at = async () => order.indexOf((await focused(page)).card);
      const keys = [['Home', 0], ['ArrowRight', 1], ['ArrowDown', 2], ['ArrowUp', 1], ['ArrowLeft', 0], ['ArrowLeft', 0], ['End', order.length - 1]];
      for (const [key, want] of keys) {
        await page.keyboard.press(key);
        assert.equal(await at(), want, `${key}: card ${want} of the hand`);
      }
      assert.deepEqual(await stops(), [order.at(-1)], 'the tab stop follows the focus');
      // Every card is reachable; the ones that cannot be played say so.
      const named = await page.$$eval('#hand .card', (els) => els.map((e) => [e.classList.contains('legal'), e.querySelector('.card-name').textContent]));
      for (const [ok, name] of named) assert.match(name, ok ? /, playable$/ : /, cannot be played now$/);

      // Enter plays the focused card: it is sent with its seq, and the trick shows it.
      await page.evaluate(() => {
        window.onTable = [];
        const box = document.querySelector('.trick-area .trick-box');
        new MutationObserver(() => {
          for (const c of box.querySelectorAll('.slot-bottom .card')) window.onTable.push(c.dataset.card);
        }).observe(box, { childList: true, subtree: true });
      });
      let checked = false;
      for (let round = 0; round < 6 && !checked; round++) {
        const legal = await page.$$eval('#hand .card.legal', (els) => els.map((e) => e.dataset.card));
        const hand = await handCards(page);
        const target = legal.at(-1);
        await page.keyboard.press('Home');
        for (let i = 0; i < hand.indexOf(target); i++) await page.keyboard.press('ArrowRight');
        assert.equal((await focused(page)).card, target, 'the arrows reach the playable card');
        const sentBefore = p.rec.sent.length;
        await page.keyboard.press('Enter');
        await page.waitForFunction((c) => window.onTable.includes(c), target, { timeout: 10000 });
        const play = p.rec.sent.slice(sentBefore).find((m) => m.type === 'play');
        assert.equal(play?.card, target, 'Enter sent the focused card');
        assert.equal(typeof play.seq, 'number', 'with its seq');
        await page.waitForSelector(`#hand .card[data-card="${target}"]`, { state: 'detached' });
        const next = (await focused(page)).card;
        assert.ok(next && next !== target, 'the focus went to a neighbour in the hand');

        // The bots play: every change frame draws the table again, and the
        // focus stays on its card until the turn comes back (then it goes
        // to a playable card if that one cannot be played).
        await page.evaluate(() => {
          window.focusMoves = [];
          const el = document.getElementById('hand');
          document.addEventListener('focusout', (e) => window.focusMoves.push({ card: e.target.dataset?.card ?? null, myTurn: el.classList.contains('my-turn') }), true);
        });
        const viewsBefore = p.rec.views.length;
        if ((await waitTurnOrScoring(page)) !== 'turn') break;
        const moves = await page.evaluate(() => window.focusMoves);
        assert.deepEqual(moves.filter((m) => !m.myTurn), [], `the focus left ${next} while the bots played`);
        const f = await focused(page);
        assert.ok(f.card, 'the focus is in the hand when the turn comes back');
        if (moves.length === 0) assert.equal(f.card, next, 'still on the same card');
        const botFrames = p.rec.views.slice(viewsBefore).filter((v) => v.view.last_action && v.view.last_action.seat !== v.view.you);
        checked = botFrames.length > 0;
      }
      assert.ok(checked, 'a bot played while the focus was on a card');
      await assertAccessible(assert, page, 'the table with the hand a toolbar');
      p.assertClean();
    } finally {
      await p.close();
    }
  });
}
