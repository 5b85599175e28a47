// Shared set-up for the browser tests: the server (or two), the browser,
// pages that record every request, and the flows the tests share.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { ViewKeeper } from '../../../web/js/lean.js';
import { REPO_ROOT, startDurableServer, startServer } from './server.mjs';
import { startWebProxy } from './webproxy.mjs';

export const ARTIFACTS = path.join(REPO_ROOT, 'tests/browser/artifacts');
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const LAUNCH_ARGS = [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/**
 * `server` as the browser reaches it: directly, or behind a proxy that
 * serves web/ from disk (SPADES_TEST_WEB_DIR). `url` is what the browser
 * opens, `api` the server itself; `extra` joins the returned stack.
 */
async function stackOf(server, extra = {}) {
  let proxy = null;
  if (process.env.SPADES_TEST_WEB_DIR) {
    proxy = await startWebProxy(path.resolve(REPO_ROOT, process.env.SPADES_TEST_WEB_DIR), server.port);
  }
  return {
    url: proxy ? proxy.url : server.url,
    api: server.url,
    server,
    ...extra,
    async stop() {
      await proxy?.stop();
      await server.stop();
    },
  };
}

/** A server with test settings (see `stackOf`). */
export async function startStack(env = {}, port = null) {
  return stackOf(await startServer(env, port));
}

/**
 * Like `startStack`, with a server that keeps its log in SQLite and can be
 * killed and started again on the same port and data directory:
 * `restart(signal)` stops it with `signal` and starts it again (the proxy,
 * if any, stays up in front of it).
 */
export async function startDurableStack(env = {}) {
  const server = await startDurableServer(env);
  return stackOf(server, {
    async restart(signal) {
      await server.kill(signal);
      await server.start();
    },
  });
}

export function launchBrowser() {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
}

/**
 * A fresh browser context and page. Records every request and WebSocket the
 * page opens, every frame it exchanges and every uncaught error.
 *
 * The server sends a snapshot (`view`) on attach and then `change` frames
 * (protocol 2): `rec.views` holds the complete view after each of them, as
 * `{i, seq, view}` with `i` the frame's index in `rec.received`, rebuilt per
 * socket with the client's own web/js/lean.js. `rec.gaps` counts the changes
 * that did not follow the frame before (the page then asks for a sync).
 */
export async function openPage(browser, baseURL, { viewport = { width: 1280, height: 860 }, hasTouch = false } = {}) {
  const context = await browser.newContext({ viewport, hasTouch, baseURL });
  const page = await context.newPage();
  const rec = { requests: [], sockets: [], sent: [], received: [], views: [], gaps: 0, errors: [], console: [] };
  page.on('request', (r) => rec.requests.push(r.url()));
  page.on('websocket', (ws) => {
    rec.sockets.push(ws.url());
    const keeper = new ViewKeeper(() => {
      rec.gaps += 1;
    });
    ws.on('framesent', (f) => rec.sent.push(parse(f.payload)));
    ws.on('framereceived', (f) => {
      const m = parse(f.payload);
      rec.received.push(m);
      if (m.type === 'view' || m.type === 'change') {
        const got = keeper.receive(m);
        if (got) rec.views.push({ i: rec.received.length - 1, seq: got.seq, view: got.view });
      }
    });
  });
  page.on('pageerror', (e) => rec.errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') rec.console.push(m.text());
  });
  return {
    context,
    page,
    rec,
    /** Every request went to the test server: no external fetches. */
    assertClean() {
      const origin = new URL(baseURL).origin;
      const wsOrigin = origin.replace(/^http/, 'ws');
      const foreign = rec.requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'));
      assert.deepEqual(foreign, [], 'requests to another origin');
      const foreignWs = rec.sockets.filter((u) => !u.startsWith(`${wsOrigin}/`));
      assert.deepEqual(foreignWs, [], 'WebSockets to another origin');
      assert.ok(rec.requests.length > 0, 'no request recorded');
      assert.deepEqual(rec.errors, [], 'uncaught errors in the page');
      assert.deepEqual(rec.console.filter((t) => !/WebSocket/.test(t)), [], 'console errors');
      // Every change followed the frame before it on its socket.
      assert.equal(rec.gaps, 0, 'change frames with a gap in seq');
      assert.deepEqual(rec.sent.filter((m) => m.type === 'sync'), [], 'the page asked for a sync');
      const attaches = rec.sent.filter((m) => ['join', 'resume', 'watch'].includes(m.type));
      assert.ok(attaches.every((m) => m.protocol === 2), 'every join, resume and watch says protocol 2');
    },
    close: () => context.close(),
  };
}

