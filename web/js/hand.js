// The player's own controls, shared by the table (table.js) and the
// tutorial (tutorial.js): the hand of card buttons, the bid picker, and the
// words that tell the player why a move was refused.

import { cardFace, cardName } from './cards.js';
import { classes, h, reconcile, setText } from './dom.js';

const SUIT_WORD = { S: 'spades', H: 'hearts', D: 'diamonds', C: 'clubs' };

/**
 * Why a move was refused, as a sentence for the player, from the refusal's
 * code (the protocol's `error` codes, docs/protocol.md; the tutorial judges
 * its own moves with the same codes). `led` is the suit led (a card's suit
 * letter, 'H'), `turn` who is on turn ("Ann (East)"). Null for a code
 * without words of its own here: the caller then says the server's message.
 */
export function refusalSentence(code, { led, turn } = {}) {
  switch (code) {
    case 'must_follow_suit': {
      const suit = SUIT_WORD[led];
      return suit
        ? `You must follow suit: ${suit} were led and you hold ${suit}. Only a player with no ${suit} may play another suit.`
        : 'You must follow suit: you hold a card of the suit led, so play one. Only a player with none of it may play another suit.';
    }
    case 'spades_not_broken':
      return 'Spades are not broken yet: no spade may be led until one has been played on another suit (unless you hold only spades).';
    case 'not_your_turn':
      return turn ? `Not your turn: it is ${turn}'s turn.` : 'Not your turn: wait for yours.';
    case 'card_not_in_hand':
      return 'That card is not in your hand any more: look at the table again.';
    case 'bidding_not_over':
      return 'The bidding is not over yet: the cards are played once all four players have bid.';
    case 'bidding_over':
      return 'The bidding is over: play a card.';
    case 'nil_not_allowed':
      return 'Nil is off at this table: bid from 1 to 13.';
    default:
      return null;
  }
}

/**
 * The hand: one row of card buttons, one tab stop for the whole hand (a
 * toolbar with a roving tabindex): the arrow keys, Home and End move between
 * the cards, Enter or Space plays one (`onPlay(card, btn)`). `keys` is its
 * description for screen readers, to be put beside it.
 */
export function createHand({ onPlay }) {
  let stopCard = null;
  const keys = h('p', { class: 'sr-only', id: 'hand-keys' }, 'Arrow keys move between the cards; Enter plays the card.');
  const el = h('div', { class: 'hand', id: 'hand', role: 'toolbar', 'aria-label': 'Your hand', 'aria-describedby': 'hand-keys' });
  el.addEventListener('focusin', (e) => {
    const card = e.target.closest?.('.card');
    if (card && el.contains(card)) setStop(card.dataset.card);
  });

  /** The card that holds the hand's one tab stop. */
  function setStop(card) {
    stopCard = card;
    for (const btn of el.children) btn.tabIndex = btn.dataset.card === card ? 0 : -1;
  }

  /** Arrow keys, Home and End move the focus between the hand's cards. */
  function onKey(e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const step = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1 }[e.key];
    if (!step && e.key !== 'Home' && e.key !== 'End') return;
    const items = [...el.querySelectorAll('.card')].filter((b) => !b.disabled);
    const i = items.indexOf(e.currentTarget);
    if (i < 0) return;
    let j = i;
    if (step) j = Math.min(items.length - 1, Math.max(0, i + step));
    if (e.key === 'Home') j = 0;
    if (e.key === 'End') j = items.length - 1;
    e.preventDefault();
    setStop(items[j].dataset.card);
    items[j].focus();
  }

  /**
   * Draws `cards` (sorted). `playing`: the player's turn to play, with
   * `legal(card)` telling the cards that may be played; `pending` the card
   * sent and not yet answered, `suggested` the card a lesson asks for;
   * `disabled`: no card can be played (the connection is down).
   */
  function update({ shown, cards, playing, legal, pending = null, suggested = null, disabled = false }) {
    el.hidden = !shown;
    keys.hidden = el.hidden;
    const focused = el.contains(document.activeElement) ? document.activeElement : null;
    const focusIndex = focused ? [...el.children].indexOf(focused) : -1;
    el.classList.toggle('my-turn', playing);
    el.style.setProperty('--n', String(Math.max(cards.length, 2)));
    const playable = (c) => playing && legal(c);
    reconcile(el, cards, (c) => c,
      (card) => {
        // The name is the button's own text (hidden from sight), so what a
        // screen reader says matches what the button holds.
        const btn = h('button', { type: 'button', class: `card ${card[1] === 'H' || card[1] === 'D' ? 'red' : 'black'} suit-${card[1]}`, dataset: { card }, tabindex: -1 },
          cardFace(card), h('span', { class: 'sr-only card-name' }));
        btn.addEventListener('click', () => onPlay(card, btn));
        btn.addEventListener('keydown', onKey);
        btn.addEventListener('animationend', () => btn.classList.remove('refused'));
        return btn;
      },
      (btn, card) => {
        const ok = playable(card);
        const hint = playing && card === suggested;
        classes(btn, { legal: ok, illegal: playing && !ok, pending: pending === card, suggested: hint });
        btn.toggleAttribute('data-suggested', hint);
        setText(btn.querySelector('.card-name'), `${cardName(card)}${hint ? ', the card to play' : ok ? ', playable' : playing ? ', cannot be played now' : ''}`);
        btn.disabled = disabled;
      });
    // The focused card keeps the focus; if it left the hand (played), its
    // neighbour takes it.
    if (focused && !el.contains(document.activeElement) && el.children.length) {
      const same = focused.isConnected && el.contains(focused) ? focused : null;
      (same || el.children[Math.min(Math.max(focusIndex, 0), el.children.length - 1)]).focus();
    }
    // The tab stop: the focused card; else the one that had it while it is
    // still in the hand (and playable, on the player's turn); else the
    // first playable card, or the first card.
    let stop = el.contains(document.activeElement) ? document.activeElement.dataset.card : stopCard;
    if (!cards.includes(stop) || (playing && !playable(stop) && !el.contains(document.activeElement))) {
      stop = cards.find(playable) || (cards.includes(stop) ? stop : cards[0]) || null;
    }
    setStop(stop);
  }

  /** Shakes a card that was refused. */
  function refused(btn) {
    btn.classList.remove('refused');
    void btn.offsetWidth;
    btn.classList.add('refused');
  }

  return { el, keys, update, refused };
}

