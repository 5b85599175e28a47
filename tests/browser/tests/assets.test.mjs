// The client's files: compressed on the way, and not downloaded again when
// the browser already has them.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openPage } from '../lib/harness.mjs';

export function assetTests(suite) {
  it('serves the client gzipped, and a reload takes versioned files from the cache and revalidates the page', { skip: !!process.env.SPADES_TEST_WEB_DIR }, async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url);
    const { page } = p;
    try {
      const origin = new URL(stack.url).origin;
      const isAsset = (u) => u.startsWith(`${origin}/`) && !u.includes('/api/') && !u.includes('/ws');
      const record = () => {
        const seen = [];
        page.on('response', (r) => {
          if (isAsset(r.url())) seen.push(r);
        });
        return seen;
      };
      const first = record();
      await page.goto('/');
      await page.waitForLoadState('networkidle');
      assert.ok(first.length >= 3, `the page loads its files (${first.length})`);
      let sent = 0;
      let raw = 0;
      for (const r of first) {
        assert.equal(r.status(), 200, r.url());
        const h = await r.allHeaders();
        assert.ok(h.etag, `${r.url()} has an ETag`);
        const sizes = await r.request().sizes();
        sent += sizes.responseBodySize;
        raw += (await r.body()).length;
        if (/\.(js|css|html)$|\/$/.test(r.url()) && (await r.body()).length > 1024) {
          assert.equal(h['content-encoding'], 'gzip', `${r.url()} is compressed`);
        }
      }
      assert.ok(sent < raw * 0.6, `compressed on the wire: ${sent} of ${raw} bytes`);
      console.log(`assets: ${first.length} files, ${raw} bytes, ${sent} on the wire`);

      // The files under /v/<version>/ are kept a year as immutable: a reload
      // takes them from the browser's cache; the page itself (no-cache) is
      // revalidated and answered 304. No body crosses.
      for (const r of first) {
        if (new URL(r.url()).pathname.startsWith('/v/')) {
          const cc = (await r.allHeaders())['cache-control'] || '';
          assert.match(cc, /immutable/, `${r.url()}: ${cc}`);
          assert.match(cc, /max-age=31536000/, `${r.url()}: ${cc}`);
        }
      }
      page.removeAllListeners('response');
      const again = record();
      await page.reload();
      await page.waitForLoadState('networkidle');
      assert.ok(again.length >= 1, 'the reload asks for the page');
      let resent = 0;
      let revalidated = 0;
      for (const r of again) {
        const sizes = await r.request().sizes();
        const versioned = new URL(r.url()).pathname.startsWith('/v/');
        if (r.status() === 304 || !versioned) revalidated += 1;
        // A revalidation or a cache hit: nothing on the wire.
        assert.ok(r.status() === 304 || sizes.responseBodySize <= 0, `${r.url()}: ${r.status()}, ${sizes.responseBodySize} bytes`);
        resent += Math.max(0, sizes.responseBodySize);
      }
      assert.ok(revalidated >= 1, 'the page is revalidated');
      assert.equal(resent, 0, 'no body crosses on a reload');
      console.log(`assets on reload: ${revalidated} revalidated, ${again.length - revalidated} from the cache, ${resent} body bytes`);
      p.assertClean();
    } finally {
      await p.close();
    }
  });
}
