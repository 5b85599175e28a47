// Moderation in the browser, on a server with a SQLite store (the command
// line must reach it): a player sits at a table; an operator, made with
// the real binary's `admin grant`, opens the operators' page from the
// account page, finds the player and suspends them with a reason, which
// the player's table says at once and their account page says while it
// holds; the operator lifts it; the audit log lists both with their
// reasons, the newest first, and More pages back; a refusal of the API is
// said next to its form; the page passes axe-core on a desktop and a
// phone; a signed-out visitor and a player are told they are not operators.
// An operator reads what a player said and removes a message, which the
// player's table shows as removed at once and never sends again. A
// spectator reports a message and a player from the table; the operator
// reads each report with what was said around it in the queue, resolves
// one, and finds both in the player's dossier.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { it } from 'node:test';
import { promisify } from 'node:util';
import { assertAccessible } from '../lib/axe.mjs';
import { openPage, shot, startDurableStack } from '../lib/harness.mjs';
import { REPO_ROOT, serverBinary, settingsEnv } from '../lib/server.mjs';

/** `spades-server admin ARGS` on the store of the server in `dataDir`: its output. */
async function admin(dataDir, ...args) {
  const { stdout } = await promisify(execFile)(serverBinary(), ['admin', ...args], {
    cwd: REPO_ROOT,
    env: { ...settingsEnv(), SPADES_STORAGE__IN_MEMORY: 'false', SPADES_STORAGE__DATA_DIR: dataDir },
  });
  return stdout;
}

/** A guest named `name`, seated at a table of their own (Play now). */
async function seatedGuest(browser, url, name) {
  const p = await openPage(browser, url);
  await p.page.goto('/');
  await p.page.fill('#player-name', name);
  await p.page.click('#play-now');
  await p.page.waitForSelector('.table-screen .seat.me');
  return p;
}

/** Waits until the element `sel` shows `text` (innerText: what is rendered). */
const waitText = (page, sel, text) => page.waitForFunction(([sel, text]) => document.querySelector(sel)?.innerText.includes(text), [sel, text]);

