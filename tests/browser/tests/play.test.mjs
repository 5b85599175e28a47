// Lobby → table → bots → bid → a whole hand played by clicking cards → the
// hand's scoring; then refusals, reloads and spectators at the same server.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  bid, createFromLobby, createTableRest, fillBotsAndStart, handCards, openPage, playCard, shot, tableStatus,
  waitTurnOrScoring,
} from '../lib/harness.mjs';

const SUIT = { C: 'clubs', D: 'diamonds', H: 'hearts', S: 'spades' };

export function playTests(suite) {
  it('creates a table from the lobby with every option, fills bots, bids and plays a whole hand', async () => {
    const { browser, stack } = suite;
    // Something in the lobby list besides our own table.
    await createTableRest(stack.api, { name: 'Evening game', options: { rules: { match_end: { hands: 9 } }, tempo: 'fast' } });
    const p = await openPage(browser, stack.url);
    const { page } = p;
    try {
      await page.goto('/');
      await page.waitForSelector('.table-item:has-text("Evening game")');
      assert.match(await page.textContent('.table-item:has-text("Evening game")'), /9 hands/);
      assert.match(await page.textContent('.table-item:has-text("Evening game")'), /Fast tempo/);
      await page.fill('#player-name', 'Ann');
      await shot(page, 'lobby.png');

      const options = {
        match_end: 'target:300', nil: 'fifty', bag_penalty: 'five_for_fifty', failed_nil: 'count_for_partner',
        spades_lead: 'any_time', tempo: 'relaxed', seat: 'south', mercy: true, spectator_chat: true, bot_seats_open: false,
      };
      const id = await createFromLobby(page, { player: 'Ann', table: 'Browser test', options });
      // The server got exactly the options chosen in the form.
      const created = await tableStatus(stack.api, id);
      assert.equal(created.name, 'Browser test');
      assert.deepEqual(created.options, {
        rules: {
          match_end: { target: 300 }, nil: 'fifty', bag_penalty: 'five_for_fifty', failed_nil: 'count_for_partner',
          spades_lead: 'any_time', mercy: true,
        },
        tempo: 'relaxed',
        spectator_chat: true,
        bot_seats_open: false,
      });
      assert.equal(await page.getAttribute('.seat.me', 'data-seat'), 'south');
      assert.equal(created.seats[2].name, 'Ann');
      // How to play, told with this table's own options.
      await page.click('#btn-rules');
      const howto = await page.locator('dialog#rules').textContent();
      for (const want of ['How to play at this table', 'for +50', '5 bags cost 50', 'Spades may be led at any time here',
        "count toward the partner's contract", 'Mercy rule', '60 s a card', 'first team to reach 300 points']) {
        assert.ok(howto.toLowerCase().includes(want.toLowerCase()), `the how-to-play says ${want}: ${howto}`);
      }
      await page.keyboard.press('Escape');
      // The owner's controls are there; the match cannot start with empty seats.
      assert.equal(await page.isDisabled('#btn-start'), true);
      await fillBotsAndStart(page);

      // Bidding: nil is offered and named, with this table's value.
      await page.waitForSelector('#bid-picker:not([hidden])', { timeout: 20000 });
      assert.match(await page.textContent('.bid-btn[data-bid="0"]'), /Nil.*±50/);
      assert.equal(await page.locator('.bid-btn').count(), 14, 'bids 0..=13');
      // Record what screen readers are told.
      await page.evaluate(() => {
        window.announced = [];
        for (const id of ['announce', 'alert']) {
          const el = document.getElementById(id);
          new MutationObserver(() => window.announced.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true });
        }
      });
      await bid(page, 3);
      await page.waitForSelector('.seat.me .seat-bid:has-text("bid 3")');
      assert.match(await page.textContent('.scorebar'), /First to 300/);

      // Play the whole hand by clicking cards (one with the keyboard).
      let plays = 0;
      let keyboardUsed = false;
      let shotTaken = false;
      for (;;) {
        const what = await waitTurnOrScoring(page);
        if (what === 'scoring') break;
        const legal = await page.$$eval('#hand .card.legal', (els) => els.map((e) => e.dataset.card));
        const all = await handCards(page);
        assert.ok(legal.length >= 1 && legal.every((c) => all.includes(c)), 'legal cards are in the hand');
        assert.equal(all.length, 13 - plays, 'one card fewer after each trick');
        // The turn clock runs round the player's avatar.
        assert.equal(await page.locator('.seat.me.timed.on-turn').count(), 1);
        if (!shotTaken && plays >= 5 && (await page.locator('.trick-box .card').count()) >= 2) {
          await page.waitForTimeout(300); // let the last card land
          await shot(page, 'hand-in-play.png');
          shotTaken = true;
        }
        if (plays === 3) {
          // The last trick, on demand.
          await page.click('#btn-last-trick');
          const last = page.locator('dialog#last-trick');
          await last.waitFor();
          assert.equal(await last.locator('.trick-box .card').count(), 4);
          assert.equal(await last.locator('.trick-box .card.winner').count(), 1);
          assert.match(await last.textContent(), /won it/);
          await page.keyboard.press('Escape');
          await last.waitFor({ state: 'detached' });
        }
        const useKeyboard = !keyboardUsed && plays >= 1;
        await playCard(page, legal[legal.length - 1], { keyboard: useKeyboard });
        keyboardUsed ||= useKeyboard;
        plays += 1;
      }
      assert.equal(plays, 13, 'the player played 13 cards');
      assert.ok(keyboardUsed);
      assert.ok(shotTaken, 'a trick with two cards or more came up');
      const announced = await page.evaluate(() => window.announced);
      assert.ok(announced.some((t) => t.includes('Your turn: play a card.')), 'turns are announced');
      assert.ok(announced.some((t) => /wins the trick/.test(t)), 'trick winners are announced');

      // The hand's scoring, checked against the server's record.
      const dlg = page.locator('dialog#hand-scoring');
      await page.waitForTimeout(250);
      await shot(page, 'hand-scoring.png');
      const status = await tableStatus(stack.api, id);
      assert.equal(status.hands.length, 1);
      const hand = status.hands[0];
      const text = await dlg.textContent();
      assert.match(text, /Hand 1: scoring/);
      for (const label of ['Contract', 'Bags', 'Nil', 'Bag penalty', 'This hand', 'Score']) assert.ok(text.includes(label), label);
      const fmt = (n) => (n < 0 ? `−${-n}` : String(n));
      const scoreCells = await dlg.locator('.score-row td .score').allTextContents();
      assert.deepEqual(scoreCells, [fmt(hand.teams[0].score), fmt(hand.teams[1].score)]);
      const contractText = await dlg.locator('.contract-row').textContent();
      for (const t of hand.teams) {
        if (t.contract > 0) assert.ok(contractText.includes(`${t.contract} bid, ${t.counted_tricks} counted`), contractText);
      }
      assert.ok(text.includes('Ann bid 3'), 'the player bid is listed');
      await page.click('dialog#hand-scoring [data-action="ok"]');
      await page.waitForSelector('dialog#hand-scoring', { state: 'detached' });
      assert.equal(await page.textContent('.team-ns .team-score'), fmt(hand.teams[0].score));
      assert.equal(await page.textContent('.team-ew .team-score'), fmt(hand.teams[1].score));
      assert.match(await page.textContent('.hand-no'), /Hand 2/);
      // The score sheet lists the finished hand.
      await page.click('#btn-sheet');
      await page.waitForSelector('dialog#score-sheet .sheet tbody tr');
      assert.equal(await page.locator('dialog#score-sheet .sheet tbody tr').count(), 1);
      await page.keyboard.press('Escape');
      p.assertClean();
    } finally {
      await p.close();
    }
  });

  it('reconnects by itself after a dropped connection, to the same seat (touch)', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 390, height: 844 }, hasTouch: true });
    const { page } = p;
    // Route the page's WebSockets through the test so one can be cut.
    const routes = [];
    await page.routeWebSocket(/\/ws$/, (ws) => {
      const server = ws.connectToServer();
      const route = { ws, server, sent: [] };
      ws.onMessage((m) => {
        route.sent.push(JSON.parse(m));
        server.send(m);
      });
      routes.push(route);
    });
    try {
      await createFromLobby(page, { player: 'Flo', table: 'Drops' });
      const seat = await page.getAttribute('.seat.me', 'data-seat');
      await fillBotsAndStart(page);
      await page.waitForSelector('#bid-picker:not([hidden])', { timeout: 20000 });
      const cards = await handCards(page);
      assert.equal(cards.length, 13);
      assert.ok(routes[0].sent.some((m) => m.type === 'join'));
      const token = await page.evaluate(() => {
        const k = Object.keys(localStorage).find((x) => x.startsWith('spades.v1.seat.'));
        return JSON.parse(localStorage.getItem(k)).token;
      });
      assert.ok(token, 'the seat token is kept in the browser');

      // Cut the connection.
      await routes[0].ws.close({ code: 4000, reason: 'test drop' });
      await routes[0].server.close();
      // The table's banner says so (the top bar's status gives way to it).
      await page.waitForSelector('#offline-banner:not([hidden])');
      assert.match(await page.textContent('#offline-banner'), /Connection lost: reconnecting/);
      assert.equal(await page.getAttribute('#net', 'data-status') !== 'open', true);
      // …and it comes back to the same seat and hand by itself.
      await page.waitForFunction(() => document.getElementById('net').dataset.status === 'open', null, { timeout: 15000 });
      assert.equal(routes.length, 2, 'one new connection');
      const resume = routes[1].sent.find((m) => m.type === 'resume');
      assert.ok(resume, 'resume sent on the new connection');
      // Signed in as a guest account: the session finds the seat, the token stays home.
      assert.ok(token, 'the seat token is kept');
      assert.equal(resume.token, undefined, 'resumed as the account');
      assert.equal(await page.getAttribute('.seat.me', 'data-seat'), seat);
      await page.waitForSelector('#bid-picker:not([hidden])');
      assert.deepEqual(await handCards(page), cards);

      // Touch: bid and play by tapping.
      await page.tap('.bid-btn[data-bid="4"]');
      await page.tap('.bid-confirm');
      assert.equal(await waitTurnOrScoring(page), 'turn');
      const legal = await page.$$eval('#hand .card.legal', (els) => els.map((e) => e.dataset.card));
      await page.tap(`#hand .card[data-card="${legal[0]}"]`);
      await page.waitForSelector(`#hand .card[data-card="${legal[0]}"]`, { state: 'detached' });
      assert.ok(routes[1].sent.some((m) => m.type === 'bid' && m.bid === 4));
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal scroll on a phone');
      p.assertClean();
    } finally {
      await p.close();
    }
  });

  it('explains a refused card, keeps the seat and hand across a reload, and lets a spectator watch without cards', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url);
    const { page } = p;
    let watcher = null;
    try {
      const id = await createFromLobby(page, { player: 'Bo', table: 'Refusals' });
      const mySeat = await page.getAttribute('.seat.me', 'data-seat');
      await fillBotsAndStart(page);
      await bid(page, 2);

      // Play until a turn with a card the table will not take, then tap it.
      let refused = false;
      for (let i = 0; i < 13 && !refused; i++) {
        const what = await waitTurnOrScoring(page);
        assert.equal(what, 'turn');
        const illegal = await page.$$eval('#hand.my-turn .card.illegal', (els) => els.map((e) => e.dataset.card));
        if (illegal.length) {
          const before = await handCards(page);
          const errorsBefore = p.rec.received.filter((m) => m.type === 'error').length;
          await page.click(`#hand .card[data-card="${illegal[0]}"]`);
          await page.waitForSelector('#refusal:not([hidden])');
          const shown = (await page.textContent('#refusal')).trim();
          const errors = p.rec.received.filter((m) => m.type === 'error');
          assert.equal(errors.length, errorsBefore + 1);
          const err = errors.at(-1);
          assert.ok(['must_follow_suit', 'spades_not_broken'].includes(err.code), err.code);
          // The player reads the rule in a sentence, the tutorial's words
          // (not the server's message, which is for client authors).
          assert.notEqual(shown, err.message);
          if (err.code === 'must_follow_suit') {
            const led = err.message.match(/\((\w+)\)/)[1];
            assert.equal(shown, `You must follow suit: ${led} were led and you hold ${led}. Only a player with no ${led} may play another suit.`);
            const legal = await page.$$eval('#hand .card.legal', (els) => els.map((e) => e.dataset.card));
            assert.ok(legal.every((c) => SUIT[c[1]] === led), 'the legal cards follow the led suit');
          } else {
            assert.equal(shown, 'Spades are not broken yet: no spade may be led until one has been played on another suit (unless you hold only spades).');
          }
          assert.deepEqual(await handCards(page), before, 'the refused card stays in the hand');
          assert.equal(await page.locator('.hand.my-turn').count(), 1, 'still the player\'s turn');
          refused = true;
        } else {
          const legal = await page.$$eval('#hand .card.legal', (els) => els.map((e) => e.dataset.card));
          await playCard(page, legal[0]);
        }
      }
      assert.ok(refused, 'a turn with an illegal card came up');

      // Reload mid-hand: same seat, same hand, resumed as the account (no token sent).
      const cards = await handCards(page);
      const token = await page.evaluate((t) => JSON.parse(localStorage.getItem(`spades.v1.seat.${t}`)).token, id);
      const sentBefore = p.rec.sent.length;
      await page.reload();
      await page.waitForSelector('.hand.my-turn .card.legal');
      assert.deepEqual(await handCards(page), cards);
      assert.equal(await page.getAttribute('.seat.me', 'data-seat'), mySeat);
      const resume = p.rec.sent.slice(sentBefore).find((m) => m.type === 'resume');
      assert.ok(resume, 'the client sent resume after the reload');
      assert.ok(token, 'the seat token is kept');
      assert.equal(resume.token, undefined, 'resumed as the account');
      assert.ok(p.rec.received.some((m) => m.type === 'resumed' && m.seat === mySeat));
      assert.equal(await page.locator('dialog#hand-scoring').count(), 0, 'no scoring popup after a reload');

      // A second browser (phone width) watches from the lobby and sees no hand.
      watcher = await openPage(browser, stack.url, { viewport: { width: 360, height: 740 }, hasTouch: true });
      const w = watcher.page;
      await w.goto('/');
      await w.fill('#player-name', 'Cy');
      const item = w.locator(`.table-item[data-table="${id}"]`);
      await item.waitFor();
      await item.locator('.btn-watch').click();
      await w.waitForSelector('.table-screen[data-role="spectator"] .seat .seat-name');
      assert.ok(watcher.rec.received.some((m) => m.type === 'watching'));
      assert.equal(await w.locator('#hand .card').count(), 0, 'a spectator sees no card of any hand');
      assert.equal(await w.isVisible('#hand'), false);
      assert.match(await w.textContent('.watch-note'), /watching/i);
      const views = watcher.rec.views;
      assert.ok(views.length > 0 && views.every((m) => m.view.you === null && m.view.game.hand === null));
      assert.ok(watcher.rec.received.every((m) => m.type !== 'change' || !('hand' in m)), 'no change frame brings a spectator cards');
      const names = await w.$$eval('.seat .seat-name', (els) => els.map((e) => e.textContent));
      assert.ok(names.some((n) => n.startsWith('Bo')), names.join());
      // Phone width: nothing sticks out sideways.
      assert.ok(await w.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal scroll at 360 px');
      // The spectator sees the player's card land on the table.
      await w.evaluate(() => {
        window.seenOnTable = new Set();
        const box = document.querySelector('.trick-box');
        const note = () => box.querySelectorAll('.card').forEach((c) => window.seenOnTable.add(c.dataset.card));
        new MutationObserver(note).observe(box, { childList: true, subtree: true });
      });
      const legal = await page.$$eval('#hand .card.legal', (els) => els.map((e) => e.dataset.card));
      await playCard(page, legal[0]);
      await w.waitForFunction((c) => window.seenOnTable.has(c), legal[0]);
      await w.waitForTimeout(300); // let the card's arrival animation end
      await shot(w, 'spectator-phone.png');
      p.assertClean();
      watcher.assertClean();
    } finally {
      await watcher?.close();
      await p.close();
    }
  });
}
