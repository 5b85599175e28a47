// Protocol 2 in the client (web/js/lean.js): change frames applied to the
// view give the server's snapshots, and the connection's view keeper asks
// for a snapshot once when it misses a change. No browser and no server:
//
//   node tests/browser/lean.test.mjs
//
// target/lean-frames.json is the server's fixture (written by the Rust test
// table::tests::lean::frames_for_the_web_client_test at every `cargo test`,
// or under $CARGO_TARGET_DIR): for each audience, the frames a connection received and
// the snapshot the server would have sent after each. Its absence is a
// failure. LEAN_FRAMES=<file> checks another file of the same format.
// fixtures/lean-frames.sample.json (made by fixtures/make-sample.mjs) is
// checked as well.
//
// The browser runner (run.mjs) runs these tests too.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PROTOCOL, ViewKeeper, applyChange, cardIndex, viewsOf } from '../../web/js/lean.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, '../..');
const FIXTURE = path.join(process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(REPO_ROOT, 'target'), 'lean-frames.json');
const SAMPLE = path.join(HERE, 'fixtures/lean-frames.sample.json');

// ---- helpers -------------------------------------------------------------

/** The paths where `a` and `b` differ (at most `max`), for readable failures. */
function differences(a, b, at = '', out = [], max = 12) {
  if (out.length >= max) return out;
  if (Object.is(a, b)) return out;
  const kind = (x) => (x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x);
  if (kind(a) !== kind(b) || (kind(a) !== 'object' && kind(a) !== 'array')) {
    out.push(`${at || '(top)'}: got ${JSON.stringify(a)}, want ${JSON.stringify(b)}`);
    return out;
  }
  if (kind(a) === 'array' && a.length !== b.length) {
    out.push(`${at}: got ${a.length} entries ${JSON.stringify(a)}, want ${b.length} ${JSON.stringify(b)}`);
    return out;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    const p = kind(a) === 'array' ? `${at}[${k}]` : `${at}.${k}`;
    if (!(k in a)) out.push(`${p}: missing, want ${JSON.stringify(b[k])}`);
    else if (!(k in b)) out.push(`${p}: got ${JSON.stringify(a[k])}, want no such field`);
    else differences(a[k], b[k], p, out, max);
    if (out.length >= max) break;
  }
  return out;
}

function assertSameView(got, want, where) {
  const diff = differences(got, want);
  if (diff.length) assert.fail(`${where}: the view differs from the server's snapshot\n  ${diff.join('\n  ')}`);
  // Exact equality, key order aside (and what the paths above might miss).
  assert.deepStrictEqual(got, want, where);
}

function deepFreeze(x) {
  if (x && typeof x === 'object') {
    Object.freeze(x);
    for (const v of Object.values(x)) deepFreeze(v);
  }
  return x;
}

function loadFixture(file) {
  const data = JSON.parse(readFileSync(file, 'utf8'));
  assert.ok(Array.isArray(data.sequences) && data.sequences.length > 0, `${file}: no "sequences"`);
  return data;
}

