// Table chat: quick phrases and free text reach everybody at the table,
// shown as text (markup stays text); spectators only read by default; a
// player mutes a seat for themselves; the server caps the rate.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { createFromLobby, openPage } from '../lib/harness.mjs';

const texts = (page) => page.$$eval('#chat-log .chat-msg:not([hidden]) .chat-text', (els) => els.map((e) => e.textContent));

export function chatTests(suite) {
  it('chats with quick phrases and escaped free text, spectators read only, a seat can be muted, and the rate is capped', async () => {
    const { browser, stack } = suite;
    const a = await openPage(browser, stack.url);
    const c = await openPage(browser, stack.url);
    const b = await openPage(browser, stack.url);
    try {
      const id = await createFromLobby(a.page, { player: 'Aino', table: 'Chatty', options: { seat: 'north' } });
      // Cy sits at East; Bea watches.
      await c.page.addInitScript(() => localStorage.setItem('spades.v1.name', JSON.stringify('Cy')));
      await c.page.goto(`/#/table/${id}`);
      await c.page.click('.seat[data-seat="east"] .sit-btn');
      await c.page.waitForSelector('.seat.me[data-seat="east"]');
      await b.page.goto(`/#/table/${id}`);
      await b.page.waitForSelector('.table-screen[data-role="spectator"]');

      // A quick phrase.
      await a.page.click('#btn-chat');
      await a.page.waitForSelector('#chat-panel:not([hidden])');
      await a.page.click('.chat-phrase:has-text("Nice nil!")');
      await c.page.waitForSelector('#btn-chat .chat-count:not([hidden])');
      assert.equal((await c.page.textContent('#btn-chat .chat-count')).trim(), '1', 'one unread message');
      await c.page.click('#btn-chat');
      await c.page.waitForFunction(() => document.querySelectorAll('#chat-log .chat-msg').length === 1);
      assert.deepEqual(await texts(c.page), ['Nice nil!']);
      assert.equal(await c.page.textContent('#chat-log .chat-who'), 'Aino (North):');

      // Free text with markup in it: shown as text, nothing runs.
      const html = '<img src=x onerror="window.pwned=1"><b>gg</b>';
      await a.page.fill('#chat-input', html);
      await a.page.click('#chat-send');
      await c.page.waitForFunction(() => document.querySelectorAll('#chat-log .chat-msg').length === 2);
      assert.deepEqual(await texts(c.page), ['Nice nil!', html]);
      assert.equal(await c.page.locator('#chat-log img, #chat-log b').count(), 0, 'no markup made it into the page');
      assert.equal(await c.page.evaluate(() => window.pwned), undefined);
      assert.equal(await a.page.inputValue('#chat-input'), '', 'the field is emptied once sent');
      // At most 200 characters: a counter, and past the cap the message is
      // refused in the page (not cut).
      await a.page.fill('#chat-input', 'x'.repeat(201));
      assert.equal(await a.page.textContent('#chat-count'), '201/200');
      assert.equal(await a.page.isDisabled('#chat-send'), true, 'Send is off past the cap');
      await a.page.press('#chat-input', 'Enter');
      assert.match(await a.page.textContent('#chat-error'), /Too long: 201 characters, at most 200/);
      assert.equal(await a.page.inputValue('#chat-input'), 'x'.repeat(201), 'nothing was cut');
      await a.page.fill('#chat-input', '');
      assert.equal(await a.page.textContent('#chat-count'), '0/200');

      // The spectator reads, and cannot write at this table.
      await b.page.click('#btn-chat');
      await b.page.waitForFunction(() => document.querySelectorAll('#chat-log .chat-msg').length === 2);
      assert.equal(await b.page.isDisabled('#chat-input'), true);
      assert.equal(await b.page.isDisabled('.chat-phrase >> nth=0'), true);
      assert.match(await b.page.textContent('#chat-note'), /Spectators only read/);
      await assertAccessible(assert, c.page, 'the chat', '#chat-panel');

      // Cy mutes North: Aino's next message is hidden for Cy, not for Bea.
      await c.page.check('#chat-mute-north');
      assert.deepEqual(await texts(c.page), [], 'the muted seat\'s messages are hidden');
      assert.deepEqual(JSON.parse(await c.page.evaluate((t) => localStorage.getItem(`spades.v1.mute.${t}`), id)), ['north']);
      await a.page.click('.chat-phrase:has-text("Sorry, partner")');
      await b.page.waitForFunction(() => document.querySelectorAll('#chat-log .chat-msg').length === 3);
      await c.page.waitForFunction(() => document.querySelectorAll('#chat-log .chat-msg').length === 3);
      assert.deepEqual(await texts(c.page), []);
      assert.deepEqual(await texts(b.page), ['Nice nil!', html, 'Sorry, partner']);
      // Cy still writes, and Aino sees it.
      await c.page.click('.chat-phrase:has-text("Good game")');
      await a.page.waitForFunction(() => [...document.querySelectorAll('#chat-log .chat-text')].some((e) => e.textContent === 'Good game'));

      // The rate: five messages in ten seconds; the sixth is refused by the server.
      for (const n of [4, 5]) {
        await a.page.fill('#chat-input', `message ${n}`);
        await a.page.click('#chat-send');
        await a.page.waitForFunction((t) => [...document.querySelectorAll('#chat-log .chat-text')].some((e) => e.textContent === t), `message ${n}`);
      }
      await a.page.fill('#chat-input', 'one too many');
      await a.page.click('#chat-send');
      await a.page.waitForFunction(() => /at most 5 messages in 10 s: wait \d+ s/i.test(document.getElementById('chat-error').textContent));
      // The notice counts down and goes away.
      const secs = () => a.page.evaluate(() => Number((/wait (\d+) s/.exec(document.getElementById('chat-error').textContent) || [0, 0])[1]));
      const first = await secs();
      await a.page.waitForFunction((n) => {
        const m = /wait (\d+) s/.exec(document.getElementById('chat-error').textContent);
        return !m || Number(m[1]) < n;
      }, first, { timeout: 3000 });
      assert.ok(a.rec.received.some((m) => m.type === 'error' && m.code === 'chat_rate_limited'));
      assert.equal(await a.page.inputValue('#chat-input'), 'one too many', 'a refused message stays in the field');
      // A reload repeats the recent messages: each is shown once, and what
      // Cy read before does not count as new.
      await c.page.uncheck('#chat-mute-north');
      await c.page.reload();
      await c.page.waitForSelector('.seat.me[data-seat="east"]');
      await c.page.waitForFunction(() => document.querySelectorAll('#chat-log .chat-msg').length >= 3);
      const ids = c.rec.received.filter((m) => m.type === 'chat').map((m) => m.id);
      assert.ok(ids.every((x) => Number.isInteger(x)), 'chat messages carry ids');
      const shownTexts = await c.page.$$eval('#chat-log .chat-msg', (els) => els.map((e) => e.textContent));
      assert.equal(new Set(shownTexts).size, shownTexts.length, `each message once: ${shownTexts}`);
      assert.equal(await c.page.isVisible('#btn-chat .chat-count'), false, 'no old message counts as unread');
      // Bots are not in the mute list; the log is a focusable region.
      assert.equal(await c.page.getAttribute('#chat-log', 'tabindex'), '0');
      // Escape closes the panel and gives the focus back.
      await c.page.click('#btn-chat');
      await c.page.waitForSelector('#chat-panel:not([hidden])');
      await c.page.keyboard.press('Escape');
      await c.page.waitForSelector('#chat-panel', { state: 'hidden' });
      assert.equal(await c.page.evaluate(() => document.activeElement?.id), 'btn-chat');
      for (const p of [a, b, c]) p.assertClean();
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
}