/**
 * The bid picker: one radio group (a single tab stop; the arrow keys, Home
 * and End move the choice, Space chooses, Enter or a double click bids) and
 * the button that bids the choice. `onBid(bid)` sends the bid chosen.
 */
export function createBidPicker({ onBid }) {
  let choice = null;
  let shown = null; // the last `update`'s arguments
  const grid = h('div', { class: 'bid-grid', role: 'radiogroup', 'aria-label': 'Your bid' });
  const confirm = h('button', { type: 'button', class: 'btn btn-primary bid-confirm', disabled: true, onclick: () => send() }, 'Choose a bid');
  const note = h('p', { class: 'bid-note muted' });
  const el = h('div', { class: 'bid-picker', id: 'bid-picker', hidden: true }, grid, h('div', { class: 'bid-row' }, note, confirm));

  function send() {
    if (choice != null) onBid(choice);
  }

  function choose(b) {
    choice = b;
    if (shown && !el.hidden) update(shown);
  }

  function onKey(e, b) {
    if (e.key === 'Enter') {
      e.preventDefault();
      choose(b);
      send();
      return;
    }
    if (e.key === ' ') {
      e.preventDefault();
      choose(b);
      return;
    }
    const { min, max } = shown;
    const step = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1 }[e.key];
    let next = null;
    if (step) next = Math.min(max, Math.max(min, (choice ?? b) + step));
    if (e.key === 'Home') next = min;
    if (e.key === 'End') next = max;
    if (next == null) return;
    e.preventDefault();
    choose(next);
    grid.querySelector(`[data-bid="${next}"]`)?.focus();
  }

  /**
   * Shows the bids from `min` to `max` (or hides the picker: `show`
   * false). `nil`: what nil scores ('±100'); `disabled`: no bid can be made
   * now (one is on its way, or the connection is down); `note`: words beside
   * the button.
   */
  function update(args) {
    const { show, min, max, nil, disabled = false, note: noteText = '' } = args;
    el.hidden = !show;
    if (!show) return;
    shown = args;
    const items = [];
    for (let b = min; b <= max; b++) items.push(b);
    const focusStop = choice ?? items[0];
    reconcile(grid, items, (b) => b,
      (b) => {
        const btn = h('button', { type: 'button', role: 'radio', class: `btn bid-btn ${b === 0 ? 'bid-nil' : ''}`, dataset: { bid: b } },
          b === 0
            ? [h('span', {}, 'Nil'), h('small', {}, `0 tricks · ${nil}`)]
            : [String(b), h('span', { class: 'sr-only' }, b === 1 ? ' trick' : ' tricks')]);
        btn.addEventListener('click', () => choose(b));
        btn.addEventListener('dblclick', () => {
          choose(b);
          send();
        });
        btn.addEventListener('keydown', (e) => onKey(e, b));
        return btn;
      },
      (btn, b) => {
        btn.setAttribute('aria-checked', String(choice === b));
        btn.tabIndex = b === focusStop ? 0 : -1;
        btn.disabled = disabled;
      });
    confirm.disabled = choice == null || disabled;
    setText(confirm, choice == null ? 'Choose a bid' : choice === 0 ? 'Bid nil' : `Bid ${choice}`);
    setText(note, noteText);
  }

  /** Focuses the chosen bid, else the group's tab stop. */
  function focus() {
    const radio = grid.querySelector('[aria-checked="true"]') || grid.querySelector('[tabindex="0"]') || grid.firstElementChild;
    radio?.focus();
    return !!radio;
  }

  return {
    el,
    update,
    focus,
    get choice() { return choice; },
    set choice(b) { choice = b; },
  };
}