/** Checks every sequence of a fixture file: applyChange, then the view keeper. */
function checkFixture(file) {
  const rel = path.relative(REPO_ROOT, file);
  const { sequences } = loadFixture(file);
  let frames = 0;
  let changes = 0;
  sequences.forEach((s, n) => {
    const name = `${rel}, sequence ${n} (${s.audience})`;
    assert.ok(['north', 'east', 'south', 'west', 'spectator'].includes(s.audience), `${name}: audience`);
    assert.ok(s.frames.length > 0, `${name}: no frames`);
    assert.equal(s.snapshots.length, s.frames.length, `${name}: one snapshot per frame`);
    assert.equal(s.frames[0].type, 'view', `${name}: the first frame is a snapshot`);
    // applyChange, frame by frame, on the view before.
    let view = null;
    s.frames.forEach((f, i) => {
      const where = `${name}, frame ${i} (${f.type} seq ${f.seq})`;
      if (f.type === 'view') {
        view = f.view;
      } else {
        assert.equal(f.type, 'change', `${where}: a frame is a view or a change`);
        const before = JSON.stringify(view);
        const next = applyChange(view, f);
        assert.equal(JSON.stringify(view), before, `${where}: applyChange modified its input`);
        view = next;
        changes += 1;
      }
      assertSameView(view, s.snapshots[i], where);
    });
    frames += s.frames.length;
    // The connection's keeper on the same stream: no gap, the same views.
    const syncs = [];
    const keeper = new ViewKeeper(() => syncs.push(1));
    s.frames.forEach((f, i) => {
      const got = keeper.receive(f);
      assert.ok(got, `${name}, frame ${i} (${f.type} seq ${f.seq}): the view keeper dropped it`);
      assert.equal(got.seq, f.seq);
      assertSameView(got.view, s.snapshots[i], `${name}, frame ${i}, through the view keeper`);
    });
    assert.equal(syncs.length, 0, `${name}: the view keeper asked for a sync`);
  });
  return { sequences: sequences.length, frames, changes };
}

// ---- views to apply changes to -------------------------------------------

const SEATS = ['north', 'east', 'south', 'west'];
const RULES = {
  match_end: { target: 500 }, nil: 'hundred', bag_penalty: 'ten_for_hundred',
  failed_nil: 'bags_only', spades_lead: 'after_broken', mercy: false,
};

/** A view in play, trick 4 of hand 3, as North or as a spectator. */
function playingView(you = 'north') {
  return {
    table: '67e55044-10b1-426f-9247-bb680e5fe0c8',
    name: 'Friday night',
    phase: 'playing',
    options: { rules: RULES, tempo: 'normal', spectator_chat: false },
    you,
    seats: SEATS.map((seat) => ({ seat, name: seat.toUpperCase(), kind: 'human', status: 'present', away_until: null, timeouts: 0 })),
    game: {
      viewer: you,
      rules: RULES,
      phase: 'playing',
      hand_number: 3,
      dealer: 'west',
      turn: 'east',
      hand: you ? ['4C', '9C', 'KD', '2H', 'JH', 'AH', '3S', '7S', 'QS'] : null,
      cards_left: [9, 10, 10, 10],
      bids: [3, 2, 0, 4],
      tricks_won: [3, 0, 0, 0],
      trick: { leader: 'north', cards: ['TH'], winner: null },
      last_trick: { leader: 'north', cards: ['AD', '6D', '5D', '8D'], winner: 'north' },
      tricks: [
        { leader: 'north', cards: ['AC', '5C', '2C', '3C'], winner: 'north' },
        { leader: 'north', cards: ['KC', 'QC', '7C', '6C'], winner: 'north' },
        { leader: 'north', cards: ['AD', '6D', '5D', '8D'], winner: 'north' },
      ],
      played: ['2C', '3C', '5C', '6C', '7C', 'QC', 'KC', 'AC', '5D', '6D', '8D', 'AD', 'TH'],
      spades_broken: false,
      scores: [142, 96],
      bags: [2, 6],
      legal: { kind: 'none' },
      last_hand: null,
      result: null,
    },
    clock: { seat: 'east', kind: 'card', deadline: 1764495031000, duration_ms: 30000 },
    last_action: { seat: 'north', action: { play: 'TH' }, source: 'player' },
    server_time: 1764495001000,
    autopilot_after: 3,
    fair: { version: 1, commitment: 'c'.repeat(64), client_seeds: [null, null, null, null], fixed: true, server_seed: null },
  };
}

const change = (seq, fields) => ({ type: 'change', seq, server_time: 1764495000000 + seq * 1000, ...fields });
const play = (seat, card, source = 'player') => ({ seat, action: { play: card }, source });

// ---- the tests -------------------------------------------------------------

