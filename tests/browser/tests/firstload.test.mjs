// The first load of the lobby, in the shape that makes it fast on a slow
// link (the times are measured by tests/browser/firstload.mjs and kept in
// docs/benchmarks.md; this test holds what they rest on, with no clock):
// the page names every module the lobby imports in a modulepreload link,
// asks for the table list with the page, and loads nothing of the table,
// the tutorial, the replay or the verifier; the files it does fetch stay
// within a budget of requests and bytes. Each other screen fetches its own
// code when it first opens, every module of it preloaded at once; a screen
// left while its code loads is not mounted, and one whose code cannot be
// fetched says so.

import assert from 'node:assert/strict';
import path from 'node:path';
import { it } from 'node:test';
import { staticGraph, watchLobby } from '../lib/firstload.mjs';
import { createTableRest, openPage } from '../lib/harness.mjs';
import { REPO_ROOT } from '../lib/server.mjs';

const WEB = path.resolve(REPO_ROOT, process.env.SPADES_TEST_WEB_DIR || 'web');
/** Served by the binary (compressed, versioned), not by the test's file proxy. */
const EMBEDDED = !process.env.SPADES_TEST_WEB_DIR;

// The budget of a cold lobby load, until the network is idle (the lobby,
// then the looks and the favicon): requests for the client's files and
// their bytes on the wire, headers included. docs/benchmarks.md has the
// figures; raise these only with a reason written there.
const MAX_FILES = 14;
const MAX_FILE_BYTES = 45_000;

