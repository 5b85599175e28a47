// The table under a bad network, through a proxy that stalls one player's
// connection: the page sees the silence in seconds, says how long the seat
// is held and what the clock says, plays nothing blindly, and comes back;
// a card tapped just before a stall, which reaches the table only after the
// clock played for the player, is refused as stale and the page says so; and
// back from a stall longer than the clock, the page says what the table
// played for the player meanwhile.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  createFromLobby, fillBotsAndStart, handCards, openPage, shot, startStack, tableIdOf, tableStatus,
} from '../lib/harness.mjs';
import { startStallProxy } from '../lib/stallproxy.mjs';

export function stallTests(suite) {
  it('sees a stalled connection within seconds, holds the seat with its clock shown, and comes back', async () => {
    const { browser, stack } = suite;
    const proxy = await startStallProxy(stack.url);
    const p = await openPage(browser, proxy.url);
    const { page } = p;
    try {
      await createFromLobby(page, { player: 'Sam', table: 'Tunnel' });
      const id = tableIdOf(page);
      const seat = await page.getAttribute('.seat.me', 'data-seat');
      await fillBotsAndStart(page);
      await page.waitForSelector('#bid-picker:not([hidden])', { timeout: 20000 });
      assert.equal(await page.isVisible('#offline-banner'), false, 'no banner while the network flows');

      proxy.stall();
      const stalledAt = Date.now();
      await page.waitForSelector('#offline-banner:not([hidden])', { timeout: 9000 });
      const seen = Date.now() - stalledAt;
      assert.ok(seen <= 8000, `the stall is seen in ${seen} ms`);
      const banner = await page.textContent('#offline-banner');
      assert.match(banner, /Connection lost: reconnecting/);
      assert.match(banner, /Your seat is held for \d+:\d\d\./, banner);
      assert.match(banner, /Your turn's clock: \d+ s, and it keeps running\./, banner);
      // Nothing that cannot reach the table looks as if it could.
      const enabled = await page.$$eval('.bid-btn, .bid-confirm, #hand .card', (els) => els.filter((e) => !e.disabled).length);
      assert.equal(enabled, 0, 'every bid and card is disabled while the connection is down');
      // The banner counts down with the seat's hold.
      const held = (t) => {
        const [, m, s] = t.match(/held for (\d+):(\d\d)/);
        return Number(m) * 60 + Number(s);
      };
      await page.waitForFunction((before) => {
        const m = document.querySelector('#offline-banner').textContent.match(/held for (\d+):(\d\d)/);
        return m && Number(m[1]) * 60 + Number(m[2]) < before;
      }, held(banner), { timeout: 4000 });
      await shot(page, 'stalled.png');
      // The server, too, stops hearing the page and shows the seat away to
      // the others.
      const deadline = Date.now() + 20000;
      for (;;) {
        const status = await tableStatus(stack.api, id);
        if (status.seats.find((s) => s.seat === seat).status === 'away') break;
        assert.ok(Date.now() < deadline, `the seat shows away to the others: ${JSON.stringify(status.seats)}`);
        await new Promise((r) => setTimeout(r, 250));
      }

      proxy.resume();
      await page.waitForSelector('#offline-banner', { state: 'hidden', timeout: 12000 });
      // Back at the table as it is now: the bid (if the clock left it) can be made.
      await page.waitForFunction(() => !document.querySelector('.bid-btn:disabled'), null, { timeout: 5000 });
      assert.equal(await page.isVisible('#offline-banner'), false);
      const status = await tableStatus(stack.api, id);
      assert.notEqual(status.seats.find((s) => s.seat === seat).status, 'away', 'the seat is present again');
    } finally {
      await p.close();
      await proxy.stop();
    }
  });

  it('refuses a card that reaches the table after the clock played for the player, and says what the table did', async () => {
    const { browser, fastStack: stack } = suite;
    const proxy = await startStallProxy(stack.url);
    const p = await openPage(browser, proxy.url);
    const { page } = p;
    try {
      await createFromLobby(page, { player: 'Tia', table: 'Late card' });
      await fillBotsAndStart(page);
      // The turn clocks here last under a second: the bids time out.
      // The network stalls, and the player taps a card at once: it waits in
      // the network while the table plays for them. On a busy machine the
      // clock may run out before the stall begins (the page then shows
      // another's turn): wait for the player's next turn and try again.
      let card = null;
      for (let i = 0; i < 5 && !card; i++) {
        await page.waitForSelector('#hand.my-turn .card.legal', { timeout: 30000 });
        proxy.stall();
        card = await page.$$eval('#hand.my-turn .card.legal', (els) => els[0]?.dataset.card ?? null);
        if (!card) proxy.resume();
      }
      assert.ok(card, 'the stall began on the player\'s turn');
      await page.click(`#hand .card[data-card="${card}"]`);
      await new Promise((r) => setTimeout(r, 2500));
      proxy.resume();
      // The card arrives with the seq of the view it was chosen from.
      await page.waitForFunction(() => /was not played: the (table|autopilot) played \S+ for you/.test(document.querySelector('#refusal')?.textContent || ''), null, { timeout: 10000 });
      const sent = p.rec.sent.filter((m) => m.type === 'play' && m.card === card);
      assert.ok(sent.length >= 1, 'the card was sent');
      assert.ok(sent.every((m) => Number.isInteger(m.seq)), 'every play carries the seq of its view');
      const refusal = p.rec.received.find((m) => m.type === 'error' && m.code === 'stale');
      assert.ok(refusal, 'the server refused it as stale');
      assert.match(refusal.message, /for you/);
      // The refusal stays: it does not flash by when the next moves come.
      await new Promise((r) => setTimeout(r, 1500));
      assert.match(await page.textContent('#refusal'), /was not played/);
      await shot(page, 'stale.png');
    } finally {
      await p.close();
      await proxy.stop();
    }
  });

  it('says, back from a stall longer than the clock, what the table played for the player', async () => {
    const { browser } = suite;
    // Clocks of 3 s and no autopilot before 20 timeouts: every move the
    // table makes for the player takes a clock, and a hand lasts longer
    // than the stall.
    const stack = await startStack({
      SPADES_TABLES__TEST_TEMPO_MS: '3000', SPADES_TABLES__AUTOPILOT_AFTER: '20', SPADES_TABLES__BOT_DELAY_MS: '15',
    });
    const proxy = await startStallProxy(stack.url);
    const p = await openPage(browser, proxy.url);
    const { page } = p;
    try {
      await createFromLobby(page, { player: 'Uma', table: 'Long tunnel' });
      const id = tableIdOf(page);
      const seat = await page.getAttribute('.seat.me', 'data-seat');
      await fillBotsAndStart(page);
      await page.waitForSelector('#hand .card', { timeout: 20000 });
      const held = await handCards(page);
      assert.equal(held.length, 13);
      proxy.stall();
      const lastSeen = p.rec.views.at(-1).seq;
      await page.waitForSelector('#offline-banner:not([hidden])', { timeout: 9000 });
      // The table bids and plays for the player while the page is cut off.
      const deadline = Date.now() + 30000;
      for (;;) {
        const status = await tableStatus(stack.api, id);
        if (status.seats.find((s) => s.seat === seat).timeouts >= 2) break;
        assert.ok(Date.now() < deadline, `the table plays for the player: ${JSON.stringify(status.seats)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      // What the page says to a screen reader from now on.
      await page.evaluate(() => {
        const region = document.getElementById('announce');
        window.saidSince = [];
        new MutationObserver(() => window.saidSince.push(region.textContent))
          .observe(region, { childList: true, characterData: true, subtree: true });
      });
      proxy.resume();
      await page.waitForSelector('#offline-banner', { state: 'hidden', timeout: 15000 });
      // One notice of every move the table made that the page had not seen.
      await page.waitForFunction(() => /^While you were away the table /.test(document.querySelector('#refusal.info')?.textContent || ''), null, { timeout: 5000 });
      const notice = await page.textContent('#refusal.info');
      const back = p.rec.views.find((v) => v.seq > lastSeen && p.rec.received[v.i].type === 'view');
      assert.ok(back, 'a snapshot came after the stall');
      const moves = (back.view.played_for_you || []).filter((m) => m.seq > lastSeen);
      assert.ok(moves.length >= 2, `the table made moves for the player: ${JSON.stringify(back.view.played_for_you)}`);
      assert.ok(moves.every((m) => m.source === 'timeout'), JSON.stringify(moves));
      const bids = moves.filter((m) => m.action.bid != null);
      const cards = moves.filter((m) => m.action.play).map((m) => m.action.play);
      assert.equal(bids.length, 1, 'the table bid for the player');
      assert.ok(cards.length >= 1, 'and played a card');
      const RANK = { T: 'ten', J: 'jack', Q: 'queen', K: 'king', A: 'ace', 2: 'two', 3: 'three', 4: 'four', 5: 'five', 6: 'six', 7: 'seven', 8: 'eight', 9: 'nine' };
      const SUIT = { S: 'spades', H: 'hearts', D: 'diamonds', C: 'clubs' };
      const named = cards.map((c) => `${RANK[c[0]]} of ${SUIT[c[1]]}`);
      const bid = bids[0].action.bid === 0 ? 'nil' : String(bids[0].action.bid);
      const list = named.length === 1 ? named[0] : `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
      assert.equal(notice, `While you were away the table bid ${bid} and played ${list} for you.`);
      // The cards it names were the player's, and are gone from the hand.
      const now = await handCards(page);
      for (const c of cards) {
        assert.ok(held.includes(c) && !now.includes(c), `${c} was held and is gone`);
      }
      // Said to a screen reader too.
      const said = await page.evaluate(() => window.saidSince);
      assert.ok(said.some((t) => t.includes(notice)), `announced: ${JSON.stringify(said)}`);
      await shot(page, 'away-notice.png');
    } finally {
      await p.close();
      await proxy.stop();
      await stack.stop();
    }
  });
}
