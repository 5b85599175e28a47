// A tutorial hand (#/tutorial): one fixed deal played in the page, without
// the server. The player sits South with North as partner, against East and
// West; every card but the player's is scripted, so each lesson (bidding,
// following suit, leading spades, trumping, nil, bags) comes up when it
// happens. The player bids and plays as at a real table (the table's own bid
// picker and hand, hand.js); a card the rules forbid is refused with the
// rule, in the table's words, and a card the lesson does not want is refused
// with the reason.
//
// The state of a step is the script replayed up to it, so Back goes back
// anywhere, a played card included.

import { createTable } from './api.js';
import { cardName, cardView, sortHand, suitOf, winningIndex } from './cards.js';
import { classes, h, icon, replace, setText } from './dom.js';
import { createBidPicker, createHand, refusalSentence } from './hand.js';
import { paintAvatar } from './looks.js';
import { SEATS, SEAT_NAME, num, signed } from './rules.js';
import { handScoring } from './scoring.js';
import { session } from './session.js';
import { store } from './store.js';

const POSITIONS = { south: 'bottom', west: 'left', north: 'top', east: 'right' };
const SUIT_SIGN = { S: '♠', H: '♥', D: '♦', C: '♣' };
const YOU = 'south';
const DEALER = 'south';
/** The rules of the tutorial: the defaults of a new table (SPEC §3). */
const RULES = { nil: 'hundred', bag_penalty: 'ten_for_hundred', failed_nil: 'bags_only', spades_lead: 'after_broken' };

/** "A♣", "10♥": a card as the step texts write it. */
const c = (card) => `${card[0] === 'T' ? '10' : card[0]}${SUIT_SIGN[card[1]]}`;

/** The deal. Every card is played in the script below, in this order. */
const DEAL = {
  north: ['QS', 'JS', 'TS', '5S', '2S', '9H', '4H', '9D', '3D', '2D', 'QC', 'JC', '7C'],
  east: ['8S', '3S', 'TH', '8H', '7H', '2H', 'KD', 'QD', 'JD', 'TD', '5D', '6C', '4C'],
  south: ['AS', 'KS', '7S', '4S', 'AH', 'QH', '6H', '3H', 'AC', '8C', '5C', '3C', '2C'],
  west: ['9S', '6S', 'KH', 'JH', '5H', 'AD', '8D', '7D', '6D', '4D', 'KC', 'TC', '9C'],
};

const bots = (...moves) => moves.map(([seat, card]) => ({ bot: seat, card }));

/**
 * The hand, in order: `read` steps (Next and Back), the player's `bid` and
 * `play` steps, and the bots' moves between them (no step of their own).
 * `lesson` names the rule a step teaches (for the page and its tests).
 */
