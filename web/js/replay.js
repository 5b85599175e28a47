// A finished match replayed from its record (`GET /api/v1/matches/{id}`):
// hand by hand, trick by trick, with all four hands face up. Each seat's
// hand is rebuilt from the cards it played, so nothing beyond the record is
// needed.

import { matchRecord } from './api.js';
import { cardName, cardView, sortHand, winningIndex } from './cards.js';
import { h, replace, setText, announce } from './dom.js';
import { SEATS, SEAT_NAME, TEAM_NAME, TEAMS, num } from './rules.js';
import { handScoring, resultHeadline } from './scoring.js';

const POSITIONS = { north: 'top', east: 'right', south: 'bottom', west: 'left' };

/** The tricks of a hand record: `[{leader, cards: [{seat, card}], winner}]`. */
export function tricksOf(hand) {
  const tricks = [];
  for (let i = 0; i + 4 <= hand.plays.length; i += 4) {
    const plays = hand.plays.slice(i, i + 4);
    const w = winningIndex(plays.map((p) => p.card));
    tricks.push({ leader: plays[0].seat, plays, winner: plays[w].seat });
  }
  return tricks;
}

/** Each seat's thirteen cards, from the cards it played. */
export function dealOf(hand) {
  const deal = Object.fromEntries(SEATS.map((s) => [s, []]));
  for (const p of hand.plays) deal[p.seat].push(p.card);
  return deal;
}

