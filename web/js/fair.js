// Fair deals at the table: once it has seen the lobby's commitment this
// browser commits to a seed of its own (its hash only), reveals the seed
// when the owner's start closes the commitments, remembers what it saw and
// sent, and checks the deals when the match is over ("Verify the deals").
// See docs/fairness.md.

import { showDialog } from './dialogs.js';
import { h, replace } from './dom.js';
import { SEATS } from './rules.js';

const KEY = 'spades.v1.fair.';
const inFlight = new Set();

// The verifier (verify.js, with its SHA-256) is fetched when first needed:
// a seat to commit a seed for, or a match to check.
let verifier = null;
let verifierLoad = null;
/** Per table, the latest view that waits for the verifier, and its connection. */
const waiting = new Map();
function loadVerifier() {
  verifierLoad ??= import('./verify.js').then((m) => {
    verifier = m;
    return m;
  });
  return verifierLoad;
}

function remembered(table) {
  try {
    return JSON.parse(localStorage.getItem(KEY + table) || 'null');
  } catch {
    return null;
  }
}

function remember(table, value) {
  try {
    localStorage.setItem(KEY + table, JSON.stringify(value));
  } catch {
    // Private mode: the deals can still be verified, without "your seed".
  }
}

/**
 * Called with every view. In the lobby, a seated player whose commitment is
 * not (or no longer) the one counted for the current server commitment
 * commits to a fresh seed; once the start asks for the seeds
 * (`fair.reveal_by`), it reveals the seed it committed to. Never waits: the
 * table deals with whatever seeds are revealed when the reveals close.
 * @param {string} table
 * @param {object} view
 * @param {{request: (msg: object) => Promise<object>}} conn
 */
export function contributeSeed(table, view, conn) {
  const fair = view?.fair;
  if (!fair || fair.fixed || view.phase !== 'lobby' || !view.you || inFlight.has(table)) return;
  if (!verifier) {
    // Once it is in, the latest view of the table again.
    if (!waiting.has(table)) {
      loadVerifier().then(() => {
        const [v, c] = waiting.get(table);
        waiting.delete(table);
        contributeSeed(table, v, c);
      }, () => waiting.delete(table));
    }
    waiting.set(table, [view, conn]);
    return;
  }
  const { randomSeed, seedCommitment } = verifier;
  const i = SEATS.indexOf(view.you);
  const mine = remembered(table);
  const committed = mine && mine.commitment === fair.commitment && mine.seat === view.you
    && fair.client_commitments?.[i] === mine.seedCommitment;
  const send = (msg, after) => {
    inFlight.add(table);
    conn.request(msg).then(after, () => {}).finally(() => inFlight.delete(table));
  };
  if (fair.reveal_by != null) {
    // The commitments are closed: reveal ours, once.
    if (committed && fair.client_seeds?.[i] == null) send({ type: 'seed', seed: mine.seed }, () => {});
    return;
  }
  if (committed) return;
  const seed = randomSeed();
  const commitment = seedCommitment(table, view.you, seed);
  send({ type: 'commit_seed', commitment },
    () => remember(table, { commitment: fair.commitment, seed, seat: view.you, seedCommitment: commitment }));
}

/** Fetches the match's record, checks every deal and shows what passed. */
export async function showVerification(table) {
  const holder = h('div', { class: 'verify-holder' }, h('p', { class: 'muted' }, 'Checking the deals…'));
  const shown = showDialog({ id: 'verify', className: 'dialog-wide', title: 'Verify the deals', body: holder });
  replace(holder, await verificationReport(table));
  return shown;
}

async function verificationReport(table) {
  let canVerify;
  let verifyRecord;
  try {
    ({ canVerify, verifyRecord } = await loadVerifier());
  } catch (err) {
    return h('p', { class: 'field-error' }, `Could not load the verifier: ${err.message}`);
  }
  if (!canVerify()) {
    return h('p', { class: 'field-error' },
      'This browser offers its cryptography only on https or localhost pages: check the match with spades-verify instead.');
  }
  let record;
  try {
    const resp = await fetch(`/api/v1/matches/${encodeURIComponent(table)}`, { cache: 'no-store' });
    if (!resp.ok) throw new Error(`HTTP ${resp.status}`);
    record = await resp.json();
  } catch (err) {
    return h('p', { class: 'field-error' }, `Could not load the match record: ${err.message}`);
  }
  const mine = remembered(table);
  const report = await verifyRecord(record, mine ? { commitment: mine.commitment, seed: mine.seed, seat: mine.seat } : {});
  const failed = report.checks.filter((c) => !c.passed).length;
  const headline = report.passed
    ? `All ${report.checks.length} checks passed: every deal came from the server seed committed to before the players sent their seeds, and from those seeds. Nobody, not even the server, chose the cards.`
    : `${failed} of ${report.checks.length} checks failed: these deals are not proven fair.`;
  return [
    h('p', { class: `verify-result ${report.passed ? 'verify-pass' : 'verify-fail'}`, id: 'verify-result', role: 'status' }, headline),
    // A scroll region of its own: focusable, so the keyboard can scroll it.
    h('div', { class: 'verify-scroll', id: 'verify-scroll', role: 'region', tabindex: 0, 'aria-label': `The ${report.checks.length} checks` },
      h('ul', { class: 'verify-checks' }, report.checks.map((c) =>
        h('li', { class: c.passed ? 'pass' : 'fail', dataset: { check: c.name, passed: String(c.passed) } },
          h('strong', {}, `${c.passed ? '✓' : '✗'} ${c.name}`), `: ${c.detail}`)))),
    h('p', { class: 'muted' }, 'The same checks: spades-verify with this match\'s record (see docs/fairness.md).'),
  ];
}