const SCRIPT = [
  {
    read: true, title: 'A tutorial hand', lesson: 'intro',
    text: [
      'You sit South, at the bottom. Your partner North sits across the table; East and West play against you. This hand is dealt the same way every time.',
      'Read a step, then press Next. When it is your turn, bid or play a card as at a real table: Tab to your hand, arrow keys to choose, Enter to play.',
    ],
  },
  {
    read: true, title: 'Bidding', lesson: 'bidding',
    text: [
      'Each player bids once, in turn: how many tricks they expect to take, from 0 to 13. A trick is one card from each player; 13 tricks make a hand.',
      'South dealt, so West, on the dealer\'s left, bids first and will lead the first card.',
    ],
  },
  { bot: 'west', bid: 3 },
  { bot: 'north', bid: 3 },
  {
    read: true, title: 'What a bid means', lesson: 'bidding',
    text: [
      'West bid 3, and your partner North bid 3: North expects to take three tricks. Partners add their bids up into one contract for the team; it does not matter which of the two takes the tricks.',
    ],
  },
  { bot: 'east', bid: 0 },
  {
    read: true, title: 'Nil', lesson: 'nil',
    text: [
      'East bid nil (0): East promises to take no trick at all. A nil is scored on its own: +100 if East takes no trick, −100 if East takes even one.',
      'East–West\'s contract is West\'s 3 alone.',
    ],
  },
  {
    you: 'bid', bid: 4, title: 'Your bid', lesson: 'bidding',
    text: [
      'Count the tricks you are sure of: the A♠ and K♠, the A♥ and the A♣ make four. Choose 4 and press Enter (or the Bid button).',
    ],
    wrong: 'Bid 4 in this lesson: your sure tricks are the A♠, K♠, A♥ and A♣. Bidding more than you can take costs 10 points a trick bid; taking more than you bid gives bags.',
  },
  {
    read: true, title: 'The contracts', lesson: 'contract',
    text: [
      'North–South\'s contract is 3 + 4 = 7: together you must take at least 7 tricks. Made, it scores 10 a trick bid (+70); missed, it costs as much (−70).',
      'Spades are always trumps: a spade beats any card of another suit.',
    ],
  },
  ...bots(['west', 'TC'], ['north', '7C'], ['east', '4C']),
  {
    you: 'play', card: 'AC', title: 'Follow suit', lesson: 'follow',
    text: [
      `West led the ${c('TC')}. You hold clubs, so you must play a club: try a heart or a spade, and it is refused.`,
      `Play the ${c('AC')}: when no spade is played, the highest card of the suit led wins.`,
    ],
    other: `That club may be played, but in this lesson play the ${c('AC')}: it wins the trick.`,
  },
  {
    you: 'play', card: 'AH', title: 'Spades must be broken', lesson: 'spades',
    text: [
      'You won the trick, so you lead the next one. A spade may not be led until spades are broken: until someone has played a spade on a trick of another suit (unless you hold nothing but spades). Try a spade: it is refused.',
      `Lead the ${c('AH')}.`,
    ],
    other: `You may lead that card, but in this lesson lead the ${c('AH')}: it is sure to win.`,
  },
  ...bots(['west', '5H'], ['north', '9H'], ['east', '2H']),
  {
    you: 'play', card: 'QH', title: 'Leading', lesson: 'lead',
    text: [
      `Your ${c('AH')} won. The ${c('KH')} is still out: lead the ${c('QH')}. Whoever holds the king can take it and lead next.`,
    ],
    other: `You may lead that card, but in this lesson lead the ${c('QH')}.`,
  },
  ...bots(['west', 'KH'], ['north', '4H'], ['east', '7H'], ['west', 'AD'], ['north', '3D'], ['east', '5D']),
  {
    you: 'play', card: '4S', title: 'Trumping', lesson: 'trump',
    text: [
      `West took your queen with the ${c('KH')} and led the ${c('AD')}. You hold no diamond, so you may play any card, a spade too.`,
      `A spade beats every card of the other suits: trump with your lowest, the ${c('4S')}.`,
    ],
    other: `You may play that card (you hold no diamond), but this lesson trumps: play the ${c('4S')}.`,
  },
  {
    read: true, title: 'Spades are broken', lesson: 'broken',
    text: [
      `Your ${c('4S')} beat the ace: a spade was played on a diamond, so spades are broken. From now on anyone may lead a spade.`,
    ],
  },
  {
    you: 'play', card: 'AS', title: 'Leading spades', lesson: 'lead',
    text: [`Now you may lead spades. Lead the ${c('AS')}: it draws the others' spades.`],
    other: `You may lead that card, but in this lesson lead the ${c('AS')}.`,
  },
  ...bots(['west', '6S'], ['north', '2S'], ['east', '3S']),
  {
    you: 'play', card: 'KS', title: 'Leading spades', lesson: 'lead',
    text: [`Lead the ${c('KS')}: it is the highest spade left.`],
    other: `You may lead that card, but in this lesson lead the ${c('KS')}.`,
  },
  ...bots(['west', '9S'], ['north', '5S'], ['east', '8S']),
  {
    you: 'play', card: '7S', title: 'To your partner', lesson: 'lead',
    text: [`Lead your last spade, the ${c('7S')}: North holds higher spades, wins it and leads next.`],
    other: `You may lead that card, but in this lesson lead the ${c('7S')}.`,
  },
  ...bots(['west', '8D'], ['north', 'TS'], ['east', 'QD'], ['north', 'QS'], ['east', 'JD']),
  {
    you: 'play', card: '2C', title: 'Nothing of the suit led', lesson: 'discard',
    text: [
      `North won your ${c('7S')} with the ${c('TS')} and leads the ${c('QS')}. You have no spade left, so any card will do: throw away the ${c('2C')}, a card that could never win a trick.`,
    ],
    other: `You may play that card, but in this lesson throw away the ${c('2C')}.`,
  },
  ...bots(['west', '7D']),
  {
    read: true, title: 'Contract made: bags', lesson: 'bags',
    text: [
      'North–South have taken 7 tricks: the contract is made (+70). Every trick more is an overtrick, a bag: +1 point each.',
      'Bags are not free: they add up from hand to hand, and every 10 bags cost 100 points.',
    ],
  },
  ...bots(['north', 'JS'], ['east', 'TD']),
  {
    you: 'play', card: '3C', title: 'A bag', lesson: 'bags',
    text: [`North leads the ${c('JS')} and will win it: one bag for North–South. Throw away the ${c('3C')}.`],
    other: `You may play that card, but in this lesson throw away the ${c('3C')}.`,
  },
  ...bots(['west', '6D'], ['north', '2D'], ['east', 'KD']),
  {
    you: 'play', card: '3H', title: 'Setting a nil', lesson: 'nil',
    text: [
      `North led the ${c('2D')} to test East's nil, and East had to follow suit with the ${c('KD')}, its last diamond. Only a spade could beat it, and nobody has one left.`,
      `Throw away the ${c('3H')}.`,
    ],
    other: `You may play that card, but in this lesson throw away the ${c('3H')}.`,
  },
  ...bots(['west', '4D']),
  {
    read: true, title: 'Nil failed', lesson: 'nil',
    text: [
      'East took a trick: East\'s nil has failed, −100 for East–West. A nil bidder gets rid of high cards whenever it cannot follow suit; East kept the king.',
      'The tricks a nil bidder takes never count toward the partner\'s contract: East\'s trick is only a bag for East–West.',
    ],
  },
  ...bots(['east', '8H']),
  {
    you: 'play', card: '6H', title: 'Follow suit', lesson: 'follow',
    text: [`East leads the ${c('8H')}: follow suit with your last heart, the ${c('6H')}.`],
    other: `In this lesson play the ${c('6H')}.`,
  },
  ...bots(['west', 'JH'], ['north', '9D'], ['west', 'KC'], ['north', 'JC'], ['east', '6C']),
  {
    you: 'play', card: '5C', title: 'Follow suit', lesson: 'follow',
    text: [`West won with the ${c('JH')} and leads the ${c('KC')}: follow suit with the ${c('5C')}.`],
    other: `That club may be played, but in this lesson play the ${c('5C')}.`,
  },
  ...bots(['west', '9C'], ['north', 'QC'], ['east', 'TH']),
  {
    you: 'play', card: '8C', title: 'The last trick', lesson: 'follow',
    text: [`West won again and leads the ${c('9C')}. Play your last card, the ${c('8C')}: North's ${c('QC')} wins the trick.`],
    other: `In this lesson play the ${c('8C')}.`,
  },
  { end: true, title: 'The hand is over', lesson: 'summary' },
];