export function leanTests() {
  const file = process.env.LEAN_FRAMES ? path.resolve(process.env.LEAN_FRAMES) : FIXTURE;
  test(`lean frames: the server's fixture (${path.relative(REPO_ROOT, file)})`, () => {
    if (!existsSync(file)) {
      assert.fail(`no fixture at ${path.relative(REPO_ROOT, file)}: the server's test writes it `
        + '(or point LEAN_FRAMES at one, e.g. tests/browser/fixtures/lean-frames.sample.json)');
    }
    const n = checkFixture(file);
    assert.ok(n.changes > 0, 'the fixture holds change frames');
    console.log(`lean frames: ${path.relative(REPO_ROOT, file)}: ${n.sequences} sequences, ${n.frames} frames, ${n.changes} changes agree`);
  });

  test('lean frames: the synthetic sample fixture', () => {
    const n = checkFixture(SAMPLE);
    assert.ok(n.changes > 0);
  });

  test('the protocol number is 2', () => {
    assert.equal(PROTOCOL, 2);
  });

  test('card order: clubs, diamonds, hearts, spades, each 2 to ace', () => {
    assert.equal(cardIndex('2C'), 0);
    assert.equal(cardIndex('AC'), 12);
    assert.equal(cardIndex('2D'), 13);
    assert.equal(cardIndex('TH'), 2 * 13 + 8);
    assert.equal(cardIndex('AS'), 51);
    assert.throws(() => cardIndex('1S'));
  });

  test('applyChange returns a new view and leaves its arguments alone', () => {
    const view = deepFreeze(playingView());
    const c = deepFreeze(change(2, { action: play('east', '2H'), turn: 'south', seats: [{ ...view.seats[1], timeouts: 1 }] }));
    const next = applyChange(view, c);
    assert.notEqual(next, view);
    assert.equal(view.game.trick.cards.length, 1);
    // Nothing is shared: changing the result changes neither input.
    next.seats[1].timeouts = 9;
    next.last_action.seat = 'west';
    next.game.played.push('XX');
    assert.equal(c.seats[0].timeouts, 1);
    assert.equal(c.action.seat, 'east');
    assert.equal(view.game.played.includes('XX'), false);
  });

  test('a card: the trick, played in card order, cards left, the hand, spades broken', () => {
    const v1 = applyChange(playingView(), change(2, { action: play('east', '9H'), turn: 'south' }));
    assert.deepEqual(v1.game.trick.cards, ['TH', '9H']);
    assert.deepEqual(v1.game.played, ['2C', '3C', '5C', '6C', '7C', 'QC', 'KC', 'AC', '5D', '6D', '8D', 'AD', '9H', 'TH']);
    assert.deepEqual(v1.game.cards_left, [9, 9, 10, 10]);
    assert.deepEqual(v1.last_action, play('east', '9H'));
    assert.equal(v1.game.turn, 'south');
    assert.equal(v1.server_time, 1764495002000);
    assert.equal(v1.game.hand.length, 9, 'another seat\'s card leaves the viewer\'s hand alone');
    // The viewer's own card leaves its hand, the order kept; a spade breaks spades.
    const v = playingView();
    v.game.trick = { leader: 'west', cards: ['5H', '6H', '7H'], winner: null };
    v.game.turn = 'north';
    const v2 = applyChange(v, change(3, { action: play('north', '3S', 'autopilot'), trick_won: 'north' }));
    assert.deepEqual(v2.game.hand, ['4C', '9C', 'KD', '2H', 'JH', 'AH', '7S', 'QS']);
    assert.equal(v2.game.spades_broken, true);
    assert.equal(v2.game.cards_left[0], 8);
    assert.ok(v2.game.played.indexOf('3S') > v2.game.played.indexOf('TH'));
    // The trick is won: recorded, counted, and a new one led by the winner.
    const won = { leader: 'west', cards: ['5H', '6H', '7H', '3S'], winner: 'north' };
    assert.deepEqual(v2.game.last_trick, won);
    assert.deepEqual(v2.game.tricks.at(-1), won);
    assert.equal(v2.game.tricks.length, 4);
    assert.deepEqual(v2.game.tricks_won, [4, 0, 0, 0]);
    assert.deepEqual(v2.game.trick, { leader: 'north', cards: [], winner: null });
  });

  test('a spectator\'s view has no hand to take a card from', () => {
    const v = applyChange(playingView(null), change(2, { action: play('east', '9H') }));
    assert.equal(v.game.hand, null);
    // A seat that left: `you` is set, but the view holds no hand.
    const left = playingView('east');
    left.game.viewer = null;
    left.game.hand = null;
    assert.equal(applyChange(left, change(2, { action: play('east', '9H') })).game.hand, null);
  });

  test('the doc\'s example: a card completes the trick', () => {
    const v = playingView('south');
    v.game.hand = ['2C', '9C', 'AH', 'TS'];
    v.game.trick = { leader: 'west', cards: ['TH', 'QH'], winner: null };
    const v57 = applyChange(v, {
      type: 'change', seq: 57, server_time: 1764495013001, action: { seat: 'east', action: { play: 'KH' }, source: 'player' },
      turn: 'south', clock: { seat: 'south', kind: 'card', deadline: 1764495043001, duration_ms: 30000 },
    });
    const v58 = applyChange(v57, {
      type: 'change', seq: 58, server_time: 1764495014210, action: { seat: 'south', action: { play: 'AH' }, source: 'player' },
      trick_won: 'south', turn: 'south', legal: { kind: 'play', cards: ['2C', '9C', 'TS'] },
      clock: { seat: 'south', kind: 'card', deadline: 1764495044210, duration_ms: 30000 },
    });
    assert.deepEqual(v58.game.last_trick, { leader: 'west', cards: ['TH', 'QH', 'KH', 'AH'], winner: 'south' });
    assert.deepEqual(v58.game.trick, { leader: 'south', cards: [], winner: null });
    assert.deepEqual(v58.game.hand, ['2C', '9C', 'TS']);
    assert.deepEqual(v58.game.legal, { kind: 'play', cards: ['2C', '9C', 'TS'] });
    assert.equal(v58.clock.deadline, 1764495044210);
    assert.deepEqual(v58.game.tricks_won, [3, 0, 1, 0]);
  });

  test('a bid, then the last bid starts the play', () => {
    const v = playingView();
    v.phase = 'bidding';
    v.game.phase = 'bidding';
    v.game.bids = [null, null, null, null];
    const v1 = applyChange(v, change(2, { action: { seat: 'north', action: { bid: 0 }, source: 'player' }, turn: 'east', legal: { kind: 'none' }, clock: null }));
    assert.deepEqual(v1.game.bids, [0, null, null, null]);
    assert.equal(v1.clock, null);
    assert.deepEqual(v1.game.legal, { kind: 'none' });
    const v2 = applyChange(v1, change(3, { action: { seat: 'east', action: { bid: 4 }, source: 'bot' }, phase: 'playing' }));
    assert.equal(v2.phase, 'playing');
    assert.equal(v2.game.phase, 'playing');
  });

  test('the hand\'s end: scoring, the next deal (a seat gets its cards), no last action', () => {
    const hs = {
      hand_number: 3, dealer: 'west', bids: [3, 2, 0, 4], tricks: [4, 3, 0, 6], nils: [null, null, 'made', null],
      teams: [{ score: 282, bag_count: 3 }, { score: 1, bag_count: 9 }],
    };
    const hand = ['2C', '7C', 'AD', '3H', '4H', '5H', '9H', 'JH', '2S', '4S', '8S', 'KS', 'AS'];
    for (const you of ['north', null]) {
      const fields = {
        action: play('east', '9H'), trick_won: 'east', hand_scored: hs, deal: { hand_number: 4, dealer: 'north' },
        phase: 'bidding', turn: 'east',
      };
      if (you) fields.hand = hand;
      const v = applyChange(playingView(you), change(9, fields));
      const g = v.game;
      assert.equal(v.phase, 'bidding');
      assert.equal(g.phase, 'bidding');
      assert.deepEqual(g.last_hand, hs);
      assert.deepEqual(g.scores, [282, 1]);
      assert.deepEqual(g.bags, [3, 9]);
      assert.equal(g.hand_number, 4);
      assert.equal(g.dealer, 'north');
      assert.deepEqual(g.hand, you ? hand : null);
      assert.deepEqual(g.cards_left, [13, 13, 13, 13]);
      assert.deepEqual(g.bids, [null, null, null, null]);
      assert.deepEqual(g.tricks_won, [0, 0, 0, 0]);
      assert.deepEqual(g.trick, { leader: 'east', cards: [], winner: null });
      assert.equal(g.last_trick, null);
      assert.deepEqual(g.tricks, []);
      assert.deepEqual(g.played, []);
      assert.equal(g.spades_broken, false);
      assert.equal(g.turn, 'east');
      assert.equal(v.last_action, null, 'the move that ended the hand is not the new hand\'s last action');
    }
    // The seat after the dealer leads, clockwise: west deals, north leads.
    const v = applyChange(playingView(), change(9, { deal: { hand_number: 4, dealer: 'west' }, hand }));
    assert.equal(v.game.trick.leader, 'north');
  });

  test('the match\'s end: the game\'s phase is match_over', () => {
    const result = { outcome: { result: 'win', team: 'north_south' }, reason: 'target', scores: [512, 230], hands_played: 9 };
    const rematch = { ready: [false, true, true, true], next_table: null };
    const fair = { ...playingView().fair, server_seed: 'd'.repeat(64) };
    const v = applyChange(playingView(), change(9, { phase: 'finished', turn: null, legal: { kind: 'none' }, result, clock: null, fair, rematch }));
    assert.equal(v.phase, 'finished');
    assert.equal(v.game.phase, 'match_over');
    assert.equal(v.game.turn, null);
    assert.deepEqual(v.game.result, result);
    assert.deepEqual(v.fair, fair);
    assert.deepEqual(v.rematch, rematch);
    // `rematch: null` clears it: the server's views leave the field out.
    const v2 = applyChange(v, change(10, { rematch: null }));
    assert.equal('rematch' in v2, false);
  });

  test('seats: each entry replaces the seat it names', () => {
    const v = playingView();
    const south = { seat: 'south', name: 'Bo', kind: 'human', status: 'away', away_until: 1764495060000, timeouts: 1 };
    const west = { seat: 'west', name: 'West bot', kind: 'bot', status: 'bot', away_until: null, timeouts: 0 };
    const next = applyChange(v, change(2, { seats: [west, south] }));
    assert.deepEqual(next.seats, [v.seats[0], v.seats[1], south, west]);
    assert.throws(() => applyChange(v, change(2, { seats: [{ ...west, seat: 'middle' }] })));
  });

  test('a lobby: fair and seats change, the game stays null', () => {
    const v = { ...playingView(), phase: 'lobby', game: null, clock: null, last_action: null };
    const fair = { ...v.fair, fixed: false, client_seeds: ['e'.repeat(64), null, null, null] };
    const next = applyChange(v, change(2, { fair }));
    assert.deepEqual(next.fair, fair);
    assert.equal(next.game, null);
    assert.throws(() => applyChange(v, change(2, { action: play('north', '2C') })), 'a card needs a game');
  });

  test('the view keeper: changes in order apply; stale frames are dropped', () => {
    const syncs = [];
    const k = new ViewKeeper(() => syncs.push(1));
    assert.equal(k.receive(change(5, { turn: 'south' })), null, 'no change before the first snapshot');
    const got = k.receive({ type: 'view', seq: 4, view: playingView() });
    assert.equal(got.type, 'view');
    assert.equal(got.seq, 4);
    const c5 = k.receive(change(5, { action: play('east', '9H'), turn: 'south' }));
    assert.equal(c5.seq, 5);
    assert.deepEqual(c5.view.game.trick.cards, ['TH', '9H']);
    assert.equal(k.receive(change(5, { turn: 'west' })), null, 'a change seen already');
    assert.equal(k.receive(change(3, { turn: 'west' })), null, 'an older change');
    assert.equal(k.receive({ type: 'view', seq: 3, view: playingView() }), null, 'an older snapshot');
    assert.equal(k.view.game.turn, 'south');
    // A snapshot of the same seq is complete: taken.
    assert.equal(k.receive({ type: 'view', seq: 5, view: playingView(null) }).view.you, null);
    assert.equal(k.receive({ type: 'chat', text: 'hi' }), null);
    assert.equal(syncs.length, 0);
  });

  test('the view keeper: a gap asks for one sync and ignores changes until the next snapshot', () => {
    const syncs = [];
    const k = new ViewKeeper(() => syncs.push(1));
    k.receive({ type: 'view', seq: 10, view: playingView() });
    k.receive(change(11, { turn: 'south' }));
    assert.equal(k.receive(change(13, { turn: 'west' })), null, 'seq 12 is missing: dropped');
    assert.equal(syncs.length, 1, 'one sync');
    assert.equal(k.receive(change(12, { turn: 'west' })), null, 'waiting for the snapshot: ignored');
    assert.equal(k.receive(change(14, { turn: 'north' })), null);
    assert.equal(k.receive(change(20, { turn: 'north' })), null);
    assert.equal(syncs.length, 1, 'still one sync');
    assert.equal(k.view.game.turn, 'south', 'the view is the one of seq 11');
    // The answer: a snapshot resets.
    const fresh = playingView();
    fresh.game.turn = 'west';
    assert.equal(k.receive({ type: 'view', seq: 14, view: fresh }).seq, 14);
    assert.equal(k.receive(change(14, { turn: 'north' })), null, 'covered by the snapshot');
    assert.equal(k.receive(change(15, { turn: 'north' })).view.game.turn, 'north');
    assert.equal(syncs.length, 1);
    // A later gap asks again, once.
    k.receive(change(17, {}));
    k.receive(change(18, {}));
    assert.equal(syncs.length, 2);
  });

  test('the view keeper: a refused sync is asked again at the next gap; a change that cannot apply asks too', () => {
    const syncs = [];
    const k = new ViewKeeper(() => syncs.push(1));
    k.receive({ type: 'view', seq: 1, view: playingView() });
    k.receive(change(3, {}));
    assert.equal(syncs.length, 1);
    k.syncFailed();
    k.receive(change(4, {}));
    assert.equal(syncs.length, 2);
    k.receive({ type: 'view', seq: 4, view: playingView() });
    assert.equal(k.receive(change(5, { seats: [{ seat: 'nobody' }] })), null);
    assert.equal(syncs.length, 3);
    assert.equal(k.seq, 4);
  });

  test('the view keeper: a new socket waits for its attach snapshot', () => {
    const syncs = [];
    const k = new ViewKeeper(() => syncs.push(1));
    k.receive({ type: 'view', seq: 1, view: playingView() });
    k.expectSnapshot();
    assert.equal(k.receive(change(2, { turn: 'south' })), null);
    assert.equal(syncs.length, 0, 'no sync: the attach brings a snapshot');
    assert.equal(k.receive({ type: 'view', seq: 7, view: playingView() }).seq, 7);
    assert.equal(k.receive(change(8, { turn: 'south' })).seq, 8);
  });

  test('viewsOf: the complete views of a recorded stream', () => {
    const frames = [
      { type: 'hello', protocol: 2 },
      { type: 'view', seq: 1, view: playingView() },
      change(2, { turn: 'south' }),
      { type: 'ack', req: 3 },
      change(3, { turn: 'west' }),
    ];
    const views = viewsOf(frames);
    assert.deepEqual(views.map((v) => [v.i, v.seq, v.view.game.turn]), [[1, 1, 'east'], [2, 2, 'south'], [4, 3, 'west']]);
  });

  test('the connection sends protocol 2, keeps the view from changes and syncs on a gap', async () => {
    const { sockets, restore } = fakeBrowser();
    try {
      const { Connection } = await import('../../web/js/conn.js');
      const views = [];
      const conn = new Connection({
        attach: () => ({ type: 'resume', table: 't', token: 'k' }),
        onAttached() {},
        onAttachError: () => null,
        onView: (m) => views.push(m),
        onState() {},
      });
      conn.start();
      const ws = sockets[0];
      ws.open();
      ws.serverSends({ type: 'hello', protocol: 2, server: 'test', server_time: 1 });
      const attach = ws.sent.at(-1);
      assert.equal(attach.type, 'resume');
      assert.equal(attach.protocol, 2);
      ws.serverSends({ type: 'resumed', req: attach.req, table: 't', seat: 'north' });
      ws.serverSends({ type: 'view', seq: 1, view: playingView() });
      ws.serverSends(change(2, { action: play('east', '9H'), turn: 'south' }));
      assert.equal(views.length, 2);
      assert.deepEqual(views[1], { type: 'view', seq: 2, view: views[1].view });
      assert.deepEqual(views[1].view.game.trick.cards, ['TH', '9H']);
      assert.deepEqual(views[0].view.game.trick.cards, ['TH'], 'the earlier view is left as it was');
      // A gap: one sync, changes ignored until its snapshot.
      ws.serverSends(change(4, { turn: 'west' }));
      ws.serverSends(change(5, { turn: 'north' }));
      const syncs = ws.sent.filter((m) => m.type === 'sync');
      assert.equal(syncs.length, 1);
      assert.equal(views.length, 2);
      ws.serverSends({ type: 'ack', req: syncs[0].req });
      ws.serverSends({ type: 'view', seq: 5, view: playingView() });
      ws.serverSends(change(6, { turn: 'west' }));
      assert.deepEqual(views.slice(2).map((m) => [m.seq, m.view.game.turn]), [[5, 'east'], [6, 'west']]);
      conn.dispose();
    } finally {
      restore();
    }
  });
}

