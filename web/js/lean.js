// Protocol 2 ("lean frames"): the server sends a complete view (a snapshot)
// when a connection attaches or asks with `sync`, then one `change` frame
// per change of the table holding only what changed (docs/protocol.md,
// "The view" and "Change frames"). This module rebuilds the complete view
// from those frames. It has no DOM dependency, so Node tests import it too.

/** The protocol this client speaks (sent in `join`, `resume` and `watch`). */
export const PROTOCOL = 2;

const SEATS = ['north', 'east', 'south', 'west'];
const SUIT_ORDER = 'CDHS';
const RANK_ORDER = '23456789TJQKA';

/** The table's phase → the game's (`game.phase`, the engine's own names). */
const GAME_PHASE = { bidding: 'bidding', playing: 'playing', finished: 'match_over' };

/** A card's place in the server's card order: clubs, diamonds, hearts, spades, each 2 to ace. */
export function cardIndex(card) {
  const suit = SUIT_ORDER.indexOf(card[1]);
  const rank = RANK_ORDER.indexOf(card[0]);
  if (suit < 0 || rank < 0 || card.length !== 2) throw new Error(`not a card: ${JSON.stringify(card)}`);
  return suit * 13 + rank;
}

function seatIndex(seat) {
  const i = SEATS.indexOf(seat);
  if (i < 0) throw new Error(`not a seat: ${JSON.stringify(seat)}`);
  return i;
}

const nextSeat = (seat) => SEATS[(seatIndex(seat) + 1) % 4];

function needGame(view, field) {
  if (!view.game) throw new Error(`a change with "${field}" for a view without a game`);
  return view.game;
}

/** One card played by `seat` (the `action` row of the table). */
function playCard(view, game, seat, card) {
  const i = seatIndex(seat);
  game.trick.cards.push(card);
  if (!game.played.includes(card)) {
    game.played.push(card);
    game.played.sort((a, b) => cardIndex(a) - cardIndex(b));
  }
  game.cards_left[i] -= 1;
  // A seat that left sees no hand any more (`you` set, `game.hand` null).
  if (seat === view.you && Array.isArray(game.hand)) game.hand = game.hand.filter((c) => c !== card);
  if (card[1] === 'S') game.spades_broken = true;
}

/**
 * The view after `change`, applied to the view of `change.seq - 1`
 * (docs/protocol.md, "Change frames"). Returns a new object: neither
 * argument is modified, and the result shares nothing with them. Throws
 * when the change cannot apply to this view (a client then asks for a
 * snapshot).
 */
export function applyChange(view, change) {
  const v = structuredClone(view);
  const c = structuredClone(change);

  if ('server_time' in c) v.server_time = c.server_time;

  if ('action' in c) {
    v.last_action = c.action;
    const a = c.action;
    if (a) {
      const g = needGame(v, 'action');
      if ('bid' in a.action) g.bids[seatIndex(a.seat)] = a.action.bid;
      else if ('play' in a.action) playCard(v, g, a.seat, a.action.play);
      else throw new Error(`an action that is neither a bid nor a card: ${JSON.stringify(a.action)}`);
    }
  }

  if ('trick_won' in c) {
    const g = needGame(v, 'trick_won');
    const winner = c.trick_won;
    g.trick.winner = winner;
    g.tricks.push(structuredClone(g.trick));
    g.last_trick = structuredClone(g.trick);
    g.tricks_won[seatIndex(winner)] += 1;
    g.trick = { leader: winner, cards: [], winner: null };
  }

  if ('hand_scored' in c) {
    const g = needGame(v, 'hand_scored');
    const hs = c.hand_scored;
    g.last_hand = hs;
    for (let t = 0; t < 2; t++) {
      g.scores[t] = hs.teams[t].score;
      g.bags[t] = hs.teams[t].bag_count;
    }
    // The move that ends a hand belongs to that hand: the server's views
    // no longer show it as `last_action` (a new deal may hold its card).
    v.last_action = null;
  }

  if ('deal' in c) {
    const g = needGame(v, 'deal');
    const { hand_number: handNumber, dealer } = c.deal;
    g.hand_number = handNumber;
    g.dealer = dealer;
    // `hand` comes with the deal for a seat only: a spectator (and a seat
    // that left) has none.
    g.hand = 'hand' in c ? c.hand : null;
    g.cards_left = [13, 13, 13, 13];
    g.bids = [null, null, null, null];
    g.tricks_won = [0, 0, 0, 0];
    g.trick = { leader: nextSeat(dealer), cards: [], winner: null };
    g.last_trick = null;
    g.tricks = [];
    g.played = [];
    g.spades_broken = false;
  } else if ('hand' in c) {
    needGame(v, 'hand').hand = c.hand;
  }

  if ('phase' in c) {
    v.phase = c.phase;
    if (c.phase === 'lobby') v.game = null;
    else if (v.game) v.game.phase = GAME_PHASE[c.phase] ?? c.phase;
  }

  if ('turn' in c && v.game) v.game.turn = c.turn;
  if ('legal' in c && v.game) v.game.legal = c.legal;
  if ('result' in c && v.game) v.game.result = c.result;

  if ('seats' in c) {
    for (const entry of c.seats) {
      const i = v.seats.findIndex((s) => s.seat === entry.seat);
      if (i < 0) throw new Error(`a change for an unknown seat: ${JSON.stringify(entry.seat)}`);
      v.seats[i] = entry;
    }
  }

  if ('clock' in c) {
    // `kind` and `duration_ms` are left out when they are the held clock's.
    if (c.clock === null) {
      v.clock = null;
    } else {
      const held = v.clock;
      const kind = c.clock.kind ?? held?.kind;
      const duration = c.clock.duration_ms ?? held?.duration_ms;
      if (kind === undefined || duration === undefined) throw new Error('a clock the view cannot complete');
      v.clock = { seat: c.clock.seat, kind, deadline: c.clock.deadline, duration_ms: duration };
    }
  }
  if ('fair' in c) v.fair = c.fair;
  if ('rematch' in c) {
    // The server leaves `rematch` out of a view that has none.
    if (c.rematch == null) delete v.rematch;
    else v.rematch = c.rematch;
  }
  if ('played_for_you' in c) {
    // A seat's own: the whole list; the server leaves out an empty one.
    if (c.played_for_you == null || c.played_for_you.length === 0) delete v.played_for_you;
    else v.played_for_you = c.played_for_you;
  }
  return v;
}