/** A module's or stylesheet's file name under web/ (`js/lobby.js`), without the /v/<version>/ prefix. */
const fileOf = (url) => new URL(url).pathname.replace(/^\/v\/[^/]+\//, '/').slice(1);
const js = (files) => [...files].map((f) => `js/${f}`);

export function firstLoadTests(suite) {
  it('first load: the lobby preloads its modules and the table list, and fetches nothing of the other screens', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 390, height: 844 } });
    const { page, context } = p;
    try {
      await context.addInitScript(watchLobby, 0);
      const assets = [];
      page.on('request', (r) => {
        const u = new URL(r.url());
        if (u.origin === new URL(stack.url).origin && !u.pathname.startsWith('/api/') && u.pathname !== '/') assets.push(r);
      });
      const served = await page.goto('/');
      const html = await served.text();
      await page.waitForFunction(() => window.__lobbyInteractive);
      await page.waitForLoadState('networkidle');

      // The page preloads exactly the modules app.js imports, itself excepted.
      const lobbyGraph = staticGraph(WEB, 'app.js');
      const preloads = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => fileOf(new URL(m[1], stack.url).href));
      assert.deepEqual(preloads.sort(), js(lobbyGraph).filter((f) => f !== 'js/app.js').sort(), 'index.html preloads the lobby\'s module graph');
      assert.match(html, /<link rel="preload" href="\/api\/v1\/tables\?limit=100" as="fetch" crossorigin="anonymous">/);

      // The table list was asked for once, by the page's preload, and that
      // answer was the lobby's first list.
      const lists = await page.evaluate(() => performance.getEntriesByType('resource')
        .filter((e) => new URL(e.name).pathname === '/api/v1/tables').map((e) => ({ start: e.startTime, by: e.initiatorType })));
      const first = await page.evaluate(() => window.__lobbyInteractive);
      const before = lists.filter((l) => l.start <= first.at);
      assert.deepEqual(before.map((l) => l.by), ['link'], `one list, the preloaded one, before the lobby was interactive: ${JSON.stringify(lists)}`);

      // Fetched: the lobby's modules, then the looks' (after the lobby);
      // nothing of the table, the tutorial, the replay, the account page, the
      // verifier or the operators' page.
      const fetched = new Set(assets.map((r) => fileOf(r.url())));
      const modules = [...fetched].filter((f) => f.endsWith('.js')).sort();
      const expected = new Set([...js(lobbyGraph), ...js(staticGraph(WEB, 'looks.js'))]);
      assert.deepEqual(modules, [...expected].sort(), 'the modules of a lobby load');
      for (const other of ['js/table.js', 'js/tutorial.js', 'js/replay.js', 'js/me.js', 'js/passkey.js', 'js/verify.js', 'js/sha256.js', 'js/admin.js', 'tutorial.css', 'account.css', 'admin.css']) {
        assert.ok(!fetched.has(other), `${other} is not fetched for the lobby`);
      }

      // The budget, and the files compressed on the wire.
      let bytes = 0;
      for (const r of assets) {
        const sizes = await r.sizes();
        bytes += sizes.responseHeadersSize + sizes.responseBodySize;
        const resp = await r.response();
        if (EMBEDDED && /\.(js|css)$/.test(r.url()) && (await resp.body()).length > 1024) {
          assert.equal((await resp.allHeaders())['content-encoding'], 'gzip', `${r.url()} is compressed`);
        }
      }
      console.log(`first load: ${assets.length} files, ${bytes} bytes on the wire; ${first.requests} requests, ${first.bytes} bytes before the lobby was interactive`);
      assert.ok(assets.length <= MAX_FILES, `${assets.length} files fetched (at most ${MAX_FILES}): ${[...fetched].join(' ')}`);
      if (EMBEDDED) assert.ok(bytes <= MAX_FILE_BYTES, `${bytes} bytes of files on the wire (at most ${MAX_FILE_BYTES})`);
      // The looks come after the lobby: the button is there.
      await page.waitForSelector('#btn-looks', { state: 'attached' });
      p.assertClean();
    } finally {
      await p.close();
    }
  });

  it('first load: each other screen fetches its code when it opens, every module preloaded at once', async () => {
    const { browser, stack } = suite;
    const { table } = await createTableRest(stack.api, { name: 'Preload table', options: {} });
    const screens = [
      { hash: '#/tutorial', entry: 'tutorial.js', ready: '.tut-screen' },
      { hash: `#/replay/${crypto.randomUUID()}`, entry: 'replay.js', ready: '#replay' },
      { hash: `#/table/${table}`, entry: 'table.js', ready: '.table-screen' },
      { hash: '#/me', entry: 'me.js', ready: '#me-none' },
    ];
    for (const screen of screens) {
      const p = await openPage(browser, stack.url);
      const { page } = p;
      try {
        await page.goto('/');
        await page.waitForSelector('#btn-looks', { state: 'attached' });
        await page.waitForLoadState('networkidle');
        const modules = [];
        page.on('request', (r) => {
          if (r.url().endsWith('.js')) modules.push(fileOf(r.url()));
        });
        await page.evaluate((hash) => {
          location.hash = hash;
        }, screen.hash);
        await page.waitForSelector(screen.ready);
        const preloaded = new Set(await page.$$eval('link[rel="modulepreload"]', (ls) => ls.map((l) => l.href)));
        const covered = new Set([...preloaded].map(fileOf));
        // Every module the screen imports was named at once, before the
        // imports found it (a missing one would come a round trip later).
        for (const m of js(staticGraph(WEB, screen.entry))) assert.ok(covered.has(m), `${screen.entry}: ${m} is preloaded`);
        assert.ok(modules.includes(`js/${screen.entry}`), `${screen.entry} fetched when ${screen.hash} opened`);
        for (const m of modules) assert.ok(covered.has(m), `${m}, fetched for ${screen.hash}, was preloaded`);
        // Watching a table needs no verifier.
        assert.ok(!modules.includes('js/verify.js'), `${screen.hash}: the verifier waits until needed`);
        if (screen.entry === 'tutorial.js') {
          assert.equal(await page.$eval('.tut-screen', (e) => getComputedStyle(e).display), 'grid', 'the tutorial\'s stylesheet is in');
        }
        // A replay of no match answers 404 (a console error): the rest is clean.
        if (screen.entry === 'replay.js') assert.deepEqual(p.rec.errors, []);
        else p.assertClean();
      } finally {
        await p.close();
      }
    }
  });

  it('first load: a screen left while its code loads is not mounted; code that cannot be fetched says so', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url);
    const { page } = p;
    try {
      await page.goto('/');
      await page.waitForSelector('#btn-looks', { state: 'attached' });
      // The tutorial's code is held back until the page is on the lobby again.
      let release;
      const held = new Promise((r) => {
        release = r;
      });
      await page.route('**/js/tutorial.js', async (route) => {
        await held;
        await route.continue();
      });
      await page.evaluate(() => {
        location.hash = '#/tutorial';
      });
      await page.waitForSelector('main p[role="status"]');
      assert.equal(await page.textContent('main'), 'Loading…');
      await page.evaluate(() => {
        location.hash = '#/';
      });
      await page.waitForSelector('#play-now');
      const arrived = page.waitForResponse((r) => r.url().endsWith('/js/tutorial.js'));
      release();
      await arrived;
      await page.waitForLoadState('networkidle');
      // The tutorial's module has run (its code is in), yet the lobby stays.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
      assert.equal(await page.$('.tut-screen'), null, 'the tutorial was not mounted over the lobby');
      assert.equal(await page.evaluate(() => document.body.dataset.screen), 'lobby');
      assert.ok(await page.$('#play-now'), 'the lobby is on screen');
      await page.unroute('**/js/tutorial.js');

      // The replay's code cannot be fetched: the screen says so and offers a reload.
      await page.route('**/js/replay.js', (route) => route.abort());
      await page.evaluate((id) => {
        location.hash = `#/replay/${id}`;
      }, crypto.randomUUID());
      await page.waitForSelector('#screen-retry');
      assert.match(await page.textContent('main p[role="alert"]'), /Could not load this screen/);
      await page.unroute('**/js/replay.js');
      await Promise.all([page.waitForEvent('load'), page.click('#screen-retry')]);
      await page.waitForSelector('#replay');
    } finally {
      await p.close();
    }
  });
}