/** Mounts the replay of match `id` in `root`; returns the unmount function. */
export function mountReplay(root, id, { setTitle }) {
  let alive = true;
  const st = { record: null, hand: 0, trick: 0 };

  const status = h('p', { class: 'muted', id: 'replay-status' }, 'Loading the match…');
  const handSelect = h('select', { id: 'replay-hand', 'aria-label': 'Hand' });
  const prevBtn = h('button', { type: 'button', class: 'btn btn-plain', id: 'replay-prev' }, '◀ Previous trick');
  const nextBtn = h('button', { type: 'button', class: 'btn btn-primary', id: 'replay-next' }, 'Next trick ▶');
  const where = h('p', { class: 'replay-where', id: 'replay-where', 'aria-live': 'polite' });
  const seatEls = {};
  for (const seat of SEATS) {
    seatEls[seat] = h('div', { class: `replay-seat pos-${POSITIONS[seat]} team-${SEATS.indexOf(seat) % 2 ? 'ew' : 'ns'}`, dataset: { seat } },
      h('div', { class: 'replay-name' }),
      h('div', { class: 'replay-hand', role: 'list' }));
  }
  const trickEl = h('div', { class: 'trick-box replay-trick', role: 'group', 'aria-label': 'The trick' },
    ...['top', 'right', 'bottom', 'left'].map((p) => h('div', { class: `slot slot-${p}` })));
  const felt = h('section', { class: 'felt replay-felt', 'aria-label': 'The four hands' },
    ...SEATS.map((s) => seatEls[s]), h('div', { class: 'trick-area' }, trickEl));
  const scoring = h('div', { class: 'replay-scoring', id: 'replay-scoring' });
  const controls = h('div', { class: 'replay-controls' },
    h('label', { for: 'replay-hand' }, 'Hand'), handSelect, prevBtn, nextBtn);
  const headline = h('p', { class: 'result-headline', id: 'replay-headline' });
  const screen = h('div', { class: 'replay-screen', id: 'replay' },
    h('div', { class: 'replay-head' }, headline, h('a', { class: 'btn btn-plain btn-small', href: '#/' }, 'Back to the lobby')),
    status, controls, where, felt, scoring);
  replace(root, screen);
  controls.hidden = true;

  const seatName = (seat) => st.record?.seats.find((x) => x.seat === seat)?.name || SEAT_NAME[seat];

  function render() {
    const r = st.record;
    const hand = r.hands[st.hand];
    const tricks = tricksOf(hand);
    const deal = dealOf(hand);
    const shownTricks = tricks.slice(0, st.trick);
    const played = new Set(shownTricks.flatMap((t) => t.plays.map((p) => p.card)));
    const won = Object.fromEntries(SEATS.map((s) => [s, shownTricks.filter((t) => t.winner === s).length]));
    handSelect.value = String(st.hand);
    for (const seat of SEATS) {
      const i = SEATS.indexOf(seat);
      const bid = hand.bids[i];
      setText(seatEls[seat].querySelector('.replay-name'),
        `${seatName(seat)} (${SEAT_NAME[seat]})${hand.dealer === seat ? ', dealer' : ''} · ${bid === 0 ? 'nil' : `bid ${bid}`} · won ${won[seat]}`);
      const left = sortHand(deal[seat].filter((c) => !played.has(c)));
      replace(seatEls[seat].querySelector('.replay-hand'), left.map((c) => {
        const el = cardView(c, 'mini-card');
        el.setAttribute('role', 'listitem');
        el.setAttribute('aria-label', cardName(c));
        return el;
      }));
    }
    const trick = st.trick > 0 ? tricks[st.trick - 1] : null;
    for (const slot of trickEl.children) slot.replaceChildren();
    if (trick) {
      for (const p of trick.plays) {
        const el = cardView(p.card, p.seat === trick.winner ? 'winner' : '');
        el.setAttribute('aria-label', `${seatName(p.seat)}: ${cardName(p.card)}${p.seat === trick.leader ? ' (led)' : ''}${p.seat === trick.winner ? ' (won)' : ''}`);
        trickEl.querySelector(`.slot-${POSITIONS[p.seat]}`).append(el);
      }
    }
    const text = trick
      ? `Hand ${hand.hand_number}, trick ${st.trick} of ${tricks.length}: ${seatName(trick.leader)} led, ${seatName(trick.winner)} won.`
      : `Hand ${hand.hand_number}: the deal and the bids. Dealer ${seatName(hand.dealer)}.`;
    setText(where, text);
    prevBtn.disabled = st.hand === 0 && st.trick === 0;
    nextBtn.disabled = st.hand === r.hands.length - 1 && st.trick === tricks.length;
    const last = st.trick === tricks.length;
    scoring.hidden = !last;
    if (last) replace(scoring, h('h2', {}, `Hand ${hand.hand_number}: scoring`), handScoring(hand, SEATS.map((x) => ({ name: seatName(x) })), r.options.rules, null));
  }

  function step(delta) {
    const r = st.record;
    const count = tricksOf(r.hands[st.hand]).length;
    let { hand, trick } = st;
    trick += delta;
    if (trick > count && hand < r.hands.length - 1) {
      hand += 1;
      trick = 0;
    } else if (trick < 0 && hand > 0) {
      hand -= 1;
      trick = tricksOf(r.hands[hand]).length;
    }
    st.hand = hand;
    st.trick = Math.max(0, Math.min(trick, tricksOf(r.hands[hand]).length));
    render();
  }

  prevBtn.addEventListener('click', () => step(-1));
  nextBtn.addEventListener('click', () => step(1));
  handSelect.addEventListener('change', () => {
    st.hand = Number(handSelect.value);
    st.trick = 0;
    render();
  });
  const onKey = (e) => {
    if (!st.record || e.target.closest?.('select, input, dialog')) return;
    if (e.key === 'ArrowRight') step(1);
    else if (e.key === 'ArrowLeft') step(-1);
    else return;
    e.preventDefault();
  };
  screen.addEventListener('keydown', onKey);

  matchRecord(id).then(
    (record) => {
      if (!alive) return;
      st.record = record;
      setTitle(`Replay: ${record.name}`);
      if (!record.hands.length) {
        setText(status, 'This match has no finished hand to replay yet.');
        return;
      }
      status.hidden = true;
      controls.hidden = false;
      replace(handSelect, record.hands.map((hd, i) => h('option', { value: String(i) }, `Hand ${hd.hand_number}`)));
      const res = record.result;
      setText(headline, res
        ? resultHeadline(res, null)
        : `${TEAMS.map((t, i) => `${TEAM_NAME[t]} ${num(record.scores[i])}`).join(', ')} (not finished)`);
      render();
      announce(`Replay of ${record.name}: ${record.hands.length} hands.`);
    },
    (err) => {
      if (alive) setText(status, `Could not load the match: ${err.message}`);
    },
  );

  return () => {
    alive = false;
    screen.removeEventListener('keydown', onKey);
  };
}
