// Cards: names, sorting, trick winners and the card element.

import { h, icon } from './dom.js';

export const SUITS = ['S', 'H', 'C', 'D']; // display order: colours alternate
export const RANKS = ['2', '3', '4', '5', '6', '7', '8', '9', 'T', 'J', 'Q', 'K', 'A'];

const SUIT_NAME = { S: 'spades', H: 'hearts', D: 'diamonds', C: 'clubs' };
const RANK_NAME = {
  T: 'ten', J: 'jack', Q: 'queen', K: 'king', A: 'ace',
  2: 'two', 3: 'three', 4: 'four', 5: 'five', 6: 'six', 7: 'seven', 8: 'eight', 9: 'nine',
};
const RANK_SHOW = { T: '10' };

export const suitOf = (card) => card[1];
export const rankOf = (card) => card[0];
export const rankIndex = (card) => RANKS.indexOf(card[0]);
export const isRed = (card) => card[1] === 'H' || card[1] === 'D';

/** "queen of hearts" */
export function cardName(card) {
  return `${RANK_NAME[card[0]]} of ${SUIT_NAME[card[1]]}`;
}

/** A hand sorted by suit (♠ ♥ ♣ ♦) and, within a suit, high to low. */
export function sortHand(cards) {
  return [...cards].sort(
    (a, b) => SUITS.indexOf(suitOf(a)) - SUITS.indexOf(suitOf(b)) || rankIndex(b) - rankIndex(a),
  );
}

/** The winning position (0..n) of the cards of a trick so far. */
export function winningIndex(cards) {
  let best = 0;
  for (let i = 1; i < cards.length; i++) {
    const c = cards[i];
    const b = cards[best];
    const beats = (suitOf(c) === suitOf(b) && rankIndex(c) > rankIndex(b)) || (suitOf(c) === 'S' && suitOf(b) !== 'S');
    if (beats) best = i;
  }
  return best;
}

/** Every card of the deck. */
export function fullDeck() {
  const out = [];
  for (const s of SUITS) for (const r of RANKS) out.push(r + s);
  return out;
}

/** The face of a card (used inside buttons and trick slots). */
export function cardFace(card) {
  const suit = suitOf(card);
  const rank = RANK_SHOW[rankOf(card)] || rankOf(card);
  return [
    h('span', { class: 'corner', 'aria-hidden': 'true' },
      h('span', { class: 'rank' }, rank), icon(`suit-${suit}`, 'pip')),
    h('span', { class: 'corner corner-end', 'aria-hidden': 'true' },
      h('span', { class: 'rank' }, rank), icon(`suit-${suit}`, 'pip')),
    icon(`suit-${suit}`, 'center-pip'),
  ];
}

/** A face-up card that is not a control (the trick, the last trick). */
export function cardView(card, extra = '') {
  return h('span', {
    class: `card suit-${suitOf(card)} ${isRed(card) ? 'red' : 'black'} ${extra}`,
    role: 'img',
    'aria-label': cardName(card),
    dataset: { card },
  }, cardFace(card));
}
