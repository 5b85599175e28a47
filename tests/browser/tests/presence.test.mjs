// The turn clock, autopilot and Take over, Leave, and closing the page on
// purpose. Runs against a server whose turn clocks last under a second.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createFromLobby, fillBotsAndStart, openPage, shot, tableStatus } from '../lib/harness.mjs';

// Turn clocks under a second, and bots that barely wait, so that a whole
// match plays out in seconds.
export const PRESENCE_ENV = { SPADES_TABLES__TEST_TEMPO_MS: '900', SPADES_TABLES__BOT_DELAY_MS: '15' };

export function presenceTests(suite) {
  it('runs the clock round the avatar, shows autopilot with Take over, and warns before leaving', async () => {
    const { browser, fastStack: stack } = suite;
    const p = await openPage(browser, stack.url);
    const { page } = p;
    try {
      const id = await createFromLobby(page, { player: 'Dee', table: 'Clocks' });
      const seat = await page.getAttribute('.seat.me', 'data-seat');
      await fillBotsAndStart(page);

      // The ring round the player's avatar empties as the deadline nears.
      await page.waitForSelector('.seat.me.timed');
      const offset = () => page.$eval('.seat.me .ring-progress', (c) => Number(c.getAttribute('stroke-dashoffset')));
      const a = await offset();
      await page.waitForTimeout(250);
      const b = await offset();
      assert.ok(b > a, `the ring moves (${a} → ${b})`);
      assert.match(await page.textContent('.my-clock'), /^\d+ s$/);

      // Three turns lost on time: autopilot, and a Take over button.
      await page.waitForSelector('#btn-take-over:visible', { timeout: 20000 });
      assert.match(await page.textContent('.seat.me .seat-status'), /autopilot/);
      await page.click('#btn-take-over');
      await page.waitForSelector('#btn-take-over', { state: 'hidden' });
      assert.ok(p.rec.sent.some((m) => m.type === 'take_over'));
      const statusOf = (v) => v.view.seats.find((s) => s.seat === seat).status;
      const autopilotAt = p.rec.views.findIndex((v) => statusOf(v) === 'autopilot');
      assert.ok(autopilotAt >= 0 && p.rec.views.slice(autopilotAt).some((v) => statusOf(v) === 'present'),
        'the seat is played by its player again');

      // Leave: the warning says the partner keeps a bot.
      await page.click('#btn-leave');
      const dlg = page.locator('dialog#leave-confirm');
      await dlg.waitFor();
      const warning = await dlg.textContent();
      assert.match(warning, /partner/);
      assert.match(warning, /bot/);
      await dlg.locator('[data-action="true"]').click();
      await page.waitForSelector('.seat.me.status-left');
      assert.equal(await page.isVisible('#btn-leave'), false);
      assert.equal(await page.isVisible('#hand'), false);
      // Dee was the only person at the table and made no move of her own:
      // the match ends at once and is not kept as a match.
      const res = await fetch(`${stack.api}/api/v1/tables/${id}`);
      if (res.status === 200) {
        const status = await res.json();
        assert.equal(status.seats.find((s) => s.seat === seat).status, 'left');
        assert.notEqual(status.phase, 'playing', 'a match with nobody at it does not play on');
      } else {
        assert.equal(res.status, 404);
      }
      p.assertClean();
    } finally {
      await p.close();
    }
  });

  it('shows each hand\'s scoring and, at the end, the winner and the score sheet', async () => {
    const { browser, fastStack: stack } = suite;
    const p = await openPage(browser, stack.url);
    const { page } = p;
    try {
      const id = await createFromLobby(page, { player: 'Gus', table: 'Short match', options: { match_end: 'hands:5' } });
      await fillBotsAndStart(page);
      // The player sits and never moves: after three timeouts the autopilot
      // plays the seat and the match runs by itself (had the player left,
      // a match with no person at it would end at once, abandoned).
      await page.waitForSelector('#btn-take-over', { state: 'visible', timeout: 30000 });
      const seenHands = new Set();
      for (;;) {
        const el = await page.waitForSelector('dialog#hand-scoring[open], dialog#match-over[open]', { timeout: 30000 });
        if (await el.evaluate((d) => d.id === 'match-over')) break;
        const n = Number(await el.$eval('.scoring', (t) => t.dataset.hand));
        seenHands.add(n);
        await el.$eval('[data-action="ok"]', (b) => b.click());
        await page.waitForFunction((num) => !document.querySelector(`dialog#hand-scoring[open] .scoring[data-hand="${num}"]`), n);
      }
      const status = await tableStatus(stack.api, id);
      assert.ok(status.result, 'the match is over');
      assert.ok(status.hands.length >= 5);
      assert.ok(seenHands.has(status.hands.length), 'the last hand\'s scoring was shown');
      const dlg = page.locator('dialog#match-over');
      await dlg.locator('.sheet tbody tr').first().waitFor();
      // The winner, as the server recorded it, and every hand on the sheet.
      const [ns, ew] = status.result.scores;
      const fmt = (n) => (n < 0 ? `−${-n}` : String(n));
      const headline = await dlg.locator('.result-headline').textContent();
      if (status.result.outcome.result === 'win') {
        const team = status.result.outcome.team === 'north_south' ? 'North–South' : 'East–West';
        const [hi, lo] = status.result.outcome.team === 'north_south' ? [ns, ew] : [ew, ns];
        assert.ok(headline.includes(`${team} win ${fmt(hi)} to ${fmt(lo)}`), headline);
      } else {
        assert.match(headline, /draw/);
      }
      assert.equal(await dlg.locator('.sheet tbody tr').count(), status.hands.length);
      const lastRow = await dlg.locator('.sheet tbody tr').last().locator('td.total').allTextContents();
      assert.deepEqual(lastRow.map((t) => t.replace(/\s*\(\d+\)$/, '')), [fmt(ns), fmt(ew)]);
      await shot(page, 'match-over.png');
      p.assertClean();
    } finally {
      await p.close();
    }
  });

  it('tells the server when the page is closed on purpose (short grace)', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url);
    const { page } = p;
    try {
      const id = await createFromLobby(page, { player: 'Eve', table: 'Closing' });
      const seat = await page.getAttribute('.seat.me', 'data-seat');
      await fillBotsAndStart(page);
      await page.waitForSelector('#bid-picker:not([hidden])', { timeout: 20000 });
      // Navigating away fires pagehide: the client sends {"type":"closing"}.
      await page.goto('about:blank');
      let info;
      for (let i = 0; i < 50; i++) {
        info = (await tableStatus(stack.api, id)).seats.find((s) => s.seat === seat);
        if (info.status === 'away') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(info.status, 'away');
      const held = info.away_until - Date.now();
      assert.ok(held > 0 && held <= 10_500, `held for the closing grace (10 s), not the full grace: ${held} ms`);
      p.assertClean();
    } finally {
      await p.close();
    }
  });
}
