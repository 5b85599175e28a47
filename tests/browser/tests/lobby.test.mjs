// The lobby's quick start: one click from the name to a match against bots.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openPage, shot, tableIdOf, tableStatus } from '../lib/harness.mjs';

export function lobbyTests(suite) {
  it('plays now against bots in one click, above the fold at 1366×768, with the full form folded', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 1366, height: 768 } });
    const { page } = p;
    const posts = [];
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push(r.url());
    });
    try {
      await page.goto('/');
      await page.waitForSelector('#play-now');
      const box = await page.locator('#play-now').boundingBox();
      assert.ok(box && box.y + box.height <= 768, `Play now is above the fold (${JSON.stringify(box)})`);
      // The options form is folded away until asked for.
      assert.equal(await page.$eval('#create-details', (d) => d.open), false);
      assert.equal(await page.isVisible('#create-table'), false);
      await shot(page, 'lobby-play-now.png');

      // Without a name: asked for one, nothing created.
      await page.fill('#player-name', '');
      await page.click('#play-now');
      await page.waitForSelector('#player-name[aria-invalid="true"]');
      assert.deepEqual(posts, [], 'no table made');

      await page.fill('#player-name', 'Quinn');
      await page.click('#play-now');
      await page.waitForSelector('.table-screen .seat.me');
      const id = tableIdOf(page);
      // The three bots sit down and the match starts by itself.
      const deadline = Date.now() + 15000;
      let st = await tableStatus(stack.api, id);
      while (st.phase === 'lobby' && Date.now() < deadline) {
        await page.waitForTimeout(100);
        st = await tableStatus(stack.api, id);
      }
      assert.notEqual(st.phase, 'lobby', 'the match started');
      const kinds = st.seats.map((s) => s.kind);
      assert.equal(kinds.filter((k) => k === 'bot').length, 3, `three bots (${kinds})`);
      assert.equal(kinds.filter((k) => k === 'human').length, 1);
      assert.deepEqual(st.options.rules.match_end, { target: 500 }, 'the default options');
      const sent = p.rec.sent.map((m) => m.type);
      assert.deepEqual(sent.filter((t) => ['join', 'add_bots', 'start'].includes(t)), ['join', 'add_bots', 'start']);
      p.assertClean();
    } finally {
      await p.close();
    }
  });
}
