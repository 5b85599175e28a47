// The player's account in the browser (docs/web-client.md, "The player's
// account"): a first visitor is offered a generated name and plays in one
// click as a guest account (a device secret in localStorage, an HttpOnly
// session cookie); a reload, a second tab and a second browser holding the
// same device secret come back to the seat by account, with no seat token;
// a taken or look-alike name is refused in the name field with why; the
// account page renames, lists the sessions and signs one out, and makes a
// token that signs a terminal in as the account.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { openPage, shot, tableIdOf, tableStatus } from '../lib/harness.mjs';

/** The attach frames (`join`, `resume`, `watch`) a page sent, as recorded. */
const attaches = (frames) => frames.filter((m) => ['join', 'resume', 'watch'].includes(m.type));

/** Records the frames a page sends on its WebSockets (for pages `openPage` did not make). */
function recordSent(page) {
  const sent = [];
  page.on('websocket', (ws) => ws.on('framesent', (f) => {
    try {
      sent.push(JSON.parse(String(f.payload)));
    } catch {
      // not JSON
    }
  }));
  return sent;
}

/** The page's own `GET /api/v1/me`, with its cookie: `{status, body}`. */
const meOf = (page) => page.evaluate(async () => {
  const r = await fetch('/api/v1/me');
  return { status: r.status, body: r.status === 200 ? await r.json() : null };
});

/** The `spades_session` cookie of a browser context (HttpOnly: the page cannot read it). */
async function sessionCookie(context) {
  return (await context.cookies()).find((c) => c.name === 'spades_session') || null;
}