export function moderationTests(suite) {
  it('moderation: an operator finds a player, suspends them with a reason the table shows, lifts it, and reads both in the audit log', async () => {
    const { browser } = suite;
    const stack = await startDurableStack();
    const pages = [];
    try {
      const player = await seatedGuest(browser, stack.url, 'Rowdy');
      const op = await seatedGuest(browser, stack.url, 'Olive');
      pages.push(player, op);
      const { page } = op;

      // Before the command line makes her one, Olive is not an operator,
      // and her account page has no link to the operators' page.
      await page.goto('/admin');
      await waitText(page, '#admin-denied', 'Olive is not one');
      assert.equal(await page.textContent('#admin-denied-h'), 'You are not an operator');
      await page.goto('/#/me');
      await page.waitForSelector('#me-name');
      assert.equal(await page.$('#me-moderation'), null, 'no link for a player');
      assert.match(await admin(stack.server.dataDir, 'grant', 'olive'), /^Olive \([0-9a-f-]{36}\) is an operator now/);

      // From her account page to the operators' page.
      await page.reload();
      await page.click('#me-moderation');
      await page.waitForSelector('#admin-find-h');
      assert.equal(new URL(page.url()).pathname, '/admin');
      // The log begins with the command line's grant; Olive is the one operator.
      await waitText(page, '#admin-audit', 'The command line made Olive an operator');
      await waitText(page, '#admin-operators', 'Olive');

      // Find Rowdy and open the dossier.
      await page.fill('#admin-q', 'rowd');
      await page.click('#admin-find');
      await page.waitForSelector('#admin-results li .btn-open');
      assert.match(await page.innerText('#admin-results'), /Rowdy\nGuest · made /);
      await page.click('#admin-results li .btn-open');
      await waitText(page, '#admin-dossier-h', 'Rowdy');
      assert.equal(await page.evaluate(() => document.activeElement.id), 'admin-dossier-h', 'the dossier has the focus');
      assert.match(await page.innerText('#admin-facts'), /Guest account, made .* · 1 session/);
      assert.match(await page.innerText('#admin-dossier'), /None yet\./);
      await assertAccessible(assert, page, 'the operators\' page with a dossier');

      // A reason is needed, and a suspension needs an end: said in the form.
      await page.click('#admin-suspend');
      assert.match(await page.textContent('#admin-sanction-error'), /Give a reason/);
      const reason = 'Shouting at the table (browser test)';
      await page.fill('#admin-reason', reason);
      await page.selectOption('#admin-for', '0');
      await page.click('#admin-suspend');
      assert.match(await page.textContent('#admin-sanction-error'), /needs an end/);
      await page.selectOption('#admin-for', String(10 * 60));
      await page.click('#admin-suspend');
      await page.waitForSelector('#admin-sanctions li.active[data-kind="suspend"]');
      assert.match(await page.innerText('#admin-sanctions'), new RegExp(`Suspended until .*\nWhy: ${literal(reason)}\nBy Olive, .*\nHolds now`));
      await waitText(page, '#admin-results', 'Suspended until');

      // The player's table says so at once, with the reason, and stops.
      await waitText(player.page, 'main', reason);
      assert.ok(player.rec.received.some((m) => m.type === 'error' && m.code === 'suspended'), 'the error frame came');
      // Their account page says it while it holds.
      await player.page.goto('/#/me');
      await waitText(player.page, '#me-restrictions', `: ${reason}`);
      assert.match(await player.page.innerText('#me-restrictions li'), /^Suspended until .+: Shouting/);
      assert.equal(await player.page.$('#me-moderation'), null, 'no link for a player');

      // Lifting asks why; the server's refusal is said next to its form.
      await page.click('#admin-sanctions li.active .btn-lift');
      assert.equal(await page.getAttribute('#admin-sanctions li.active .btn-lift', 'aria-expanded'), 'true');
      await page.click('#admin-sanctions li.active .btn-lift-confirm');
      assert.match(await page.innerText('#admin-sanctions li.active [role="alert"]'), /Give a reason/);
      await page.fill('#admin-sanctions li.active input', 'Apologised (browser test)');
      await page.click('#admin-sanctions li.active .btn-lift-confirm');
      await page.waitForSelector('#admin-sanctions li[data-kind="suspend"]:not(.active)');
      assert.match(await page.innerText('#admin-sanctions'), /Lifted .* by Olive: Apologised \(browser test\)/);

      // The audit log, the newest first: the lift, the suspension, the grant.
      await waitText(page, '#admin-audit', 'Olive lifted a sanction on Rowdy: Apologised (browser test)');
      const log = await page.$$eval('#admin-audit li', (ls) => ls.map((l) => [l.dataset.action, l.innerText]));
      assert.deepEqual(log.map(([a]) => a), ['lift', 'suspend', 'grant_operator']);
      assert.match(log[1][1], new RegExp(`^Olive suspended Rowdy until .*: ${literal(reason)}`));
      assert.ok(await page.isHidden('#admin-audit-more'), 'no older entries');

      // The player's account page says nothing any more.
      await player.page.reload();
      await player.page.waitForSelector('#me-name');
      assert.equal(await player.page.$('#me-restrictions'), null, 'the suspension is over');

      // Olive may not revoke her own role: the server's 409, in words, next to the form.
      await page.click('#admin-operators li .btn-open');
      await waitText(page, '#admin-dossier-h', 'Olive');
      await page.fill('#admin-role-reason', 'stepping down');
      await page.click('#admin-role');
      await page.waitForFunction(() => document.querySelector('#admin-role-error')?.textContent.length > 0);
      assert.match(await page.textContent('#admin-role-error'), /own/);

      // More pages back through the log: 20 entries a page.
      await page.evaluate(async (account) => {
        const post = (path, body) => fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
          .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`${path}: ${r.status}`))));
        for (let i = 0; i < 10; i += 1) {
          const made = await post(`/api/v1/admin/accounts/${account}/sanctions`, { kind: 'mute', reason: `test mute ${i}` });
          await post(`/api/v1/admin/sanctions/${made.id}/lift`, { reason: `test lift ${i}` });
        }
      }, await page.getAttribute('#admin-results li', 'data-account'));
      await page.reload();
      await page.waitForFunction(() => document.querySelectorAll('#admin-audit li').length === 20);
      assert.match(await page.innerText('#admin-audit li'), /Olive lifted a sanction on Rowdy: test lift 9/);
      await page.click('#admin-audit-more');
      await page.waitForFunction(() => document.querySelectorAll('#admin-audit li').length === 23);
      assert.ok(await page.isHidden('#admin-audit-more'), 'the oldest entry is shown');
      assert.equal(await page.getAttribute('#admin-audit li:last-child', 'data-action'), 'grant_operator');
      // The address kept the dossier open: Olive's.
      await waitText(page, '#admin-dossier-h', 'Olive');

      // A phone: axe-core, and nothing wider than the screen.
      await page.setViewportSize({ width: 390, height: 844 });
      await assertAccessible(assert, page, 'the operators\' page on a phone');
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling on a phone');
      await shot(page, 'moderation-phone.png');

      // The player visiting the page is told they are not an operator.
      await player.page.goto('/admin');
      await waitText(player.page, '#admin-denied', 'Rowdy is not one');
      await assertAccessible(assert, player.page, 'the operators\' page for a player');

      // The refusals the pages were sent (the 409) are the only console errors.
      assert.deepEqual(op.rec.console.map((t) => t.match(/status of (\d+)/)?.[1]), ['409']);
      op.rec.console.length = 0;
      for (const p of pages) p.assertClean();
    } finally {
      for (const p of pages) await p.close();
      await stack.stop();
    }
  });

  it('moderation: an operator reads what a player said and removes a message, which their table then shows as removed', async () => {
    const { browser } = suite;
    const stack = await startDurableStack();
    const pages = [];
    try {
      const player = await seatedGuest(browser, stack.url, 'Rowdy');
      const op = await seatedGuest(browser, stack.url, 'Olive');
      pages.push(player, op);
      const rude = 'You all play like fish (browser test)';
      await player.page.click('#btn-chat');
      for (const text of ['Hello table', rude]) {
        await player.page.fill('#chat-input', text);
        await player.page.click('#chat-send');
        await waitText(player.page, '#chat-log', text);
      }
      assert.match(await admin(stack.server.dataDir, 'grant', 'olive'), /is an operator now/);

      // The dossier lists what Rowdy said, the newest first.
      const { page } = op;
      await page.goto('/admin');
      await page.fill('#admin-q', 'rowdy');
      await page.click('#admin-find');
      await page.waitForSelector('#admin-results li .btn-open');
      await page.click('#admin-results li .btn-open');
      await waitText(page, '#admin-chat', rude);
      const said = await page.$$eval('#admin-chat li .admin-chat-text', (ts) => ts.map((t) => t.textContent));
      assert.deepEqual(said, [rude, 'Hello table']);
      await assertAccessible(assert, page, 'a dossier with chat');

      // Removing asks why; done, the player's table shows it removed.
      const line = '#admin-chat li:first-child';
      await page.click(`${line} .btn-remove`);
      await page.click(`${line} .btn-remove-confirm`);
      assert.match(await page.innerText(`${line} [role="alert"]`), /Give a reason/);
      await page.fill(`${line} input`, 'Insults (browser test)');
      await page.click(`${line} .btn-remove-confirm`);
      await page.waitForSelector('#admin-chat li.removed');
      assert.match(await page.innerText('#admin-chat li.removed'), /Removed /);
      await waitText(player.page, '#chat-log', 'message removed by a moderator');
      const shown = await player.page.$$eval('#chat-log .chat-text', (ts) => ts.map((t) => t.textContent));
      assert.deepEqual(shown, ['Hello table', 'message removed by a moderator']);
      assert.ok(player.rec.received.some((m) => m.type === 'chat_removed'), 'the removal came as a frame');
      await waitText(page, '#admin-audit', 'Olive removed a chat message of Rowdy: Insults (browser test)');

      // A page opened later never gets the message.
      await player.page.reload();
      await player.page.waitForSelector('.table-screen .seat.me');
      await player.page.click('#btn-chat');
      // A new message comes after every kept one: once it shows, all are in.
      await player.page.fill('#chat-input', 'Back again');
      await player.page.click('#chat-send');
      await waitText(player.page, '#chat-log', 'Back again');
      assert.match(await player.page.innerText('#chat-log'), /Hello table/);
      assert.ok(!(await player.page.innerText('#chat-log')).includes(rude), 'the removed message is not sent again');
      for (const p of pages) p.assertClean();
    } finally {
      for (const p of pages) await p.close();
      await stack.stop();
    }
  });

  it('moderation: a spectator reports a message and a player from the table, and an operator reads the context and resolves it', async () => {
    const { browser } = suite;
    const stack = await startDurableStack();
    const pages = [];
    try {
      const player = await seatedGuest(browser, stack.url, 'Rowdy');
      const op = await seatedGuest(browser, stack.url, 'Olive');
      const bea = await openPage(browser, stack.url);
      pages.push(player, op, bea);
      const id = new URL(player.page.url()).hash.split('/')[2];
      const seat = await player.page.getAttribute('.table-screen .seat.me', 'data-seat');
      const rude = 'You all play like fish (report test)';
      await player.page.click('#btn-chat');
      for (const text of ['Hello table', rude]) {
        await player.page.fill('#chat-input', text);
        await player.page.click('#chat-send');
        await waitText(player.page, '#chat-log', text);
      }
      assert.match(await admin(stack.server.dataDir, 'grant', 'olive'), /is an operator now/);
      // Both messages are kept (written off the table's task) before they
      // are reported.
      await op.page.waitForFunction(async (id) => {
        const kept = await (await fetch(`/api/v1/admin/tables/${id}/chat`)).json();
        return kept.length === 2;
      }, id, { polling: 100 });

      // Bea watches Rowdy's table and reports the message: why, in a dialog.
      await bea.page.goto(`/#/table/${id}`);
      await bea.page.waitForSelector('.table-screen[data-role="spectator"]');
      await bea.page.click('#btn-chat');
      await waitText(bea.page, '#chat-log', rude);
      assert.equal(await player.page.locator('#chat-log .chat-report').count(), 0, 'no Report on one\'s own messages');
      await bea.page.click(`#chat-log li:has-text("${rude}") .chat-report`);
      await bea.page.waitForSelector('#report-dialog');
      assert.match(await bea.page.innerText('#report-about'), new RegExp(`Rowdy's message: “${literal(rude)}”`));
      await assertAccessible(assert, bea.page, 'the report dialog', '#report-dialog');
      await bea.page.selectOption('#report-reason', 'abusive_chat');
      await bea.page.fill('#report-text', 'Insults the whole table');
      await bea.page.click('#report-dialog [data-action="send"]');
      await waitText(bea.page, '#chat-reported', 'Report sent: an operator will look at it.');
      // And Rowdy as a player, from the seats of the chat panel.
      await bea.page.$eval('#chat-reported', (e) => { e.textContent = ''; });
      await bea.page.click(`.chat-report-seat[data-seat="${seat}"]`);
      await bea.page.selectOption('#report-reason', 'unsportsmanlike');
      await bea.page.click('#report-dialog [data-action="send"]');
      await waitText(bea.page, '#chat-reported', 'Report sent');
      const reporter = (await bea.page.evaluate(async () => (await fetch('/api/v1/me')).json())).account.name;

      // Bea blocks Rowdy's chat: hidden here, and after a reload (kept
      // with her account); her account page lists him, with Unblock.
      const shown = (pg) => pg.$$eval('#chat-log .chat-msg:not([hidden]) .chat-text', (ts) => ts.map((t) => t.textContent));
      await bea.page.click(`#chat-log li:has-text("${rude}") .chat-block`);
      await waitText(bea.page, '#chat-reported', 'You no longer read Rowdy\'s chat');
      assert.deepEqual(await shown(bea.page), []);
      assert.match(await bea.page.innerText('#chat-hidden'), /2 messages from muted seats or blocked players are hidden/);
      await bea.page.reload();
      await bea.page.waitForSelector('.table-screen[data-role="spectator"]');
      await bea.page.click('#btn-chat');
      await bea.page.waitForFunction(() => document.querySelectorAll('#chat-log .chat-msg').length === 2);
      await bea.page.waitForFunction(() => document.querySelectorAll('#chat-log .chat-msg[hidden]').length === 2);
      await bea.page.goto('/#/me');
      await waitText(bea.page, '#me-blocks', 'Rowdy');
      await bea.page.click('#me-blocks .btn-unblock');
      await waitText(bea.page, '#me-blocks', 'You read Rowdy\'s chat again.');

      // The queue: the newest first, each with what was said around it.
      const { page } = op;
      await page.goto('/admin');
      await page.waitForFunction(() => document.querySelectorAll('#admin-reports > li').length === 2);
      const heads = await page.$$eval('#admin-reports > li .session-client', (ts) => ts.map((t) => t.textContent));
      assert.deepEqual(heads, ['Unsportsmanlike play (stalling, leaving, throwing): Rowdy', 'Abusive chat: Rowdy\'s message']);
      const row = '#admin-reports li[data-reason="abusive_chat"]';
      assert.match(await page.innerText(row), new RegExp(`Reported by ${literal(reporter)}`));
      assert.match(await page.innerText(row), /“Insults the whole table”/);
      await page.click(`${row} summary`);
      assert.equal(await page.innerText(`${row} .admin-reported .admin-chat-text`), rude);
      assert.deepEqual(await page.$$eval(`${row} .admin-said li`, (ls) => ls.map((l) => l.firstChild.textContent)), ['Rowdy: ', 'Rowdy: ']);
      await assertAccessible(assert, page, 'the reports queue');

      // Resolved, saying what was done: it leaves the queue, the audit log
      // and Rowdy's dossier say so.
      await page.click(`${row} .btn-resolve`);
      await page.fill(`${row} .admin-resolve input`, 'Muted a day (browser test)');
      await page.click(`${row} .btn-resolve-confirm`);
      await page.waitForFunction(() => document.querySelectorAll('#admin-reports > li').length === 1);
      await waitText(page, '#admin-audit', 'Olive resolved a report about Rowdy: Muted a day (browser test)');
      await page.click('#admin-reports li .btn-open');
      await page.waitForFunction(() => document.querySelectorAll('#admin-about > li').length === 2);
      assert.match(await page.innerText('#admin-about'), /Resolved .* by Olive: Muted a day \(browser test\)/);
      assert.match(await page.innerText('#admin-about'), /Open/);

      // Closing Rowdy's table from the report left: everybody at it reads why.
      const left = '#admin-reports li[data-reason="unsportsmanlike"]';
      await page.click(`${left} .btn-close`);
      await page.fill(`${left} .admin-close input`, 'Closed after reports (browser test)');
      await page.click(`${left} .btn-close-confirm`);
      await waitText(page, '#admin-audit', 'Olive closed a table: Closed after reports (browser test)');
      await waitText(player.page, 'body', 'an operator closed this table: Closed after reports (browser test)');
      for (const p of pages) p.assertClean();
    } finally {
      for (const p of pages) await p.close();
      await stack.stop();
    }
  });

  it('moderation: a visitor who is not signed in is told the page is for operators', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url);
    try {
      await p.page.goto('/admin');
      await waitText(p.page, '#admin-denied', 'not signed in');
      assert.equal(await p.page.textContent('#admin-denied-h'), 'You are not an operator');
      assert.equal(await p.page.getAttribute('#admin-denied-h ~ p a', 'href'), '/');
      // Nothing was asked but who is signed in.
      assert.deepEqual(p.rec.requests.map((u) => new URL(u).pathname).filter((u) => u.startsWith('/api/')), ['/api/v1/me']);
    } finally {
      await p.close();
    }
  });
}

/** `text` as a literal in a regular expression. */
function literal(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