/**
 * Keeps one connection's view from the frames it receives: takes a
 * snapshot as it is, applies the change that follows the last frame, and
 * on a gap drops the change, asks once for a snapshot (`sendSync()`) and
 * ignores every change until a snapshot comes.
 */
export class ViewKeeper {
  /** @param {() => void} sendSync sends `{"type":"sync"}` */
  constructor(sendSync) {
    this.sendSync = sendSync;
    this.view = null;
    this.seq = null;
    /** True while changes wait for a snapshot (a sync asked, or a new socket). */
    this.waiting = true;
    /** How many times a sync was asked for (for tests and diagnostics). */
    this.syncs = 0;
  }

  /** A new socket: its attach brings a snapshot; no change applies before it. */
  expectSnapshot() {
    this.waiting = true;
  }

  /** The sync was refused: the next change that does not follow asks again. */
  syncFailed() {
    if (this.view !== null) this.waiting = false;
  }

  /**
   * A `view` or `change` frame. Returns `{type: 'view', seq, view}` with
   * the complete view when the frame changed it, else null (the frame was
   * dropped).
   */
  receive(msg) {
    if (msg.type === 'view') {
      // An older snapshot than the view held is stale. One with the same
      // seq is taken: it is complete, and this connection's role may have
      // changed (e.g. watching after a refused resume).
      if (this.view !== null && msg.seq < this.seq) return null;
      this.view = msg.view;
      this.seq = msg.seq;
      this.waiting = false;
      return this.current();
    }
    if (msg.type !== 'change' || this.waiting || this.view === null) return null;
    if (msg.seq <= this.seq) return null;
    if (msg.seq !== this.seq + 1) {
      this.requestSync();
      return null;
    }
    let next;
    try {
      next = applyChange(this.view, msg);
    } catch {
      this.requestSync();
      return null;
    }
    this.view = next;
    this.seq = msg.seq;
    return this.current();
  }

  requestSync() {
    this.waiting = true;
    this.syncs += 1;
    this.sendSync();
  }

  current() {
    return { type: 'view', seq: this.seq, view: this.view };
  }
}

/**
 * The complete views a recorded stream of frames amounts to, for tests
 * that look at what a page received: `frames` in order (other types are
 * skipped); returns `[{i, seq, view}]`, `i` being the frame's index. A
 * gap is not asked about (the page itself sends the sync): the views
 * resume with the next snapshot.
 */
export function viewsOf(frames) {
  const keeper = new ViewKeeper(() => {});
  const out = [];
  frames.forEach((m, i) => {
    if (!m || (m.type !== 'view' && m.type !== 'change')) return;
    const got = keeper.receive(m);
    if (got) out.push({ i, seq: got.seq, view: got.view });
  });
  return out;
}