/** Signs a guest account in over REST, as another device: `{account, token}`. */
async function guestRest(api, name) {
  const secret = `rest-device-${name.replace(/\W/g, '')}-${'x'.repeat(32)}`;
  const r = await fetch(`${api}/api/v1/accounts/guest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ device_secret: secret, name, session: 'bearer' }),
  });
  assert.equal(r.status, 201, `the REST guest ${name}`);
  return r.json();
}

export function accountTests(suite) {
  it('a first visitor plays as a guest account in one click, and a reload, a second tab and a second browser find the seat without a token', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url);
    const { page, context, rec } = p;
    let other = null;
    try {
      await page.goto('/');
      // A generated name nobody holds is offered; nothing is asked of the server about accounts yet.
      await page.waitForFunction(() => document.querySelector('#player-name')?.value.trim());
      const offered = await page.inputValue('#player-name');
      assert.match(offered, /^[A-Z][a-z]+ [A-Z][a-z]+ \d+$/, `the name offered (${offered})`);
      assert.equal(await page.evaluate(() => localStorage.getItem('spades.v1.device')), null, 'no device secret before playing');
      assert.ok(!rec.requests.some((u) => new URL(u).pathname === '/api/v1/me'), 'a first visit asks nothing about a session');
      assert.ok(await page.isHidden('#topbar-me'), 'nobody is signed in yet');
      assert.ok(await page.isHidden('#recent-mine'), 'no "Yours" before an account');

      // One click: the guest account under the name offered, a table, three bots, the match.
      await page.click('#play-now');
      await page.waitForSelector('.table-screen .seat.me');
      const id = tableIdOf(page);
      const me = await meOf(page);
      assert.equal(me.status, 200, 'signed in');
      assert.equal(me.body.account.name, offered);
      assert.equal(me.body.account.kind, 'guest');
      const status = await tableStatus(stack.api, id);
      const mySeat = await page.getAttribute('.seat.me', 'data-seat');
      assert.equal(status.seats.find((s) => s.seat === mySeat).name, offered, 'the seat has the account\'s name');
      await page.waitForFunction(() => document.querySelectorAll('.seat .bot-icon:not([hidden])').length === 3);
      await page.waitForFunction((name) => document.querySelector('#topbar-me')?.textContent === name, offered);

      // The secret stays in this browser; the session is a cookie the page cannot read.
      const secret = JSON.parse(await page.evaluate(() => localStorage.getItem('spades.v1.device')));
      assert.match(secret, /^[A-Za-z0-9_-]{43}$/, 'a device secret of 32 random bytes');
      const cookie = await sessionCookie(context);
      assert.ok(cookie?.httpOnly, 'an HttpOnly session cookie');
      assert.equal(cookie.sameSite, 'Lax');
      assert.ok(!(await page.evaluate(() => document.cookie)).includes('spades_session'), 'page scripts do not see the session');
      assert.ok(!JSON.stringify(await page.evaluate(() => ({ ...localStorage }))).includes(cookie.value), 'the session token is not in localStorage');

      // A reload with no seat token left in the browser: back at the seat by account.
      await page.evaluate((t) => {
        const key = `spades.v1.seat.${t}`;
        localStorage.setItem(key, JSON.stringify({ ...JSON.parse(localStorage.getItem(key)), token: null }));
      }, id);
      const before = rec.sent.length;
      await page.reload();
      await page.waitForSelector(`.table-screen .seat.me[data-seat="${mySeat}"]`);
      const again = attaches(rec.sent.slice(before));
      assert.deepEqual(again.map((m) => [m.type, m.token]), [['resume', undefined]], `the reload resumed without a token: ${JSON.stringify(again)}`);

      // A second tab: the same seat, as the same account.
      const tab = await context.newPage();
      const tabSent = recordSent(tab);
      await tab.goto(`/#/table/${id}`);
      await tab.waitForSelector(`.table-screen .seat.me[data-seat="${mySeat}"]`);
      assert.ok(attaches(tabSent).every((m) => m.type === 'resume' && !('token' in m)), `the second tab: ${JSON.stringify(attaches(tabSent))}`);
      await tab.close();

      // A second browser given the device secret (as a player moving it by
      // hand would): the same account, its own session, the same seat.
      other = await openPage(browser, stack.url);
      await other.context.addInitScript((s) => localStorage.setItem('spades.v1.device', JSON.stringify(s)), secret);
      await other.page.goto(`/#/table/${id}`);
      await other.page.waitForSelector(`.table-screen .seat.me[data-seat="${mySeat}"]`);
      const otherCookie = await sessionCookie(other.context);
      assert.ok(otherCookie && otherCookie.value !== cookie.value, 'the second browser has a session of its own');
      assert.equal((await meOf(other.page)).body.account.id, me.body.account.id, 'of the same account');
      assert.ok(attaches(other.rec.sent).every((m) => !m.token), 'no seat token crossed over');

      // The lobby knows the seat, and lists the player's own matches.
      await page.goto('/');
      await page.waitForSelector(`#table-list .table-item[data-table="${id}"] .btn-back`);
      assert.equal(await page.inputValue('#player-name'), offered, 'the name field holds the account\'s name');
      await page.waitForSelector('#recent-mine[aria-pressed="true"]');
      await page.waitForFunction(() => /not finished a match/.test(document.querySelector('.recent-panel').textContent));
      await shot(page, 'account-lobby.png');
      p.assertClean();
      // The second browser held a device secret but no session: its first
      // question (`GET /api/v1/me`) was answered 401, then it signed in.
      other.rec.console = other.rec.console.filter((line) => !/status of 401/.test(line));
      other.assertClean();
    } finally {
      await other?.close();
      await p.close();
    }
  });

  it('refuses a taken name and a look-alike in the name field, saying why, and plays under a free one', async () => {
    const { browser, stack } = suite;
    await guestRest(stack.api, 'Marlo');
    const p = await openPage(browser, stack.url);
    const { page } = p;
    try {
      await page.goto('/');
      await page.waitForSelector('#play-now');
      await page.fill('#player-name', 'MARLO');
      await page.click('#play-now');
      await page.waitForSelector('#player-name[aria-invalid="true"]');
      assert.match(await page.textContent('#name-error'), /is taken: choose another name/);
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'player-name', 'the focus is on the name');
      assert.equal(await page.evaluate(() => document.body.dataset.screen), 'lobby', 'still in the lobby');

      // Cyrillic а and о: looks like Marlo.
      await page.fill('#player-name', 'Mаrlо');
      await page.click('#play-now');
      await page.waitForFunction(() => /looks like “Marlo”/.test(document.querySelector('#name-error').textContent));
      await assertAccessible(assert, page, 'the lobby with a refused name');

      // A free name plays, and is the account's from then on.
      await page.fill('#player-name', 'Marlowe');
      await page.click('#play-now');
      await page.waitForSelector('.table-screen .seat.me');
      assert.equal((await meOf(page)).body.account.name, 'Marlowe');
      assert.equal(await page.textContent('#name-error').catch(() => ''), '', 'the refusal is gone');
    } finally {
      await p.close();
    }
  });

  it('asks a visitor who follows an invitation for a name once, refusing a taken one, and seats the guest account', async () => {
    const { browser, stack } = suite;
    const owner = await openPage(browser, stack.url);
    const friend = await openPage(browser, stack.url);
    try {
      await owner.page.goto('/');
      await owner.page.fill('#player-name', 'Odile');
      if (!(await owner.page.$eval('#create-details', (d) => d.open))) await owner.page.click('#create-details > summary');
      await owner.page.click('#create-table');
      await owner.page.waitForSelector('.table-screen .seat.me');
      const id = tableIdOf(owner.page);

      await friend.page.goto(`/#/table/${id}/join`);
      await friend.page.waitForSelector('dialog#name-dialog[open]');
      // A name is offered; a taken one is asked again with why.
      assert.match(await friend.page.inputValue('#sit-name'), /^[A-Z][a-z]+ [A-Z][a-z]+ \d+$/);
      await friend.page.fill('#sit-name', 'odile');
      await friend.page.click('dialog#name-dialog [data-action="ok"]');
      await friend.page.waitForFunction(() => /is taken/.test(document.querySelector('dialog#name-dialog[open] #sit-name-error')?.textContent || ''));
      await friend.page.fill('#sit-name', 'Fenna');
      await friend.page.click('dialog#name-dialog [data-action="ok"]');
      await friend.page.waitForSelector('.table-screen .seat.me');
      const seats = (await tableStatus(stack.api, id)).seats.filter((s) => s.kind === 'human').map((s) => s.name).sort();
      assert.deepEqual(seats, ['Fenna', 'Odile']);
      assert.equal((await meOf(friend.page)).body.account.name, 'Fenna');
    } finally {
      await owner.close();
      await friend.close();
    }
  });

  it('the account page renames once a day, signs another session out (its connection closes) and makes a token for a terminal', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url);
    const { page } = p;
    let other = null;
    try {
      await page.goto('/');
      await page.fill('#player-name', 'Saoirse');
      await page.click('#play-now');
      await page.waitForSelector('.table-screen .seat.me');
      const id = tableIdOf(page);
      const secret = JSON.parse(await page.evaluate(() => localStorage.getItem('spades.v1.device')));

      // A second browser of the same account, at the same table.
      other = await openPage(browser, stack.url);
      const sockets = [];
      other.page.on('websocket', (ws) => {
        const s = { closed: false };
        ws.on('close', () => {
          s.closed = true;
        });
        sockets.push(s);
      });
      await other.context.addInitScript((s) => localStorage.setItem('spades.v1.device', JSON.stringify(s)), secret);
      await other.page.goto(`/#/table/${id}`);
      await other.page.waitForSelector('.table-screen .seat.me');
      const otherSession = (await meOf(other.page)).body.session.id;
      const live = sockets.filter((s) => !s.closed);
      assert.equal(live.length, 1, 'the other browser has one connection to the table');

      await page.goto('/');
      await page.click('#topbar-me');
      await page.waitForSelector('#session-list .session-item');
      const items = await page.$$eval('#session-list .session-item', (els) => els.map((e) => ({ id: e.dataset.session, current: e.classList.contains('current'), text: e.textContent })));
      assert.equal(items.length, 2, `two sessions: ${JSON.stringify(items)}`);
      assert.equal(items.filter((i) => i.current).length, 1);
      assert.match(items.find((i) => i.current).text, /this browser/);
      assert.match(items[0].text, /Chrome|Chromium/);
      await assertAccessible(assert, page, 'the account page');
      await shot(page, 'account-page.png');

      await page.click(`#session-list .session-item[data-session="${otherSession}"] .btn-sign-out`);
      await page.waitForFunction((sid) => !document.querySelector(`#session-list .session-item[data-session="${sid}"]`), otherSession);
      // Its connection was closed at once (4005); it signs in again with
      // the device secret it keeps, a new session, and is back at the seat.
      for (let i = 0; i < 100 && !live[0].closed; i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(live[0].closed, 'the signed-out browser\'s connection was closed');
      await other.page.waitForFunction(() => document.querySelector('.table-screen .seat.me'));
      for (let i = 0; i < 100 && sockets.filter((s) => !s.closed).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(sockets.filter((s) => !s.closed).length, 1, 'and connected again');
      const renewed = await meOf(other.page);
      assert.equal(renewed.status, 200);
      assert.notEqual(renewed.body.session.id, otherSession, 'a new session');

      // A token for a terminal: shown once, the same account, listed, signed out here.
      await page.fill('#me-token-label', 'Terminal');
      await page.click('#me-make-token');
      await page.waitForSelector('#me-token:not([hidden]) #me-token-value');
      const token = await page.inputValue('#me-token-value');
      assert.match(token, /^[0-9a-f]{64}$/);
      assert.equal(await page.inputValue('#me-token-command'), `spades-tui --url ${new URL(stack.url).origin} --token ${token}`);
      const asTerminal = () => fetch(`${stack.api}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
      const terminal = await (await asTerminal()).json();
      assert.equal(terminal.account.id, (await meOf(page)).body.account.id, 'the token is the same account');
      const row = `#session-list .session-item[data-session="${terminal.session.id}"]`;
      await page.waitForSelector(row);
      assert.match(await page.textContent(row), /^Terminal/);
      await assertAccessible(assert, page, 'the account page with a token shown');
      await page.click(`${row} .btn-sign-out`);
      await page.waitForSelector(row, { state: 'detached' });
      assert.equal((await asTerminal()).status, 401, 'the token is signed out');
      assert.ok(await page.isVisible('#me-token-value'), 'the page keeps showing the token until it is left');

      // Renaming: once, then not again today.
      await page.fill('#me-name', 'Saoirse B');
      await page.click('#me-rename');
      await page.waitForFunction(() => document.querySelector('#topbar-me')?.textContent === 'Saoirse B');
      await page.waitForSelector('#me-name-hint time');
      await page.fill('#me-name', 'Saoirse C');
      await page.click('#me-rename');
      await page.waitForFunction(() => /once every 24 hours/.test(document.querySelector('#me-name-error').textContent));
      assert.equal((await meOf(page)).body.account.name, 'Saoirse B');
      assert.equal((await tableStatus(stack.api, id)).seats.filter((s) => s.kind === 'human').length, 1);

      // The account's data, downloaded as one JSON file, with no secret.
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#me-export')]);
      assert.match(download.suggestedFilename(), /^spades-account-[0-9a-f-]{36}\.json$/);
      const text = await readFile(await download.path(), 'utf8');
      const data = JSON.parse(text);
      assert.equal(data.account.name, 'Saoirse B');
      assert.deepEqual(data.identities.map((i) => i.kind), ['device']);
      const device = await page.evaluate(() => JSON.parse(localStorage.getItem('spades.v1.device')));
      assert.ok(device?.length >= 32 && !text.includes(device), 'the device secret is not in the export');
    } finally {
      await other?.close();
      await p.close();
    }
  });
}
