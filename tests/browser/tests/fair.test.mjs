// Fair deals in the browser: the page commits to a seed of its own once it
// has seen the lobby's commitment and reveals it when the start asks, and "Verify the deals" in the match-over
// dialog checks every deal with WebCrypto. The page's verifier and the
// `spades-verify` command must agree, check by check, on the real record
// and on records tampered with after the match.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { createFromLobby, fillBotsAndStart, openPage, shot, tableStatus } from '../lib/harness.mjs';
import { REPO_ROOT } from '../lib/server.mjs';

/** The command: $SPADES_VERIFY_BIN, else target/debug/spades-verify (built when missing). */
function verifyBinary() {
  const bin = path.resolve(REPO_ROOT, process.env.SPADES_VERIFY_BIN || 'target/debug/spades-verify');
  if (!existsSync(bin)) {
    execFileSync('cargo', ['build', '--locked', '-p', 'spades-client', '--bin', 'spades-verify'], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
  return bin;
}

/** Runs spades-verify --json on a record; returns {code, report}. */
function runVerify(bin, dir, name, record) {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(record));
  const out = spawnSync(bin, ['--json', file], { encoding: 'utf8' });
  assert.ok(out.status === 0 || out.status === 1, `spades-verify failed to run: ${out.status} ${out.stderr}`);
  return { code: out.status, report: JSON.parse(out.stdout) };
}

/** What two verifiers must agree on: each check's name and outcome. */
const outcome = (report) => ({ passed: report.passed, checks: report.checks.map((c) => [c.name, c.passed]) });

/** The other hex digit in the same place: a seed altered by one digit. */
function altered(hex) {
  const last = hex.at(-1) === '0' ? '1' : '0';
  return hex.slice(0, -1) + last;
}

export function fairTests(suite) {
  it('commits to its own seed, reveals it at the start, and verifies the deals as spades-verify does, on good and tampered records', async () => {
    const { browser, fastStack: stack } = suite;
    const bin = verifyBinary();
    const p = await openPage(browser, stack.url);
    const { page, rec } = p;
    const dir = mkdtempSync(path.join(tmpdir(), 'spades-fair-'));
    try {
      const id = await createFromLobby(page, { player: 'Vera', table: 'Fair deals', options: { match_end: 'hands:5' } });
      // Once the lobby's commitment has been shown the page commits to a
      // seed of its own: its hash, bound to the table and the seat.
      await page.waitForFunction(() => localStorage.getItem(`spades.v1.fair.${location.hash.split('/')[2]}`));
      const committed = rec.sent.find((m) => m.type === 'commit_seed');
      assert.match(committed?.commitment ?? '', /^[0-9a-f]{64}$/, 'the page committed to a seed');
      assert.equal(rec.sent.find((m) => m.type === 'seed'), undefined, 'no seed leaves the page before the start');
      const lobby = await tableStatus(stack.api, id);
      const seatIndex = lobby.seats.findIndex((s) => s.name === 'Vera');
      assert.notEqual(seatIndex, -1, `Vera's seat is in the table's status: ${JSON.stringify(lobby.seats)}`);
      assert.equal(lobby.fair.client_commitments[seatIndex], committed.commitment);
      assert.deepEqual(lobby.fair.client_seeds, [null, null, null, null], 'no seed is shown before the start');
      assert.equal(lobby.fair.fixed, false);
      assert.equal(lobby.fair.server_seed, null, 'the server seed stays secret');
      const viewBefore = rec.views.find((v) => v.view.fair);
      assert.equal(viewBefore.view.fair.commitment, lobby.fair.commitment, 'the commitment was made after the server commitment was shown');

      await fillBotsAndStart(page);
      // The start closes the commitments; the page then reveals its seed,
      // the one it committed to (SHA-256 of "spades-seed/v1", the table's
      // 16 bytes, the seat's index and the seed).
      let sent;
      for (const until = Date.now() + 10_000; !(sent = rec.sent.find((m) => m.type === 'seed'));) {
        assert.ok(Date.now() < until, 'the page revealed its seed');
        await page.waitForTimeout(50);
      }
      assert.match(sent.seed, /^[0-9a-f]{64}$/, 'a seed of 32 random bytes');
      const expected = createHash('sha256')
        .update('spades-seed/v1')
        .update(Buffer.from(id.replaceAll('-', ''), 'hex'))
        .update(Buffer.from([seatIndex]))
        .update(Buffer.from(sent.seed, 'hex'))
        .digest('hex');
      assert.equal(expected, committed.commitment, 'the revealed seed is the one committed to');
      const revealAsked = rec.views.find((v) => v.view.fair?.reveal_by != null);
      assert.ok(revealAsked, 'a view asked the seats to reveal');

      // Nobody plays for Vera: the clock, then the autopilot, play the match
      // out. Each hand's scoring is closed until the match-over dialog shows.
      const until = Date.now() + 120_000;
      while (!(await page.isVisible('dialog#match-over[open]'))) {
        assert.ok(Date.now() < until, 'the match did not end');
        if (await page.isVisible('dialog#hand-scoring[open] button[data-action="ok"]')) {
          await page.click('dialog#hand-scoring[open] button[data-action="ok"]').catch(() => {});
        }
        await page.waitForTimeout(200);
      }
      await page.click('dialog#match-over button[data-action="verify"]');
      await page.waitForSelector('#verify-result', { timeout: 20000 });
      const headline = await page.textContent('#verify-result');
      assert.match(headline, /^All \d+ checks passed: every deal came from the server seed committed to/);
      const shown = await page.$$eval('.verify-checks li', (els) => els.map((e) => [e.dataset.check, e.dataset.passed === 'true']));
      const names = shown.map(([n]) => n);
      assert.deepEqual(names.slice(0, 9),
        ['fair', 'revealed', 'commitment', 'your commitment', 'your seed', 'seat seeds', 'bots', 'complete', 'first dealer']);
      assert.ok(names.filter((n) => n.startsWith('hand ')).length >= 5, names.join(', '));
      assert.ok(shown.every(([, ok]) => ok));
      await shot(page, 'verify-deals.png');

      // The page's verifier and the command, on the same records.
      const record = await (await fetch(`${stack.api}/api/v1/matches/${id}`)).json();
      assert.equal(record.fair.commitment, lobby.fair.commitment, 'the commitment never changed');
      // The server seed reached the page only once the match was over: in
      // the frame (a snapshot or a change) that made the view a finished one.
      const secret = record.fair.server_seed;
      const viewAfter = new Map(rec.views.map((v) => [v.i, v.view]));
      const early = rec.received.filter((m, i) => JSON.stringify(m).includes(secret) && viewAfter.get(i)?.phase !== 'finished');
      assert.deepEqual(early, [], 'a frame showed the server seed before the end');
      assert.ok(rec.views.some((v) => v.view.fair?.server_seed === secret), 'the last view reveals it');
      const badServer = structuredClone(record);
      badServer.fair.server_seed = altered(record.fair.server_seed);
      const badClient = structuredClone(record);
      badClient.fair.client_seeds[seatIndex] = altered(sent.seed);
      // A record cut short, one with no hands, and one with a seed at a
      // bot's seat (only the server could have put it there).
      const lastCut = structuredClone(record);
      lastCut.hands.pop();
      const noHands = structuredClone(record);
      noHands.hands = [];
      const botSeed = structuredClone(record);
      const botIndex = ['north', 'east', 'south', 'west'].indexOf(record.seats.find((s) => s.kind === 'bot').seat);
      botSeed.fair.client_seeds[botIndex] = sent.seed;
      const records = {
        good: record, 'server-seed': badServer, 'client-seed': badClient,
        'last-hand-cut': lastCut, 'no-hands': noHands, 'bot-seed': botSeed,
      };
      const inPage = await page.evaluate(async (all) => {
        const { verifyRecord } = await import('/js/verify.js');
        const out = {};
        for (const [k, r] of Object.entries(all)) out[k] = await verifyRecord(r);
        return out;
      }, records);
      for (const [name, r] of Object.entries(records)) {
        const { code, report } = runVerify(bin, dir, `${name}.json`, r);
        assert.deepEqual(outcome(inPage[name]), outcome(report), `${name}: the page and spades-verify disagree`);
        assert.equal(code, name === 'good' ? 0 : 1, name);
        assert.equal(report.passed, name === 'good', name);
      }
      const failed = (r) => r.checks.filter((c) => !c.passed).map((c) => c.name);
      assert.ok(failed(inPage['server-seed']).includes('commitment'));
      assert.equal(failed(inPage['client-seed']).filter((n) => n.startsWith('hand ')).length, record.hands.length,
        'another seed for one seat changes every deal');
      assert.ok(failed(inPage['last-hand-cut']).includes('complete'), 'a missing last hand is seen');
      assert.ok(failed(inPage['no-hands']).includes('complete'), 'a record without hands is seen');
      assert.ok(failed(inPage['bot-seed']).includes('bots'), "a seed at a bot's seat is seen");
      p.assertClean();
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await p.close();
    }
  });
}
