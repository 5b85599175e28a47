// How to play, told with this table's own options.

import { h } from './dom.js';
import { optionSentences } from './rules.js';

/** The "How to play" text for a table with `options`. */
export function howToPlay(options) {
  const r = options.rules;
  const nilValue = r.nil === 'fifty' ? 50 : 100;
  const end = r.match_end?.target != null
    ? `The first team to reach ${r.match_end.target} points at the end of a hand wins (a tie plays another hand).`
    : `After ${r.match_end.hands} hands the higher score wins (a tie plays another hand).`;
  const bid = r.nil === 'off'
    ? 'Each player bids once, from 1 to 13 tricks: nil is off at this table.'
    : `Each player bids once, from 0 to 13 tricks. 0 is nil: take no trick at all for +${nilValue}, or lose ${nilValue} if you take one.`;
  const lead = r.spades_lead === 'any_time'
    ? 'Spades may be led at any time here.'
    : 'Spades cannot be led until one has been played on another suit (spades are "broken"), unless you hold nothing else.';
  const bags = r.bag_penalty === 'off'
    ? 'Each trick over the contract is a bag worth +1; bags cost nothing here.'
    : `Each trick over the contract is a bag worth +1, but every ${r.bag_penalty === 'five_for_fifty' ? '5 bags cost 50' : '10 bags cost 100'} points.`;
  const failedNil = r.nil === 'off' ? null
    : r.failed_nil === 'count_for_partner'
      ? "A nil bidder's tricks count toward the partner's contract."
      : "A nil bidder's tricks never count toward the partner's contract: they are only bags.";
  return [
    h('section', { class: 'howto', 'aria-labelledby': 'howto-aim' },
      h('h3', { id: 'howto-aim' }, 'The aim'),
      h('p', {}, 'Four players in two teams: North with South, East with West. Spades are always trumps. ', end)),
    h('section', { class: 'howto', 'aria-labelledby': 'howto-bid' },
      h('h3', { id: 'howto-bid' }, 'Bidding'),
      h('p', {}, bid, ' A team\'s contract is the sum of its two bids.')),
    h('section', { class: 'howto', 'aria-labelledby': 'howto-play' },
      h('h3', { id: 'howto-play' }, 'Playing'),
      h('p', {}, 'The player left of the dealer leads. Follow the led suit if you can; otherwise play anything, a spade included. The highest spade wins the trick, else the highest card of the led suit; the winner leads next. ', lead)),
    h('section', { class: 'howto', 'aria-labelledby': 'howto-score' },
      h('h3', { id: 'howto-score' }, 'Scoring'),
      h('p', {}, 'Make the contract: +10 a bid trick. Miss it: −10 a bid trick. ', bags, failedNil ? ` ${failedNil}` : '',
        r.mercy ? ' Mercy rule: a team at −200 or below loses at once.' : '')),
    h('section', { class: 'howto', 'aria-labelledby': 'howto-keys' },
      h('h3', { id: 'howto-keys' }, 'At the table'),
      h('p', {}, 'Playable cards are raised when it is your turn; the ring round your avatar is your clock (',
        options.tempo === 'fast' ? '15 s a card, 25 s a bid' : options.tempo === 'relaxed' ? '60 s a card, 75 s a bid' : '30 s a card, 40 s a bid',
        '). When time runs out the table plays for you; three times in a row and the autopilot takes over until you press Take over. With the keyboard: Tab to your hand or the bids, arrow keys to choose, Enter to play or bid.')),
    h('h3', {}, 'This table\'s options'),
    h('dl', { class: 'rules-list' }, optionSentences(options).flatMap(([k, val]) => [h('dt', {}, k), h('dd', {}, val)])),
  ];
}