// ---- the rules, as far as this hand needs them -----------------------------

const seatAt = (leader, i) => SEATS[(SEATS.indexOf(leader) + i) % 4];
const nextSeat = (seat) => seatAt(seat, 1);

function initialState() {
  return {
    hands: Object.fromEntries(SEATS.map((s) => [s, [...DEAL[s]]])),
    bids: Object.fromEntries(SEATS.map((s) => [s, null])),
    won: Object.fromEntries(SEATS.map((s) => [s, 0])),
    phase: 'bidding',
    turn: nextSeat(DEALER),
    trick: null, // {leader, cards, winner?}
    tricks: 0,
    broken: false,
  };
}

/** The suit led to the trick under way, or null. */
const ledSuit = (state) => (state.trick && !state.trick.winner ? suitOf(state.trick.cards[0]) : null);

/**
 * Why `card` may not be played now, as the server's refusal code
 * (docs/protocol.md), or null when it may (SPEC §1).
 */
export function refusal(state, seat, card) {
  if (state.phase !== 'playing' || state.turn !== seat) return 'not_your_turn';
  const hand = state.hands[seat];
  if (!hand.includes(card)) return 'card_not_in_hand';
  const led = ledSuit(state);
  if (led) {
    if (suitOf(card) !== led && hand.some((x) => suitOf(x) === led)) return 'must_follow_suit';
    return null;
  }
  if (suitOf(card) === 'S' && !state.broken && RULES.spades_lead === 'after_broken' && hand.some((x) => suitOf(x) !== 'S')) return 'spades_not_broken';
  return null;
}

