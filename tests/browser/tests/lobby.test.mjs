// The lobby's quick start: one click from the name to a match against bots;
// its keyboard use: the list of tables is one Tab stop, however long, that
// the arrow keys move through; which tables it shows first and which it
// folds away (nobody at them, bots alone); and taking a bot's seat.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { createTableRest, openPage, shot, startStack, tableIdOf, tableStatus } from '../lib/harness.mjs';

/** Tabs from the page's first focusable element (the skip link) to `selector`. */
async function tabsFromTop(page, selector) {
  await page.focus('.skip-link');
  for (let n = 1; n <= 80; n++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((sel) => document.activeElement?.matches(sel), selector)) return n;
  }
  throw new Error(`${selector} not reached in 80 Tabs`);
}

/** The focused button of the table list: its table and which button. */
const focusedInList = (page) => page.evaluate(() => {
  const a = document.activeElement;
  const row = a?.closest?.('#table-list .table-item');
  return row ? { table: row.dataset.table, nav: a.dataset.nav, row: [...row.parentElement.children].indexOf(row) } : null;
});

/**
 * Opens a WebSocket in `page` (kept as `window.__socks[key]`) and sends
 * `steps` one after the other, each once the one before was answered
 * (`joined`, `watching` or `ack` with its `req`). Rejects on an `error`.
 */
function socketSteps(page, key, steps) {
  return page.evaluate(async ({ key, steps }) => {
    const ws = new WebSocket(`${location.origin.replace(/^http/, 'ws')}/ws`);
    window.__socks = { ...(window.__socks || {}), [key]: ws };
    await new Promise((resolve, reject) => {
      const todo = steps.map((m, i) => ({ ...m, req: i + 1 }));
      const next = () => (todo.length ? ws.send(JSON.stringify(todo.shift())) : resolve());
      ws.onopen = next;
      ws.onerror = () => reject(new Error('the socket failed'));
      ws.onmessage = (e) => {
        const m = JSON.parse(e.data);
        if (m.type === 'error') reject(new Error(`${m.code}: ${m.message}`));
        else if (['joined', 'watching', 'ack'].includes(m.type) && m.req) next();
      };
    });
  }, { key, steps });
}

/** Closes the socket `key` that `socketSteps` opened in `page`, as a browser that is closed. */
const closeSocket = (page, key) => page.evaluate((key) => window.__socks[key].close(), key);

/** Polls a table's REST status until `ok(status)`, for up to `ms`. */
async function statusUntil(api, id, ok, what, ms = 15000) {
  const until = Date.now() + ms;
  let st = await tableStatus(api, id);
  while (!ok(st) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    st = await tableStatus(api, id);
  }
  assert.ok(ok(st), `${what}: ${JSON.stringify(st.seats)} (${st.phase})`);
  return st;
}

