// Accessibility: axe-core finds no serious or critical violation in the
// lobby, at the table while bidding and playing, and in the table's
// dialogs; the bids are one radio group driven by the arrow keys; focus
// goes to the bid picker or the hand when the turn starts and never falls
// to the page's body.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { createFromLobby, fillBotsAndStart, openPage, waitTurnOrScoring } from '../lib/harness.mjs';

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
}
