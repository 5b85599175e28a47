// A restart mid-match: the server keeps its event log in SQLite, is killed
// (SIGKILL, then SIGTERM) while the player is on turn and started again on
// the same port and data directory. The page must reconnect by itself as
// its guest account (the session, kept in the same store, outlives the
// restart: no seat token is sent), show the table as the server has it, and let the player
// play on: the card appears and the bots answer.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { bid, createFromLobby, fillBotsAndStart, openPage, playCard, shot, startDurableStack, tableStatus } from '../lib/harness.mjs';

// Bots slow enough that a card played stays on the table for a moment, and
// a short shutdown grace so that SIGTERM does not hold the test up.
export const RESTART_ENV = { SPADES_TABLES__BOT_DELAY_MS: '250', SPADES_SERVER__SHUTDOWN_GRACE_SECS: '2' };

const SEATS = ['north', 'east', 'south', 'west'];

/** Polls `fn` until it returns a truthy value; returns the last value on timeout. */
async function waitFor(fn, ms, every = 100) {
  const until = Date.now() + ms;
  let last;
  for (;;) {
    last = await fn();
    if (last || Date.now() > until) return last;
    await new Promise((r) => setTimeout(r, every));
  }
}

/** Waits until the player is on turn to play and has a legal card; returns the first legal one. */
async function waitPlayTurn(page, timeout = 20000) {
  await page.waitForSelector('.hand.my-turn .card.legal', { timeout });
  return page.$eval('.hand.my-turn .card.legal', (e) => e.dataset.card);
}

/** What the page shows: the hand, the seat on turn, each seat's bid line, the trick's cards. */
function pageState(page) {
  return page.evaluate(() => ({
    hand: [...document.querySelectorAll('#hand .card')].map((e) => e.dataset.card).sort(),
    turn: document.querySelector('.table-screen .seat.on-turn')?.dataset.seat ?? null,
    bids: ['north', 'east', 'south', 'west'].map((s) => document.querySelector(`.table-screen .seat[data-seat="${s}"] .seat-bid`)?.textContent ?? ''),
    trick: [...document.querySelectorAll('.trick-box:not(.mini) .card')].map((e) => e.dataset.card).sort(),
    net: document.getElementById('net')?.dataset.status ?? null,
  }));
}

/** The seat's bid line as the page writes it, from the server's bids and tricks. */
function bidLine(b, won) {
  if (b == null) return '';
  return `${b === 0 ? 'nil' : `bid ${b}`} · won ${won}`;
}

/**
 * The complete views the page's sockets received (snapshots, and changes
 * applied to them), in order, with their frame's index in `received`.
 */
function views(rec) {
  return rec.views;
}

/**
 * Waits until the page shows what the server has: the seat on turn and every
 * bid and trick count as in the REST status, the hand as in the latest view
 * the server sent this page. Fails with both sides when they never agree.
 */
async function expectPageMatchesServer(page, api, id, rec, why) {
  let last = null;
  const agree = await waitFor(async () => {
    const status = await tableStatus(api, id);
    const latest = views(rec).at(-1)?.view;
    const shown = await pageState(page);
    const want = {
      turn: status.turn,
      bids: SEATS.map((_, i) => bidLine(status.bids[i], status.tricks_won[i])),
      hand: [...(latest?.game?.hand ?? [])].sort(),
    };
    last = { shown, want };
    return shown.turn === want.turn
      && JSON.stringify(shown.bids) === JSON.stringify(want.bids)
      && JSON.stringify(shown.hand) === JSON.stringify(want.hand);
  }, 10000);
  assert.ok(agree, `${why}: the page does not show the server's table\n${JSON.stringify(last, null, 1)}`);
}

