// Checks a finished match's record against its fair-deal commitment, in the
// page, with WebCrypto: the same checks, by the same names, as the
// `spades-verify` command (crates/client/src/verify.rs). The scheme is
// described in docs/fairness.md.

import { sha256Bytes } from './sha256.js';

const SEATS = ['north', 'east', 'south', 'west'];
const RANKS = '23456789TJQKA';
const SUITS = 'CDHS';
const enc = new TextEncoder();

/** True when this page can verify (WebCrypto needs https or localhost). */
export const canVerify = () => !!globalThis.crypto?.subtle;

function hexToBytes(hex) {
  if (typeof hex !== 'string' || !/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const toHex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');

/** The 16 bytes of a UUID, most significant first. */
function uuidBytes(id) {
  const hex = String(id).replace(/-/g, '');
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * A player's commitment to its seed (hex) at `seat` of `table`:
 * SHA-256("spades-seed/v1" ‖ table id ‖ seat index ‖ seed), as 64 hex
 * digits (docs/fairness.md). Plain JavaScript: it works on http pages too.
 */
export function seedCommitment(table, seat, seedHex) {
  const seed = hexToBytes(seedHex);
  if (!seed) return null;
  return toHex(sha256Bytes(concat(enc.encode('spades-seed/v1'), uuidBytes(table), new Uint8Array([SEATS.indexOf(seat)]), seed)));
}

export async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
}

async function hmacKey(keyBytes) {
  return crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

async function hmac(key, bytes) {
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, bytes));
}

const cardName = (index) => RANKS[index % 13] + SUITS[Math.floor(index / 13)];

/**
 * The fair deals of the match at `table` from its seeds (hex strings;
 * `clientSeeds[i]` null where seat i gave none): `{firstDealer, deal(n,
 * dealer) -> [north, east, south, west] card-name arrays, sorted}`.
 */
export async function fairDeals(table, serverSeedHex, clientSeedsHex) {
  const server = hexToBytes(serverSeedHex);
  const parts = [enc.encode('spades-fair/v1'), uuidBytes(table)];
  for (const c of clientSeedsHex) {
    parts.push(c == null ? new Uint8Array([0]) : concat(new Uint8Array([1]), hexToBytes(c)));
  }
  const matchKey = await hmac(await hmacKey(server), concat(...parts));
  const key = await hmacKey(matchKey);
  const firstDealer = SEATS[(await hmac(key, enc.encode('first-dealer')))[0] >> 6];

  async function deal(handNumber, dealer) {
    const words = [];
    let block = 0;
    const next = async () => {
      if (!words.length) {
        const msg = new Uint8Array(10);
        msg.set(enc.encode('deal'));
        const view = new DataView(msg.buffer);
        view.setUint16(4, handNumber);
        view.setUint32(6, block++);
        const h = new DataView((await hmac(key, msg)).buffer);
        for (let i = 0; i < 8; i++) words.push(h.getUint32(4 * i));
      }
      return words.shift();
    };
    const deck = Array.from({ length: 52 }, (_, i) => i);
    for (let i = 51; i >= 1; i--) {
      const n = i + 1;
      const limit = 2 ** 32 - (2 ** 32 % n);
      let w;
      do w = await next(); while (w >= limit);
      const j = w % n;
      [deck[i], deck[j]] = [deck[j], deck[i]];
    }
    const hands = [[], [], [], []];
    const d = SEATS.indexOf(dealer);
    deck.forEach((card, k) => hands[(d + 1 + k) % 4].push(card));
    return hands.map((h) => h.sort((a, b) => a - b).map(cardName));
  }
  return { firstDealer, deal };
}

/**
 * Verifies a match record (`GET /api/v1/matches/{id}`). `expect` may hold
 * the `commitment` this browser was shown and the `seed` it sent.
 * Resolves to `{passed, checks: [{name, passed, detail}]}`.
 */
export async function verifyRecord(record, expect = {}) {
  const checks = [];
  const check = (name, passed, detail) => checks.push({ name, passed: !!passed, detail });
  const done = () => ({ passed: checks.every((c) => c.passed), checks });
  const fair = record?.fair;
  if (!fair || fair.version !== 1) {
    check('fair', false, 'the record has no fair-deal seeds of version 1');
    return done();
  }
  check('fair', true, 'fair-deal version 1');
  if (!fair.server_seed) {
    check('revealed', false, 'the server seed is revealed only once the match is over');
    return done();
  }
  check('revealed', true, 'the server seed is revealed');
  const server = hexToBytes(fair.server_seed);
  const commitment = String(fair.commitment).toLowerCase();
  const computed = server ? toHex(await sha256(server)) : '(unreadable seed)';
  check('commitment', computed === commitment, computed === commitment
    ? `SHA-256 of the server seed is the published commitment ${commitment}`
    : `SHA-256 of the server seed is ${computed}, not the published commitment ${commitment}`);
  if (expect.commitment) {
    const ok = expect.commitment.toLowerCase() === commitment;
    check('your commitment', ok, ok
      ? 'the commitment is the one shown before your seed was sent'
      : `you were shown the commitment ${expect.commitment}, the record has ${commitment}`);
  }
  const seeds = (fair.client_seeds || []).map((s) => (s == null ? null : String(s).toLowerCase()));
  const commitments = (fair.client_commitments || [null, null, null, null]).map((c) => (c == null ? null : String(c).toLowerCase()));
  if (expect.seed) {
    const mine = expect.seed.toLowerCase();
    const at = seeds.indexOf(mine);
    const seat = expect.seat;
    if (!seat) {
      check('your seed', false, 'say which seat you played: a seed counts only at its own seat');
    } else if (seeds[SEATS.indexOf(seat)] === mine) {
      check('your seed', true, `your seed is ${seat}'s, your seat's`);
    } else {
      check('your seed', false, at >= 0 ? `your seed is at ${SEATS[at]}, not at your seat ${seat}` : `${seat}, your seat, does not have the seed you sent`);
    }
  }
  // Every seed is its own seat's: it matches the commitment that seat made
  // before any seed was shown. A commitment without a seed was withheld.
  const wrong = [];
  const withheld = [];
  SEATS.forEach((seat, i) => {
    if (seeds[i] != null) {
      if (commitments[i] == null || seedCommitment(record.table, seat, seeds[i]) !== commitments[i]) wrong.push(seat);
    } else if (commitments[i] != null) {
      withheld.push(seat);
    }
  });
  check('seat seeds', wrong.length === 0, wrong.length
    ? `the seeds of ${wrong.join(', ')} do not match their seats' commitments`
    : 'every seed matches the commitment its own seat made before any seed was shown'
      + (withheld.length ? ` (${withheld.join(', ')} committed and did not reveal: dealt without a seed)` : ''));
  // Bots send no seed: a seed at a bot's seat came from the server.
  const bots = (record.seats || [])
    .filter((s) => s.kind === 'bot')
    .filter((s) => seeds[SEATS.indexOf(s.seat)] != null || commitments[SEATS.indexOf(s.seat)] != null)
    .map((s) => s.seat);
  check('bots', bots.length === 0, bots.length
    ? `a bot's seat has a seed, which only the server could have put there: ${bots.join(', ')}`
    : "no bot's seat has a seed");
  // The record holds every hand, 1 to the last one played, and its scores
  // are the last hand's.
  const recordHands = record.hands || [];
  const playedHands = record.finished
    ? (record.result?.hands_played ?? 0)
    : (record.current_hand ? record.current_hand.hand_number - 1 : recordHands.length);
  const numbersOk = recordHands.every((h, i) => h.hand_number === i + 1);
  const lastScores = recordHands.length ? recordHands[recordHands.length - 1].teams.map((t) => t.score) : [0, 0];
  const scoresOk = lastScores.join() === (record.scores || []).join()
    && (!record.result || record.result.scores.join() === (record.scores || []).join());
  const complete = recordHands.length === playedHands && numbersOk && scoresOk && (playedHands > 0 || !record.finished);
  check('complete', complete, complete
    ? `the record holds every hand, 1 to ${playedHands}, and its scores are the last hand's`
    : !numbersOk ? "the record's hands are not numbered 1, 2, 3 … in order"
      : !scoresOk ? "the record's scores are not those of its last hand"
        : `the record holds ${recordHands.length} hands of the ${playedHands} played`);
  if (!server || seeds.length !== 4 || seeds.some((s) => s != null && !hexToBytes(s))) {
    check('seeds', false, 'the seeds in the record are not readable');
    return done();
  }
  const deals = await fairDeals(record.table, fair.server_seed, seeds);
  const hands = record.hands || [];
  if (hands.length) {
    check('first dealer', hands[0].dealer === deals.firstDealer,
      `the seeds make ${deals.firstDealer} the first dealer; the record says ${hands[0].dealer}`);
  }
  for (let i = 0; i < hands.length; i++) {
    const h = hands[i];
    const n = h.hand_number;
    const dealer = SEATS[(SEATS.indexOf(deals.firstDealer) + i) % 4];
    if (n !== i + 1 || h.dealer !== dealer) {
      check(`hand ${n}`, false, `hand ${n} should be hand ${i + 1} dealt by ${dealer}`);
      continue;
    }
    const dealt = await deals.deal(n, dealer);
    const played = [[], [], [], []];
    for (const p of h.plays || []) played[SEATS.indexOf(p.seat)]?.push(p.card);
    const cardIndex = (c) => SUITS.indexOf(c[1]) * 13 + RANKS.indexOf(c[0]);
    const wrong = SEATS.filter((_, s) => {
      const mine = played[s].slice().sort((a, b) => cardIndex(a) - cardIndex(b));
      return mine.join(' ') !== dealt[s].join(' ');
    });
    const ok = wrong.length === 0 && (h.plays || []).length === 52;
    check(`hand ${n}`, ok, ok
      ? `every seat played exactly the 13 cards the seeds dealt it (dealer ${dealer})`
      : `the cards played differ from the seeds' deal for ${wrong.join(', ')}`);
  }
  return done();
}

/** 32 fresh random bytes as 64 hex digits: this browser's seed. */
export function randomSeed() {
  return toHex(crypto.getRandomValues(new Uint8Array(32)));
}
