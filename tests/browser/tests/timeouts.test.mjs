// A player who lets the clock run out is told what happened: a warning as
// the clock runs low, what the table played, and why the autopilot came on.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createFromLobby, fillBotsAndStart, openPage, shot } from '../lib/harness.mjs';

export function timeoutTests(suite) {
  it('warns as the clock runs low, says what the table played on a timeout, and why the autopilot came on', async () => {
    const { browser, fastStack: stack } = suite;
    const p = await openPage(browser, stack.url);
    const { page } = p;
    try {
      await createFromLobby(page, { player: 'Tess', table: 'Timeouts' });
      await fillBotsAndStart(page);
      // Every notice shown is recorded as it is shown: the next timeout's
      // notice replaces the last within a turn of the fast clock, sooner
      // than a busy page's polling may look.
      await page.evaluate(() => {
        window.notices = [];
        const el = document.getElementById('refusal');
        new MutationObserver(() => {
          if (!el.hidden && el.classList.contains('info')) window.notices.push(el.textContent);
        }).observe(el, { attributes: true, childList: true, characterData: true, subtree: true });
      });
      // The player never moves. As the clock runs low, a warning.
      await page.waitForFunction(() => /^Hurry: \d+ s left before the table plays for you\.$/.test(document.querySelector('#turn-warn')?.textContent || ''), null, { timeout: 20000 });
      // The first timeout: what the table did, and how many are left.
      await page.waitForFunction(() => window.notices.some((t) => /Time ran out: the table (bid (nil|\d+)|played .+) for you \(1 of 3 before autopilot\)\./.test(t)), null, { timeout: 20000 });
      await shot(page, 'timeout-notice.png');
      // The third: the autopilot, and why.
      await page.waitForFunction(() => window.notices.some((t) => /Autopilot is on: your time ran out 3 times in a row\. Press Take over to play again\./.test(t)), null, { timeout: 30000 });
      assert.ok(await page.isVisible('#btn-take-over'));
      p.assertClean();
    } finally {
      await p.close();
    }
  });
}