function parse(payload) {
  try {
    return JSON.parse(String(payload));
  } catch {
    return { raw: String(payload) };
  }
}

export function shot(page, name) {
  return page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: false });
}

/** GET /api/v1/tables/{id} */
export async function tableStatus(apiURL, id) {
  const r = await fetch(`${apiURL}/api/v1/tables/${id}`);
  assert.equal(r.status, 200);
  return r.json();
}

/** POST /api/v1/tables */
export async function createTableRest(apiURL, body) {
  const r = await fetch(`${apiURL}/api/v1/tables`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(r.status, 201);
  return r.json();
}

/** The table id in the page's address (#/table/<id>). */
export function tableIdOf(page) {
  const m = page.url().match(/#\/table\/([0-9a-f-]{36})/);
  assert.ok(m, `not on a table page: ${page.url()}`);
  return m[1];
}

/** Creates a table from the lobby form and waits for the table screen. */
export async function createFromLobby(page, { player = 'Ann', table = 'Test table', options = {} } = {}) {
  await page.goto('/');
  await page.waitForSelector('#create-form', { state: 'attached' });
  await page.fill('#player-name', player);
  // The full options are folded away under "New table with your own rules".
  if (!(await page.$eval('#create-details', (d) => d.open))) await page.click('#create-details > summary');
  await page.fill('#opt-name', table);
  const selects = {
    match_end: '#opt-match-end', nil: '#opt-nil', bag_penalty: '#opt-bag-penalty', failed_nil: '#opt-failed-nil',
    spades_lead: '#opt-spades-lead', tempo: '#opt-tempo', seat: '#opt-seat',
  };
  for (const [k, sel] of Object.entries(selects)) {
    if (options[k] != null) await page.selectOption(sel, options[k]);
  }
  if (options.mercy) await page.check('#opt-mercy');
  if (options.spectator_chat) await page.check('#opt-spectator-chat');
  if (options.bot_seats_open === false) await page.uncheck('#opt-bot-seats-open');
  await page.click('#create-table');
  await page.waitForSelector('.table-screen .seat.me');
  return tableIdOf(page);
}

/** As the owner: bots in the empty seats, then start. */
export async function fillBotsAndStart(page) {
  await page.click('#btn-add-bots');
  await page.waitForSelector('#btn-start:not([disabled])');
  assert.equal(await page.locator('.seat.empty').count(), 0, 'every seat is taken after adding bots');
  await page.click('#btn-start');
}

/** Waits for the bid picker and bids `n` (0 = nil). */
export async function bid(page, n) {
  await page.waitForSelector('#bid-picker:not([hidden])', { timeout: 20000 });
  await page.click(`.bid-btn[data-bid="${n}"]`);
  await page.click('.bid-confirm');
  await page.waitForSelector('#bid-picker', { state: 'hidden' });
}

/** Waits until it is the player's turn to play, or the hand's scoring shows. Returns which. */
export async function waitTurnOrScoring(page, timeout = 20000) {
  const el = await page.waitForSelector('.hand.my-turn .card.legal, dialog#hand-scoring[open]', { timeout });
  return (await el.evaluate((e) => e.tagName)) === 'DIALOG' ? 'scoring' : 'turn';
}

/** The cards in the player's hand, in display order. */
export function handCards(page) {
  return page.$$eval('#hand .card', (els) => els.map((e) => e.dataset.card));
}

/**
 * Plays a card by clicking it and waits until it has left the hand, or, for
 * the hand's last card, until the hand's scoring shows: the next deal may
 * hold the same card again, and the hand keeps a card's element across views.
 */
export async function playCard(page, card, { keyboard = false } = {}) {
  const sel = `#hand .card[data-card="${card}"]`;
  if (keyboard) {
    await page.focus(sel);
    await page.keyboard.press('Enter');
  } else {
    await page.click(sel);
  }
  await page.waitForFunction(
    (sel) => !document.querySelector(sel) || document.querySelector('dialog#hand-scoring[open]'),
    sel,
    { timeout: 10000 },
  );
}