/** The row of table `id` in the lobby: which list it is in and where, its badge, its text and its buttons. */
const rowOf = (page, id) => page.evaluate((id) => {
  const row = document.querySelector(`.table-item[data-table="${id}"]`);
  return row && {
    list: row.parentElement.id,
    index: [...row.parentElement.children].indexOf(row),
    badge: row.querySelector('.phase-badge').textContent,
    text: row.textContent,
    buttons: [...row.querySelectorAll('.ti-actions button')].map((b) => b.firstChild.textContent),
  };
}, id);

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

  it('lobby: the list of tables is one Tab stop, with 2 tables or 8; arrow keys move through it and Enter sits down', async () => {
    const { browser } = suite;
    // A server of its own: the list holds exactly the tables made here.
    const stack = await startStack();
    const p = await openPage(browser, stack.url, { viewport: { width: 1366, height: 768 } });
    const { page } = p;
    try {
      for (let i = 1; i <= 2; i++) await createTableRest(stack.api, { name: `Keys ${i}`, options: {} });
      await page.goto('/');
      await page.waitForFunction(() => document.querySelectorAll('#table-list .table-item').length === 2);
      const withTwo = await tabsFromTop(page, '#create-details > summary');

      for (let i = 3; i <= 8; i++) await createTableRest(stack.api, { name: `Keys ${i}`, options: {} });
      await page.reload();
      await page.waitForFunction(() => document.querySelectorAll('#table-list .table-item').length === 8);
      const withEight = await tabsFromTop(page, '#create-details > summary');
      console.log(`lobby: ${withTwo} Tabs to the new-table form with 2 tables, ${withEight} with 8`);
      assert.ok(withTwo <= 12, `the new-table form within 12 Tabs (${withTwo})`);
      assert.equal(withEight, withTwo, 'more tables, no more Tabs');
      assert.equal(await page.locator('#table-list button[tabindex="0"]').count(), 1, 'one Tab stop in the list');
      assert.ok(await page.locator('#table-list button[tabindex="-1"]').count() >= 8 * 6 - 1, 'every other button of the list is out of the Tab order');
      await assertAccessible(assert, page, 'the lobby with 8 tables');

      // Into the list: the first table's Sit down.
      await page.fill('#player-name', 'Kim');
      await page.focus('#player-name');
      for (let i = 0; i < 6 && !(await focusedInList(page)); i++) await page.keyboard.press('Tab');
      assert.deepEqual(await focusedInList(page).then((f) => f && [f.row, f.nav]), [0, 'join'], 'Tab enters the list at the first table');
      const rows = await page.$$eval('#table-list .table-item', (els) => els.map((e) => e.dataset.table));
      const at = async (row, nav, what) => {
        const f = await focusedInList(page);
        assert.deepEqual(f && [f.row, f.nav], [row, nav], what);
        assert.equal(await page.evaluate(() => document.activeElement.tabIndex), 0, `${what}: the focused button holds the Tab stop`);
      };
      await page.keyboard.press('ArrowDown');
      await at(1, 'join', 'ArrowDown: the next table');
      await page.keyboard.press('End');
      await at(7, 'join', 'End: the last table');
      await page.keyboard.press('ArrowDown');
      await at(7, 'join', 'ArrowDown on the last table stays');
      await page.keyboard.press('Home');
      await at(0, 'join', 'Home: the first table');
      await page.keyboard.press('ArrowRight');
      await at(0, 'watch', 'ArrowRight: Watch');
      await page.keyboard.press('ArrowDown');
      await at(1, 'watch', 'ArrowDown from Watch: the next table\'s Watch');
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('ArrowLeft');
      await at(1, 'sit-west', 'ArrowLeft twice: Sit here at West');
      await page.keyboard.press('ArrowUp');
      await at(0, 'sit-west', 'ArrowUp: the table above, same seat');
      await page.keyboard.press('ArrowRight');
      await at(0, 'join', 'ArrowRight: Sit down');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      await at(2, 'join', 'two tables down');
      // Tab leaves the list at once; Shift+Tab comes back to the same button.
      await page.keyboard.press('Tab');
      assert.ok(await page.evaluate(() => document.activeElement.matches('#create-details > summary')), 'Tab leaves the list for the new-table form');
      await page.keyboard.press('Shift+Tab');
      await at(2, 'join', 'Shift+Tab comes back where it was');
      await shot(page, 'lobby-keys.png');

      // Enter sits down at that table.
      await page.keyboard.press('Enter');
      await page.waitForSelector('.table-screen .seat.me');
      assert.equal(tableIdOf(page), rows[2], 'seated at the table chosen with the keys');
      const st = await tableStatus(stack.api, rows[2]);
      assert.ok(st.seats.some((x) => x.name === 'Kim'), 'Kim sits there');
      p.assertClean();
    } finally {
      await p.close();
      await stack.stop();
    }
  });
  it('lobby: tables with nobody at them fold away, marked as such; bots alone are never a match in progress', async () => {
    const { browser } = suite;
    // A server of its own, whose seats are held 1 s after a connection
    // drops: a player who closed the browser is soon past the grace.
    const stack = await startStack({ SPADES_TABLES__GRACE_SECS: '1' });
    const players = await openPage(browser, stack.url);
    const p = await openPage(browser, stack.url, { viewport: { width: 1366, height: 900 } });
    const { page } = p;
    try {
      await players.page.goto('/');
      const make = async (name) => {
        const t = await createTableRest(stack.api, { name, options: {} });
        return { id: t.table, owner: t.owner_token };
      };
      // A match with its player at it.
      const live = await make('Live match');
      await socketSteps(players.page, 'live', [
        { type: 'join', protocol: 2, table: live.id, name: 'Lia' },
        { type: 'add_bots', owner_token: live.owner },
        { type: 'start', owner_token: live.owner },
      ]);
      // A match whose player closed the browser: away, then past the grace.
      const ghost = await make('Ghost match');
      await socketSteps(players.page, 'ghost', [
        { type: 'join', protocol: 2, table: ghost.id, name: 'Gus' },
        { type: 'add_bots', owner_token: ghost.owner },
        { type: 'start', owner_token: ghost.owner },
      ]);
      await closeSocket(players.page, 'ghost');
      // Four bots, started by an owner who watched and went.
      const robots = await make('Robots');
      await socketSteps(players.page, 'robots', [
        { type: 'watch', protocol: 2, table: robots.id },
        { type: 'add_bots', owner_token: robots.owner },
        { type: 'start', owner_token: robots.owner },
      ]);
      await closeSocket(players.page, 'robots');
      // A new table nobody has sat at yet.
      const fresh = await make('Fresh table');
      await statusUntil(stack.api, ghost.id, (st) => st.seats.some((x) => x.name === 'Gus' && x.status === 'bot'), 'Gus is past the grace');
      await statusUntil(stack.api, live.id, (st) => st.phase !== 'lobby', 'the live match started');
      await statusUntil(stack.api, robots.id, (st) => st.phase !== 'lobby', 'the bots\' match started');

      await page.goto('/');
      await page.waitForSelector(`#idle-table-list .table-item[data-table="${robots.id}"]`, { state: 'attached' });
      await page.waitForSelector(`#idle-table-list .table-item[data-table="${ghost.id}"]`, { state: 'attached' });
      // The main list: the match with a person at it, and the new table.
      const liveRow = await rowOf(page, live.id);
      assert.equal(liveRow?.list, 'table-list', 'the live match is in the main list');
      assert.match(liveRow.badge, /Bidding|Playing/);
      const freshRow = await rowOf(page, fresh.id);
      assert.equal(freshRow?.list, 'table-list', 'a new table with seats to take is in the main list');
      assert.ok(liveRow.index < freshRow.index, 'people first: the match with a person at it comes before the empty table');
      // Folded: the match nobody is at, marked so, and the bots' match.
      const ghostRow = await rowOf(page, ghost.id);
      assert.equal(ghostRow.list, 'idle-table-list', 'the abandoned match is folded away');
      assert.equal(ghostRow.badge, 'Nobody at the table');
      assert.match(ghostRow.text, /Gus \(away\)/, 'its player is shown away');
      const robotsRow = await rowOf(page, robots.id);
      assert.equal(robotsRow.list, 'idle-table-list', 'the bots\' match is folded away');
      assert.equal(robotsRow.badge, 'Bots only');
      for (const row of [ghostRow, robotsRow]) assert.doesNotMatch(row.badge, /Playing|Bidding/, 'not shown as a match in progress');
      assert.equal(await page.$eval('#idle-tables', (d) => d.open), false, 'folded by default');
      assert.equal((await page.textContent('#idle-tables > summary')).trim(), 'Tables with nobody at them (2)');
      assert.equal(await page.isVisible(`.table-item[data-table="${ghost.id}"]`), false, 'the folded tables are out of sight');

      // The keyboard opens the fold; its list is one Tab stop of its own.
      await page.focus('#idle-tables > summary');
      await page.keyboard.press('Enter');
      assert.equal(await page.$eval('#idle-tables', (d) => d.open), true, 'Enter opens the fold');
      await page.keyboard.press('Tab');
      assert.ok(await page.evaluate(() => document.activeElement.closest('#idle-table-list') && document.activeElement.tabIndex === 0),
        'Tab goes into the folded list');
      assert.equal(await page.locator('#idle-table-list button[tabindex="0"]').count(), 1, 'one Tab stop in the folded list');
      await page.keyboard.press('Tab');
      assert.ok(await page.evaluate(() => !document.activeElement.closest('#idle-table-list')), 'the next Tab leaves it');
      await assertAccessible(assert, page, 'the lobby with tables folded away, opened');
      await shot(page, 'lobby-nobody-at-them.png');

      // Lia leaves her browser too: her match folds away at the next refresh.
      await closeSocket(players.page, 'live');
      await page.waitForSelector(`#idle-table-list .table-item[data-table="${live.id}"]`, { state: 'attached', timeout: 15000 });
      assert.equal((await rowOf(page, live.id)).badge, 'Nobody at the table');
      p.assertClean();
    } finally {
      await p.close();
      await players.close();
      await stack.stop();
    }
  });

  it('lobby: a table full of bots offers "Take a bot\'s seat", which seats the player; its watcher is told the same', async () => {
    const { browser, stack } = suite;
    const owner = await openPage(browser, stack.url);
    const p = await openPage(browser, stack.url, { viewport: { width: 1366, height: 900 } });
    const { page } = p;
    try {
      await owner.page.goto('/');
      const t = await createTableRest(stack.api, { name: 'Olga and three bots', options: {} });
      await socketSteps(owner.page, 'olga', [
        { type: 'join', protocol: 2, table: t.table, name: 'Olga' },
        { type: 'add_bots', owner_token: t.owner_token },
      ]);
      const before = await tableStatus(stack.api, t.table);
      assert.equal(before.open_seats, 0);
      assert.equal(before.seats.filter((x) => x.kind === 'bot').length, 3);

      await page.goto('/');
      await page.fill('#player-name', 'Pat');
      const row = page.locator(`#table-list .table-item[data-table="${t.table}"]`);
      await row.waitFor();
      const full = await rowOf(page, t.table);
      assert.deepEqual(full.buttons, ['Take a bot\'s seat', 'Watch']);
      assert.match(full.text, /3 bots' seats to take/);
      assert.doesNotMatch(full.text, /0 open seats/);
      await assertAccessible(assert, page, 'the lobby with a table full of bots');

      // Watching it: one true sentence about the seats.
      await row.locator('.btn-watch').click();
      await page.waitForSelector('.table-screen[data-role="spectator"] .seat .seat-name');
      await page.waitForFunction(() => document.querySelector('.turn-text')?.textContent.startsWith('Watching'));
      const line = await page.textContent('.turn-text');
      assert.doesNotMatch(line, /empty seat/, `the turn line (${line})`);
      assert.match(line, /bot/, `the turn line (${line})`);
      const title = await page.textContent('.center-title');
      assert.doesNotMatch(title, /taken/, `the table's centre says the same (${title})`);

      // From the lobby, the button sits Pat in place of a bot.
      await page.goto('/');
      await page.fill('#player-name', 'Pat');
      await page.locator(`#table-list .table-item[data-table="${t.table}"] .btn-take-bot`).click();
      await page.waitForSelector('.table-screen .seat.me');
      assert.equal(tableIdOf(page), t.table);
      const after = await tableStatus(stack.api, t.table);
      const pat = after.seats.find((x) => x.name === 'Pat');
      assert.equal(pat?.kind, 'human', 'Pat sits at the table');
      assert.equal(before.seats.find((x) => x.seat === pat.seat).kind, 'bot', 'in a bot\'s seat');
      assert.equal(after.seats.filter((x) => x.kind === 'bot').length, 2, 'that bot went');
      assert.equal(await page.getAttribute('.seat.me', 'data-seat'), pat.seat);
      p.assertClean();
    } finally {
      await p.close();
      await owner.close();
    }
  });
}
