// The browser's own defences, from the server's Content-Security-Policy: a
// script put into the page does not run, and only the server itself and the
// sites of server.allowed_origins can frame the table.

import assert from 'node:assert/strict';
import http from 'node:http';
import { it } from 'node:test';
import { createFromLobby, openPage, startStack } from '../lib/harness.mjs';

/**
 * A site on a port of its own (so an origin of its own): `/?src=<url>`
 * frames `url`, and marks the frame once it has loaded whatever it could.
 */
function framingSite() {
  const server = http.createServer((req, res) => {
    const src = new URL(req.url, 'http://x').searchParams.get('src') || 'about:blank';
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><title>another site</title>
      <iframe id="f" width="800" height="600" onload="this.dataset.loaded = '1'" src="${encodeURI(src)}"></iframe>`);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({ url: `http://127.0.0.1:${server.address().port}`, stop: () => new Promise((r) => {
        server.close(r);
        server.closeAllConnections();
      }) });
    });
  });
}

/** Whether `site` can show the table at `target` in a frame. */
async function framesTable(browser, site, target) {
  const ctx = await browser.newContext();
  try {
    const page = await ctx.newPage();
    await page.goto(`${site.url}/?src=${encodeURIComponent(`${target}/`)}`);
    await page.waitForFunction(() => document.getElementById('f')?.dataset.loaded === '1', null, { timeout: 10000 });
    const child = page.frames().find((f) => f.parentFrame() === page.mainFrame());
    // A page that loaded gets time to draw its lobby.
    return await child.waitForSelector('#play-now', { timeout: 5000 }).then(() => true, () => false);
  } finally {
    await ctx.close();
  }
}

export function defenceTests(suite) {
  it('runs no script put into the page, and is framed only by the sites the operator allows', { skip: !!process.env.SPADES_TEST_WEB_DIR }, async () => {
    const { browser } = suite;
    // Two other sites: one the operator allows to embed the table, one not.
    const [friend, foreign] = await Promise.all([framingSite(), framingSite()]);
    const stack = await startStack({ SPADES_SERVER__ALLOWED_ORIGINS: friend.url });
    const p = await openPage(browser, stack.url);
    try {
      // The table's own page works under the policy (no violation while
      // the lobby loads and a table is made), and a script put into it by
      // whatever means does not run.
      const { page } = p;
      await page.goto('/');
      await createFromLobby(page, { player: 'Dora', table: 'Defended' });
      const blocked = await page.evaluate(() => new Promise((resolve) => {
        const seen = [];
        document.addEventListener('securitypolicyviolation', (e) => {
          seen.push(e.violatedDirective);
          if (seen.length === 2) resolve(seen);
        });
        const s = document.createElement('script');
        s.textContent = 'window.injected = 1';
        document.body.append(s);
        const box = document.createElement('div');
        box.innerHTML = '<img src="/no-such-image.png" onerror="window.injectedHandler = 1">';
        document.body.append(box);
        setTimeout(() => resolve(seen), 3000);
      }));
      assert.deepEqual(blocked.map((d) => d.split('-').slice(0, 2).join('-')), ['script-src', 'script-src'], `violations: ${blocked}`);
      assert.equal(await page.evaluate(() => window.injected), undefined, 'an injected script ran');
      assert.equal(await page.evaluate(() => window.injectedHandler), undefined, 'an injected handler ran');
      // The two refusals and the missing image's 404 are the console's only errors.
      p.rec.console = p.rec.console.filter((t) => !/Content Security Policy|status of 404/.test(t));
      p.assertClean();

      // A site the operator did not list cannot frame the table; one it
      // listed can (the same page, the same check: the check sees a frame
      // that works).
      assert.equal(await framesTable(browser, foreign, stack.url), false, 'a foreign site framed the table');
      assert.equal(await framesTable(browser, friend, stack.url), true, 'the allowed site could not frame the table');
    } finally {
      await p.close();
      await Promise.all([friend.stop(), foreign.stop(), stack.stop()]);
    }
  });
}