/** Just enough of a browser for conn.js: window, document, location, WebSocket. */
function fakeBrowser() {
  const saved = {};
  const sockets = [];
  class FakeWebSocket {
    static OPEN = 1;
    constructor(url) {
      this.url = url;
      this.readyState = 0;
      this.sent = [];
      sockets.push(this);
    }
    open() {
      this.readyState = 1;
      this.onopen?.();
    }
    send(data) {
      this.sent.push(JSON.parse(data));
    }
    close() {
      this.readyState = 3;
    }
    serverSends(msg) {
      this.onmessage({ data: JSON.stringify(msg) });
    }
  }
  const globals = {
    window: { addEventListener() {}, removeEventListener() {} },
    document: { addEventListener() {}, removeEventListener() {}, visibilityState: 'visible' },
    location: { protocol: 'http:', host: 'localhost' },
    WebSocket: FakeWebSocket,
  };
  for (const [k, v] of Object.entries(globals)) {
    saved[k] = Object.getOwnPropertyDescriptor(globalThis, k);
    Object.defineProperty(globalThis, k, { value: v, configurable: true, writable: true });
  }
  return {
    sockets,
    restore() {
      for (const [k, d] of Object.entries(saved)) {
        if (d) Object.defineProperty(globalThis, k, d);
        else delete globalThis[k];
      }
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) leanTests();