function apply(state, move) {
  const s = structuredClone(state);
  const seat = move.bot || YOU;
  if (move.bid != null) {
    if (s.phase !== 'bidding' || s.turn !== seat) throw new Error(`tutorial script: ${seat} may not bid now`);
    s.bids[seat] = move.bid;
    s.turn = nextSeat(seat);
    if (SEATS.every((x) => s.bids[x] != null)) s.phase = 'playing';
    return s;
  }
  const why = refusal(s, seat, move.card);
  if (why) throw new Error(`tutorial script: ${seat} may not play ${move.card} (${why})`);
  if (!s.trick || s.trick.winner) s.trick = { leader: seat, cards: [] };
  s.trick.cards.push(move.card);
  s.hands[seat] = s.hands[seat].filter((x) => x !== move.card);
  if (suitOf(move.card) === 'S') s.broken = true;
  if (s.trick.cards.length === 4) {
    const winner = seatAt(s.trick.leader, winningIndex(s.trick.cards));
    s.trick.winner = winner;
    s.won[winner] += 1;
    s.tricks += 1;
    s.turn = winner;
    if (s.tricks === 13) {
      s.phase = 'over';
      s.turn = null;
    }
  } else {
    s.turn = nextSeat(seat);
  }
  return s;
}

/** The scoring of the hand (SPEC §2, this table's rules), as a `HandResult`. */
export function scoreHand(state) {
  const bids = SEATS.map((x) => state.bids[x]);
  const tricks = SEATS.map((x) => state.won[x]);
  const nils = bids.map((b, i) => (b === 0 ? (tricks[i] === 0 ? 'made' : 'failed') : null));
  const teams = [0, 1].map((t) => {
    const seats = [t, t + 2];
    const contract = seats.reduce((n, i) => n + (bids[i] || 0), 0);
    const counted = seats.reduce((n, i) => n + (bids[i] === 0 ? 0 : tricks[i]), 0);
    const nilTricks = seats.reduce((n, i) => n + (bids[i] === 0 ? tricks[i] : 0), 0);
    const made = counted >= contract;
    const contractPoints = contract === 0 ? 0 : made ? 10 * contract : -10 * contract;
    const bags = (contract === 0 ? counted : made ? counted - contract : 0) + nilTricks;
    const nilPoints = seats.reduce((n, i) => n + (nils[i] === 'made' ? 100 : nils[i] === 'failed' ? -100 : 0), 0);
    const penalty = -100 * Math.floor(bags / 10);
    const handPoints = contractPoints + bags + nilPoints + penalty;
    return {
      contract, counted_tricks: counted, made, contract_points: contractPoints, bags, bag_points: bags,
      nil_points: nilPoints, bag_penalty: penalty, hand_points: handPoints, score: handPoints, bag_count: bags % 10,
    };
  });
  return { hand_number: 1, bids, tricks, nils, teams };
}

/** Every step with the state it starts from (the script replayed up to it). */
export function buildSteps() {
  const steps = [];
  let state = initialState();
  for (const item of SCRIPT) {
    if (item.bot) {
      state = apply(state, item);
      continue;
    }
    steps.push({ ...item, state });
    if (item.you === 'bid') state = apply(state, { bid: item.bid });
    if (item.you === 'play') state = apply(state, { card: item.card });
  }
  if (state.phase !== 'over') throw new Error('tutorial script: the hand is not finished');
  return steps;
}

