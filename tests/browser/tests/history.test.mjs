// History on a phone: every hand's scoring can be reopened from the score
// sheet, the sheet and the match-over table fit the screen and show every
// column their caption speaks of, the deals' verification is accessible
// there, and a finished match replays trick by trick with all four hands,
// in one screen without scrolling, from the match-over dialog and from the
// lobby's recent matches.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { createFromLobby, fillBotsAndStart, openPage, shot } from '../lib/harness.mjs';

const PHONE = { width: 390, height: 844 };

/** Every element matching `selector` ends inside the viewport's right edge. */
async function assertFitsWidth(page, selector, what) {
  const rights = await page.$$eval(selector, (els) => els.map((e) => e.getBoundingClientRect().right));
  assert.ok(rights.length > 0, `${what}: nothing matches ${selector}`);
  for (const r of rights) assert.ok(r <= PHONE.width + 0.5, `${what} runs off the right edge (${r} > ${PHONE.width})`);
}

/**
 * The score sheet in `dialog` shows every column its caption names (and the
 * bags, when it speaks of them) wholly inside the sheet and the phone's
 * width; neither the sheet nor the page scrolls sideways.
 */
async function assertSheetAsCaptioned(page, dialog, what) {
  const got = await page.$eval(`${dialog} .sheet-wrap`, (wrap) => {
    const w = wrap.getBoundingClientRect();
    const box = (el) => {
      const r = el.getBoundingClientRect();
      const cs = getComputedStyle(el);
      return cs.display === 'none' || cs.visibility === 'hidden' || r.width === 0 ? null : { left: r.left, right: r.right };
    };
    return {
      caption: wrap.querySelector('caption').textContent.toLowerCase(),
      heads: [...wrap.querySelectorAll('thead tr:last-child th')].map((th) => ({ name: th.textContent.trim(), box: box(th) })),
      bags: [...wrap.querySelectorAll('tbody .bag-count')].map(box),
      wrap: { left: w.left, right: w.right, scroll: wrap.scrollWidth, client: wrap.clientWidth },
      page: { scroll: document.documentElement.scrollWidth, inner: innerWidth },
    };
  });
  const inside = (b) => b && b.left >= Math.max(0, got.wrap.left) - 0.5 && b.right <= Math.min(PHONE.width, got.wrap.right) + 0.5;
  const named = got.heads.filter((hd) => new RegExp(`\\b${hd.name.toLowerCase()}\\b`).test(got.caption));
  assert.ok(named.some((hd) => hd.name === 'Bids'), `${what}: the caption names the bids: ${got.caption}`);
  for (const hd of named) assert.ok(inside(hd.box), `${what}: the ${hd.name} column the caption names is not in sight (${JSON.stringify(hd.box)})`);
  if (/\bbags\b/.test(got.caption)) {
    assert.ok(got.bags.length > 0 && got.bags.every(inside), `${what}: the caption speaks of bags the sheet does not show: ${JSON.stringify(got.bags)}`);
  }
  assert.ok(got.wrap.scroll <= got.wrap.client, `${what}: the sheet scrolls sideways (${got.wrap.scroll} > ${got.wrap.client})`);
  assert.ok(got.page.scroll <= got.page.inner, `${what}: the page scrolls sideways`);
}

/** The replay in one screen: the controls and the whole table in sight, no page scroll. */
async function assertReplayFits(page, what) {
  const got = await page.evaluate(() => {
    const bottom = (sel) => document.querySelector(sel).getBoundingClientRect().bottom;
    return {
      scroll: document.documentElement.scrollHeight,
      inner: innerHeight,
      scrollWidth: document.documentElement.scrollWidth,
      felt: bottom('#replay .felt'),
      next: bottom('#replay-next'),
      where: bottom('#replay-where'),
    };
  });
  assert.ok(got.scroll <= got.inner + 2, `${what}: the page scrolls (${got.scroll} > ${got.inner})`);
  assert.ok(got.scrollWidth <= PHONE.width, `${what}: the page scrolls sideways`);
  for (const k of ['felt', 'next', 'where']) assert.ok(got[k] <= got.inner, `${what}: ${k} ends below the screen (${got[k]})`);
}

/**
 * In the page: `n` tables, each with a player who fills it with bots and
 * starts, left open (the sockets stay with the page). Their ids.
 */