export function restartTests(suite) {
  it('keeps up when the server is killed and started again mid-match (SIGKILL, then SIGTERM)', async () => {
    const stack = await startDurableStack(RESTART_ENV);
    const p = await openPage(suite.browser, stack.url);
    const { page, rec } = p;
    try {
      const id = await createFromLobby(page, { player: 'Rex', table: 'Restarts' });
      const seat = await page.getAttribute('.seat.me', 'data-seat');
      const token = await page.evaluate((t) => JSON.parse(localStorage.getItem(`spades.v1.seat.${t}`)).token, id);
      assert.ok(token, 'the page keeps its seat token');
      await fillBotsAndStart(page);
      await bid(page, 3);
      // A few moves before the first restart.
      for (let i = 0; i < 2; i++) await playCard(page, await waitPlayTurn(page));

      for (const signal of ['SIGKILL', 'SIGTERM']) {
        // The table waits for the player: nothing changes while the server is down.
        await waitPlayTurn(page);
        const before = await tableStatus(stack.api, id);
        assert.equal(before.turn, seat);
        const playedBefore = before.tricks_won.reduce((a, b) => a + b, 0);
        const lastSeqBefore = views(rec).at(-1).seq;
        const sentBefore = rec.sent.length;
        const receivedBefore = rec.received.length;

        await stack.restart(signal);

        // The page reconnects by itself and resumes its seat as the account.
        const resumed = await waitFor(() => rec.received.slice(receivedBefore).find((m) => m.type === 'resumed'), 25000);
        assert.ok(resumed, `${signal}: the page resumed its seat after the restart`);
        assert.equal(resumed.seat, seat);
        const resumes = rec.sent.slice(sentBefore).filter((m) => m.type === 'resume');
        assert.ok(resumes.length >= 1 && resumes.every((m) => m.token === undefined && m.table === id), `${signal}: resumed as the account, no token sent`);
        assert.equal(await waitFor(async () => (await pageState(page)).net === 'open', 5000), true, `${signal}: the page says it is connected`);
        const after = await tableStatus(stack.api, id);
        assert.equal(after.turn, seat, `${signal}: the restored table still waits for the player`);
        assert.deepEqual(after.bids, before.bids, `${signal}: the restored bids`);
        assert.deepEqual(after.tricks_won, before.tricks_won, `${signal}: the restored tricks`);
        await expectPageMatchesServer(page, stack.api, id, rec, `${signal}, after the restart`);

        // The next move: the card leaves the hand, shows on the table, the
        // server has it and the bots answer until the player is on turn again.
        const card = await waitPlayTurn(page, 5000);
        const seqs = () => views(rec).filter((v) => v.i >= receivedBefore).map((v) => v.seq);
        try {
          await page.click(`#hand .card[data-card="${card}"]`);
          await page.waitForSelector(`.trick-box:not(.mini) .card[data-card="${card}"]`, { timeout: 10000 });
          await page.waitForFunction((c) => !document.querySelector(`#hand .card[data-card="${c}"]`), card, { timeout: 5000 });
        } catch (e) {
          await shot(page, `restart-${signal}-stale.png`);
          assert.fail(`${signal}: the page did not show the player's card ${card} after the restart `
            + `(views before the restart up to seq ${lastSeqBefore}, after it: seq ${seqs().join(',')}): ${e.message}`);
        }
        const moved = await waitFor(async () => {
          const s = await tableStatus(stack.api, id);
          return s.turn === seat && s.tricks_won.reduce((a, b) => a + b, 0) > playedBefore ? s : null;
        }, 15000);
        assert.ok(moved, `${signal}: the bots finished the trick and the player is on turn again`);
        await waitPlayTurn(page, 10000);
        await expectPageMatchesServer(page, stack.api, id, rec, `${signal}, after the next trick`);
        assert.ok(seqs()[0] > lastSeqBefore, `${signal}: seq keeps growing across the restart (${lastSeqBefore} → ${seqs().join(',')})`);
      }
      await shot(page, 'after-restarts.png');
      p.assertClean();
    } catch (e) {
      console.log(stack.server.log().split('\n').slice(-30).join('\n'));
      throw e;
    } finally {
      await p.close();
      await stack.stop();
    }
  });
}