// ---- the screen ------------------------------------------------------------

const seatLabel = (seat) => (seat === YOU ? 'You' : SEAT_NAME[seat]);

/**
 * Mounts the tutorial in `root`. `go(tableId, intent)` opens a table (for
 * "Play now against bots" at the end). Returns a function that unmounts it.
 */
export function mountTutorial(root, go) {
  const steps = buildSteps();
  const st = { i: 0, refusal: null, shown: -1, gone: false };

  // Top: the way back, and the teams' contracts and tricks.
  const status = h('p', { class: 'tut-status', id: 'tut-status' });
  const leave = h('a', { class: 'btn btn-plain btn-small', href: '#/', id: 'tut-leave' }, 'Leave the tutorial');
  const bar = h('div', { class: 'tut-bar' }, status, leave);

  // The table: four seats and the trick, with the table's own classes.
  const seatEls = {};
  for (const seat of SEATS) {
    const avatar = h('div', { class: 'avatar', 'aria-hidden': 'true' });
    const root = h('div', { class: `seat pos-${POSITIONS[seat]} team-${SEATS.indexOf(seat) % 2 ? 'ew' : 'ns'}`, dataset: { seat }, role: 'group' },
      h('div', { class: 'avatar-wrap' }, avatar,
        seat === YOU ? null : h('span', { class: 'bot-icon', title: 'bot' }, icon('icon-bot')),
        seat === DEALER ? h('span', { class: 'dealer-chip', title: 'dealer' }, 'D') : null),
      h('div', { class: 'seat-info' },
        h('div', { class: 'seat-name' }, seatLabel(seat), seat === YOU ? h('span', { class: 'you-tag' }, 'you') : null),
        h('div', { class: 'seat-meta' },
          h('span', { class: 'seat-dir' }, seat === YOU ? 'South' : seat === 'north' ? 'partner' : 'opponent'),
          h('span', { class: 'seat-bid' }))));
    const initials = seat === YOU ? (store.name() ? store.name().slice(0, 2) : 'You').toUpperCase() : SEAT_NAME[seat][0];
    paintAvatar(avatar, { seat, name: seat === YOU ? store.name() || 'You' : SEAT_NAME[seat], initials, mine: seat === YOU, table: SEATS.map((x) => ({ seat: x, name: SEAT_NAME[x], mine: x === YOU })) });
    seatEls[seat] = root;
  }
  const slots = {};
  for (const pos of Object.values(POSITIONS)) slots[pos] = h('div', { class: `slot slot-${pos}` });
  const trickBox = h('div', { class: 'trick-box', role: 'group', 'aria-label': 'Cards on the table' }, ...Object.values(slots));
  const centerMsg = h('div', { class: 'center-msg' });
  const felt = h('section', { class: 'felt tut-felt', 'aria-label': 'Table' },
    ...SEATS.map((s) => seatEls[s]), h('div', { class: 'trick-area' }, trickBox, centerMsg));

  // The step: what happens and why, with Back and Next.
  const counter = h('p', { class: 'tut-count muted' });
  const title = h('h2', { id: 'tut-title', class: 'tut-title' });
  const body = h('div', { class: 'tut-text', id: 'tut-text' });
  const refusalEl = h('p', { class: 'refusal tut-refusal', id: 'tut-refusal', role: 'alert', hidden: true });
  const backBtn = h('button', { type: 'button', class: 'btn btn-plain', id: 'tut-back', onclick: () => goStep(st.i - 1) }, 'Back');
  const nextBtn = h('button', { type: 'button', class: 'btn btn-primary', id: 'tut-next', onclick: () => goStep(st.i + 1) }, 'Next');
  const waitNote = h('span', { class: 'tut-wait muted small' });
  // At the end: the name and Play now, in the panel's foot with Back, so
  // that they are in sight however long the summary above them is.
  const endBox = h('div', { class: 'tut-end', id: 'tut-end', hidden: true });
  const controls = h('div', { class: 'tut-controls' }, endBox, backBtn, waitNote, nextBtn);
  // The step's words are a polite live region; a refusal is an alert of its own.
  const live = h('div', { class: 'tut-live', id: 'tut-live', 'aria-live': 'polite' }, h('div', { class: 'tut-head' }, title, counter), body);
  const panel = h('section', { class: 'tut-panel', id: 'tut-panel', 'aria-labelledby': 'tut-title' }, live, refusalEl, controls);

  // The dock: the table's own bid picker and hand.
  const bids = createBidPicker({ onBid: () => sendBid() });
  const hand = createHand({ onPlay: (card, btn) => playCard(card, btn) });
  const handEl = hand.el;
  const dock = h('section', { class: 'dock tut-dock', 'aria-label': 'Your hand and bid' }, bids.el, hand.keys, handEl);

  const screen = h('div', { class: 'tut-screen' }, bar, felt, panel, dock);
  replace(root, screen);

  const step = () => steps[st.i];

  function goStep(i) {
    if (i < 0 || i >= steps.length) return;
    st.i = i;
    st.refusal = null;
    bids.choice = null;
    render();
    focusStep();
  }

  /** Focus on the step's control: Next, the bid picker, the card to play, or the end's first button. */
  function focusStep() {
    const s = step();
    let el = nextBtn;
    if (s.you === 'bid') {
      bids.focus();
      return;
    }
    if (s.you === 'play') el = handEl.querySelector(`[data-card="${s.card}"]`);
    else if (s.end) el = panel.querySelector('#tut-play-now');
    // The end's words come first: where they need a scroll, they stay at its top.
    el?.focus({ preventScroll: !!s.end });
    if (s.end) panel.scrollTop = 0;
  }

  function refuse(text, btn) {
    // The same refusal twice is said twice: a zero-width space tells them apart.
    st.refusal = text + (st.refusal === text ? '\u200b' : '');
    renderRefusal();
    refusalEl.scrollIntoView({ block: 'nearest' });
    if (btn) hand.refused(btn);
  }

  function playCard(card, btn) {
    const s = step();
    if (s.you !== 'play') {
      refuse(s.you === 'bid' ? 'First the bidding: choose your bid.' : s.end ? 'The hand is over.' : 'It is not your turn yet: read the step, then press Next.', btn);
      return;
    }
    // A card the rules forbid: refused in the table's words.
    const why = refusal(s.state, YOU, card);
    if (why) {
      refuse(refusalSentence(why, { led: ledSuit(s.state) }), btn);
      return;
    }
    if (card !== s.card) {
      refuse(s.other, btn);
      return;
    }
    goStep(st.i + 1);
  }

  function sendBid() {
    const s = step();
    if (s.you !== 'bid' || bids.choice == null) return;
    if (bids.choice !== s.bid) {
      refuse(s.wrong);
      return;
    }
    goStep(st.i + 1);
  }

  // ---- rendering ---------------------------------------------------------

  /** The state on screen: before the step's own move, or the end's. */
  function shownState() {
    return step().state;
  }

  function render() {
    if (st.gone) return;
    const s = step();
    const state = shownState();
    renderStatus(state);
    for (const seat of SEATS) renderSeat(seat, state);
    renderTrick(state);
    renderPanel(s);
    renderBid(s);
    renderHand(s, state);
  }

  function renderStatus(state) {
    const team = (t) => {
      const [a, b] = [SEATS[t], SEATS[t + 2]];
      const bids = [state.bids[a], state.bids[b]];
      const contract = bids.reduce((n, x) => n + (x || 0), 0);
      const nils = bids.filter((x) => x === 0).length;
      const won = state.won[a] + state.won[b];
      const long = t === 0 ? 'North–South' : 'East–West';
      const short = t === 0 ? 'N–S' : 'E–W';
      const what = bids.every((x) => x == null) ? 'no bid yet' : `bid ${contract}${nils ? ' + nil' : ''} · won ${won}`;
      return h('span', { class: `tut-team team-${t ? 'ew' : 'ns'}` },
        h('span', { class: 'long' }, long), h('span', { class: 'short', 'aria-hidden': 'true' }, short), `: ${what}`);
    };
    replace(status, team(0), team(1),
      state.broken ? h('span', { class: 'tut-broken' }, icon('suit-S', 'pip'), ' broken') : null);
  }

  function renderSeat(seat, state) {
    const el = seatEls[seat];
    const bid = state.bids[seat];
    const onTurn = state.turn === seat && state.phase !== 'over';
    const text = bid == null ? (onTurn && state.phase === 'bidding' ? 'bidding…' : '') : `${bid === 0 ? 'nil' : `bid ${bid}`} · won ${state.won[seat]}`;
    setText(el.querySelector('.seat-bid'), text);
    classes(el, { 'on-turn': onTurn, me: seat === YOU });
    const who = seat === YOU ? 'South: you' : `${SEAT_NAME[seat]}: ${seat === 'north' ? 'your partner, a bot' : 'a bot'}`;
    el.setAttribute('aria-label', [who, text, onTurn ? 'on turn' : ''].filter(Boolean).join(', '));
  }

  function renderTrick(state) {
    const t = state.trick;
    const done = !!t?.winner;
    const bySlot = {};
    if (t) {
      const winner = t.winner || seatAt(t.leader, winningIndex(t.cards));
      t.cards.forEach((card, i) => {
        const seat = seatAt(t.leader, i);
        bySlot[POSITIONS[seat]] = { card, seat, lead: i === 0, win: seat === winner };
      });
    }
    for (const [pos, slot] of Object.entries(slots)) {
      const want = bySlot[pos];
      if (!want) {
        slot.replaceChildren();
        continue;
      }
      if (slot.firstElementChild?.dataset.card !== want.card) slot.replaceChildren(cardView(want.card, 'played'));
      const el = slot.firstElementChild;
      el.classList.toggle('winner', done && want.win);
      el.classList.toggle('winning', !done && t.cards.length > 1 && want.win);
      el.setAttribute('aria-label', `${seatLabel(want.seat)}: ${cardName(want.card)}${want.lead ? ' (led)' : ''}${done && want.win ? ', won the trick' : ''}`);
    }
    trickBox.classList.toggle('done', done);
    trickBox.classList.toggle('empty', !t);
    let note = '';
    if (state.phase === 'bidding') note = state.turn === YOU ? 'Your bid' : `${seatLabel(state.turn)} to bid`;
    setText(centerMsg, '');
    if (note) centerMsg.append(h('p', { class: 'center-note' }, note));
  }

  function renderPanel(s) {
    if (st.shown !== st.i) {
      st.shown = st.i;
      panel.dataset.step = String(st.i);
      panel.dataset.kind = s.end ? 'end' : s.you || 'read';
      screen.classList.toggle('at-end', !!s.end);
      panel.dataset.lesson = s.lesson;
      // What the step asks for: the bid or the card.
      if (s.you) panel.dataset.want = String(s.you === 'bid' ? s.bid : s.card);
      else delete panel.dataset.want;
      setText(counter, `Step ${st.i + 1} of ${steps.length}`);
      setText(title, s.title);
      replace(body, s.end ? summary() : s.text.map((p) => h('p', {}, p)));
      replace(endBox, s.end ? finish() : null);
      endBox.hidden = !s.end;
    }
    backBtn.disabled = st.i === 0;
    nextBtn.hidden = !s.read;
    setText(waitNote, s.you === 'bid' ? 'Choose your bid to go on.' : s.you === 'play' ? `Play the ${c(s.card)} to go on.` : '');
    renderRefusal();
  }

  function renderRefusal() {
    refusalEl.hidden = !st.refusal;
    setText(refusalEl, st.refusal || '');
  }

  /** The end: the hand's scoring as a table shows it, and the lessons of nil and bags. */
  function summary() {
    const result = scoreHand(steps[steps.length - 1].state);
    const [ns, ew] = result.teams;
    const seats = SEATS.map((x) => ({ name: seatLabel(x) }));
    return [
      h('p', { class: 'tut-result' }, `North–South bid ${ns.contract} and took ${ns.counted_tricks}: ${signed(ns.contract_points)} for the contract and ${signed(ns.bag_points)} for ${ns.bags} bags, ${signed(ns.hand_points)} in all.`),
      h('div', { class: 'tut-summary' },
        h('div', { class: 'tut-scoring' }, handScoring(result, seats, RULES, YOU)),
        h('div', { class: 'tut-lessons' },
          h('div', { class: 'tut-lesson', dataset: { lesson: 'nil' } },
        h('h3', {}, 'Nil'),
        h('p', {}, `East's nil failed: ${signed(ew.nil_points)}. West made the contract of ${ew.contract} (${signed(ew.contract_points)}), and East's trick was a bag (${signed(ew.bag_points)}): East–West score ${num(ew.hand_points)}.`)),
      h('div', { class: 'tut-lesson', dataset: { lesson: 'bags' } },
        h('h3', {}, 'Bags'),
        h('p', {}, `Your ${ns.bags} overtricks scored only ${signed(ns.bag_points)}, and they stay on your count (${ns.bag_count} of 10). Every 10 bags cost 100 points: with ${10 - ns.bags} bags from earlier hands, these ${ns.bags} would have cost you 100. Bid what you can take.`)))),
    ];
  }

  /** What next, after the hand: the name, Play now against bots, the lobby or the tutorial again. */
  function finish() {
    const nameInput = h('input', {
      id: 'tut-name', type: 'text', maxlength: 24, autocomplete: 'nickname', value: session.account()?.name || store.name(), placeholder: 'e.g. Ann', 'aria-describedby': 'tut-name-error',
    });
    const nameError = h('p', { class: 'field-error', id: 'tut-name-error' });
    const playNow = h('button', { type: 'button', class: 'btn btn-primary', id: 'tut-play-now' }, 'Play now against bots');
    playNow.addEventListener('click', async () => {
      const name = nameInput.value.trim();
      if (!name) {
        nameError.textContent = 'Type your name first: the other players will see it.';
        nameInput.setAttribute('aria-invalid', 'true');
        nameInput.focus();
        return;
      }
      playNow.disabled = true;
      try {
        // Signs in as the guest account of that name (session.js), or renames it.
        await session.playAs(name);
      } catch (err) {
        nameError.textContent = err.message;
        nameInput.setAttribute('aria-invalid', 'true');
        nameInput.focus();
        playNow.disabled = false;
        return;
      }
      nameInput.removeAttribute('aria-invalid');
      nameError.textContent = '';
      try {
        const created = await createTable(`${name}'s table`, {});
        store.setOwner(created.table, created.owner_token);
        go(created.table, { join: { name, seat: null, quick: true } });
      } catch (err) {
        nameError.textContent = `Could not create the table: ${err.message}`;
        playNow.disabled = false;
      }
    });
    return [
      h('div', { class: 'tut-finish' },
        h('div', { class: 'field tut-name' }, h('label', { for: 'tut-name' }, 'Your name'), nameInput),
        h('div', { class: 'tut-end-actions' },
          playNow,
          h('a', { class: 'btn btn-plain', href: '#/', id: 'tut-lobby' }, 'Back to the lobby'),
          h('button', { type: 'button', class: 'btn btn-plain', id: 'tut-again', onclick: () => goStep(0) }, 'Start again'))),
      nameError,
    ];
  }

  function renderBid(s) {
    const pb = s.state.bids.north;
    bids.update({ show: s.you === 'bid', min: 0, max: 13, nil: '±100', note: pb == null ? '' : `Your partner bid ${pb === 0 ? 'nil' : pb}.` });
  }

  function renderHand(s, state) {
    const cards = sortHand(state.hands[YOU]);
    const playing = s.you === 'play';
    hand.update({
      shown: cards.length > 0,
      cards,
      playing,
      legal: (card) => !refusal(state, YOU, card),
      suggested: playing ? s.card : null,
    });
  }

  render();
  // After the router has focused the page: the first step's control.
  queueMicrotask(() => {
    if (!st.gone) focusStep();
  });

  return () => {
    st.gone = true;
  };
}