async function startMatches(n) {
  const ids = [];
  for (let i = 0; i < n; i++) {
    const r = await fetch('/api/v1/tables', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Newer ${i}` }),
    });
    const { table, owner_token: owner } = await r.json();
    const ws = new WebSocket(`${location.origin.replace(/^http/, 'ws')}/ws`);
    window.__newer = [...(window.__newer || []), ws];
    await new Promise((resolve, reject) => {
      const steps = [
        { type: 'join', protocol: 2, table, name: 'Newer', req: 1 },
        { type: 'add_bots', owner_token: owner, req: 2 },
        { type: 'start', owner_token: owner, req: 3 },
      ];
      ws.onopen = () => ws.send(JSON.stringify(steps.shift()));
      ws.onerror = () => reject(new Error('the socket failed'));
      ws.onmessage = (e) => {
        const m = JSON.parse(e.data);
        if (m.type === 'error') reject(new Error(m.message));
        if ((m.type === 'joined' || m.type === 'ack') && m.req) {
          if (steps.length) ws.send(JSON.stringify(steps.shift()));
          else resolve();
        }
      };
    });
    ids.push(table);
  }
  return ids;
}

export function historyTests(suite) {
  it('keeps every hand\'s scoring on the sheet, fits a phone, and replays the finished match from the dialog and the lobby', async () => {
    const { browser, fastStack: stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: PHONE, hasTouch: true });
    const { page } = p;
    try {
      const id = await createFromLobby(page, { player: 'Ivy', table: 'History', options: { match_end: 'hands:5' } });
      await fillBotsAndStart(page);
      // The player sits and never moves: after three timeouts the autopilot
      // plays the seat and the match runs by itself (had the player left,
      // a match with no person at it would end at once, abandoned).
      await page.waitForSelector('#btn-take-over', { state: 'visible', timeout: 30000 });
      // The first hand's scoring: accessible, and it fits the phone.
      const first = await page.waitForSelector('dialog#hand-scoring[open]', { timeout: 30000 });
      await assertAccessible(assert, page, 'the hand scoring', 'dialog#hand-scoring');
      await assertFitsWidth(page, 'dialog#hand-scoring .scoring', 'the hand scoring');
      await first.$eval('[data-action="ok"]', (b) => b.click());
      // Dismiss the rest until the match is over.
      for (;;) {
        const el = await page.waitForSelector('dialog#hand-scoring[open], dialog#match-over[open]', { timeout: 30000 });
        if (await el.evaluate((d) => d.id === 'match-over')) break;
        const n = await el.$eval('.scoring', (t) => t.dataset.hand);
        await el.$eval('[data-action="ok"]', (b) => b.click());
        await page.waitForFunction((num) => !document.querySelector(`dialog#hand-scoring[open] .scoring[data-hand="${num}"]`), n);
      }
      const dlg = page.locator('dialog#match-over');
      await dlg.locator('.sheet tbody tr').first().waitFor();
      await assertFitsWidth(page, 'dialog#match-over .sheet', 'the match-over table');
      await assertFitsWidth(page, 'dialog#match-over', 'the match-over dialog');
      await assertSheetAsCaptioned(page, 'dialog#match-over', 'the match-over sheet');
      await assertAccessible(assert, page, 'the match-over dialog', 'dialog#match-over');
      await shot(page, 'match-over-phone.png');

      // Any hand's whole scoring reopens from the sheet.
      const record = await (await fetch(`${stack.api}/api/v1/matches/${id}`)).json();
      assert.equal(record.finished, true);
      const rows = await dlg.locator('.sheet tbody tr').count();
      assert.equal(rows, record.hands.length);
      await dlg.locator('.sheet .hand-open[data-hand="2"]').click();
      const detail = page.locator('dialog#hand-detail');
      await detail.waitFor();
      assert.equal(await detail.locator('.scoring').getAttribute('data-hand'), '2');
      const fmt = (n) => (n < 0 ? `−${-n}` : String(n));
      const scoreRow = await detail.locator('.score-row td .score').allTextContents();
      assert.deepEqual(scoreRow, record.hands[1].teams.map((t) => fmt(t.score)), 'hand 2\'s scores');
      await assertFitsWidth(page, 'dialog#hand-detail .scoring', 'the reopened scoring');
      await detail.locator('.btn-icon').click();
      await detail.waitFor({ state: 'detached' });

      // The deals' verification on the phone: the list of checks scrolls,
      // and whatever scrolls is a labelled region the keyboard can reach.
      await dlg.locator('[data-action="verify"]').click();
      await page.waitForSelector('dialog#verify #verify-result', { timeout: 20000 });
      const scrollers = await page.$$eval('dialog#verify *', (els) => els
        .filter((e) => e.scrollHeight > e.clientHeight + 1 && /auto|scroll/.test(getComputedStyle(e).overflowY))
        .map((e) => ({
          checks: !!e.querySelector('.verify-checks li'),
          tabindex: e.getAttribute('tabindex'),
          role: e.getAttribute('role'),
          label: e.getAttribute('aria-label') || e.getAttribute('aria-labelledby'),
        })));
      assert.ok(scrollers.some((x) => x.checks), 'the checks scroll on a phone');
      for (const x of scrollers) {
        assert.deepEqual([x.tabindex, x.role, !!x.label], ['0', 'region', true], `a scroll region the keyboard cannot reach: ${JSON.stringify(x)}`);
      }
      await assertAccessible(assert, page, 'the verification on a phone', 'dialog#verify');
      await assertFitsWidth(page, 'dialog#verify', 'the verification');
      await page.keyboard.press('Escape');
      await page.waitForSelector('dialog#verify', { state: 'detached' });
      // The match-over dialog again, from the table.
      await page.click('#btn-result');
      await dlg.locator('.sheet tbody tr').first().waitFor();

      // Replay from the match-over dialog.
      await dlg.locator('[data-action="replay"]').click();
      await page.waitForSelector('#replay .replay-seat .card');
      assert.match(page.url(), new RegExp(`#/replay/${id}$`));
      const handSizes = () => page.$$eval('.replay-seat', (els) => els.map((e) => e.querySelectorAll('.replay-hand .card').length));
      assert.deepEqual(await handSizes(), [13, 13, 13, 13], 'all four hands at the deal');
      assert.match(await page.textContent('#replay-where'), /^Hand 1: the deal and the bids/);
      await assertReplayFits(page, 'the replay at the deal');
      await assertAccessible(assert, page, 'the replay');
      // Each seat's hand is what it played in the record.
      const dealt = await page.$$eval('.replay-seat', (els) => Object.fromEntries(els.map((e) => [e.dataset.seat, [...e.querySelectorAll('.replay-hand .card')].map((c) => c.dataset.card).sort()])));
      for (const seat of ['north', 'east', 'south', 'west']) {
        assert.deepEqual(dealt[seat], record.hands[0].plays.filter((x) => x.seat === seat).map((x) => x.card).sort(), `${seat}'s hand`);
      }
      await page.click('#replay-next');
      assert.deepEqual(await handSizes(), [12, 12, 12, 12], 'one card fewer each after the first trick');
      const trick = await page.$$eval('.replay-trick .card', (els) => els.map((e) => e.dataset.card).sort());
      assert.deepEqual(trick, record.hands[0].plays.slice(0, 4).map((x) => x.card).sort(), 'the first trick');
      assert.match(await page.textContent('#replay-where'), /^Hand 1, trick 1 of 13: .+ led, .+ won\.$/);
      await assertFitsWidth(page, '#replay .felt', 'the replay');
      await assertReplayFits(page, 'the replay after a trick');
      // To the end of the hand: its scoring.
      for (let i = 0; i < 12; i++) await page.click('#replay-next');
      await page.waitForSelector('#replay-scoring .scoring[data-hand="1"]');
      assert.deepEqual(await handSizes(), [0, 0, 0, 0]);
      await assertReplayFits(page, 'the replay with the hand\'s scoring');
      await page.click('#replay-next');
      assert.match(await page.textContent('#replay-where'), /^Hand 2: the deal/);
      await shot(page, 'replay-phone.png');

      // Eleven newer matches are still in play (their players at another
      // page): more than the lobby's page of recent matches.
      const other = await openPage(browser, stack.url);
      await other.page.goto('/');
      const newer = await other.page.evaluate(startMatches, 11);
      assert.equal(newer.length, 11);
      const listed = await (await fetch(`${stack.api}/api/v1/matches?limit=10`)).json();
      assert.ok(listed.every((m) => !m.finished), 'the newest page of matches has no finished one');

      // The lobby lists the match among the recent ones, with a replay.
      await page.goto('/');
      const item = page.locator(`#recent-list .recent-item[data-table="${id}"]`);
      await item.waitFor();
      const shownIds = await page.locator('#recent-list .recent-item').evaluateAll((els) => els.map((e) => e.dataset.table));
      // Only finished matches are listed. A newer match may have finished
      // by now too (its player is on autopilot), so the server says which
      // are over: a match listed as finished is finished at any later time.
      const over = await (await fetch(`${stack.api}/api/v1/matches?finished=true&limit=100`)).json();
      const overIds = new Set(over.map((m) => m.table));
      assert.ok(shownIds.every((t) => overIds.has(t)), `only finished matches are listed: ${shownIds.join(', ')}`);
      await other.close();
      assert.match(await item.textContent(), /History/);
      // With the day and time it was played.
      const when = item.locator('time.recent-when');
      const at = Date.parse(await when.getAttribute('datetime'));
      assert.ok(Math.abs(Date.now() - at) < 10 * 60_000, `played just now: ${await when.getAttribute('datetime')}`);
      assert.match(await when.textContent(), /^Today, \d{1,2}:\d{2}/);
      await item.locator('.btn-replay').click();
      await page.waitForSelector('#replay .replay-seat .card');
      assert.match(page.url(), new RegExp(`#/replay/${id}$`));
      p.assertClean();
    } finally {
      await p.close();
    }
  });
}
