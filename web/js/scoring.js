// A hand's scoring, the match's score sheet and the match result.

import { h } from './dom.js';
import { SEATS, SEAT_NAME, TEAM_NAME, TEAMS, num, signed } from './rules.js';

const TEAM_SEATS = [['north', 'south'], ['east', 'west']];

function seatLabel(seats, seat) {
  return seats?.[SEATS.indexOf(seat)]?.name || SEAT_NAME[seat];
}

function bidText(bid) {
  return bid === 0 ? 'nil' : String(bid);
}

/** The scoring of one finished hand (`HandResult`), every part of each team's sum. */
export function handScoring(result, seats, rules, you) {
  const myTeam = you ? (SEATS.indexOf(you) % 2) : -1;
  const cell = (t, content, cls = '') => h('td', { class: `${cls} ${t === myTeam ? 'mine' : ''}` }, content);
  const row = (label, fn, cls = '') => h('tr', { class: cls }, h('th', { scope: 'row' }, label), [0, 1].map((t) => cell(t, fn(result.teams[t], t))));

  const players = (t) => TEAM_SEATS[t].map((seat) => {
    const i = SEATS.indexOf(seat);
    const nil = result.nils[i];
    return h('div', { class: 'player-line' },
      h('span', { class: 'who' }, seatLabel(seats, seat)),
      ' bid ', h('b', {}, bidText(result.bids[i])),
      ', took ', h('b', {}, String(result.tricks[i])),
      nil ? h('span', { class: `nil-tag ${nil}` }, nil === 'made' ? ' nil made' : ' nil failed') : null,
    );
  });

  const contract = (tm) => {
    if (tm.contract === 0) return h('span', { class: 'muted' }, 'no contract (nil bids only)');
    return [
      `${tm.contract} bid, ${tm.counted_tricks} counted: `,
      h('b', { class: tm.made ? 'pos' : 'neg' }, `${tm.made ? 'made' : 'set'} ${signed(tm.contract_points)}`),
    ];
  };
  const bags = (tm) => (tm.bags ? [`${tm.bags} bag${tm.bags === 1 ? '' : 's'} `, h('b', {}, signed(tm.bag_points))] : h('span', { class: 'muted' }, 'none'));
  const nil = (tm) => (tm.nil_points ? h('b', { class: tm.nil_points > 0 ? 'pos' : 'neg' }, signed(tm.nil_points)) : h('span', { class: 'muted' }, '—'));
  const penalty = (tm) => (tm.bag_penalty ? h('b', { class: 'neg' }, signed(tm.bag_penalty)) : h('span', { class: 'muted' }, rules?.bag_penalty === 'off' ? 'off' : '—'));

  return h('table', { class: 'scoring', 'data-hand': result.hand_number },
    h('caption', { class: 'sr-only' }, `Scoring of hand ${result.hand_number}`),
    h('thead', {}, h('tr', {}, h('td', {}), [0, 1].map((t) => h('th', { scope: 'col', class: t === myTeam ? 'mine' : '' }, TEAM_NAME[TEAMS[t]], t === myTeam ? h('span', { class: 'you-tag' }, 'you') : null)))),
    h('tbody', {},
      row('Players', (tm, t) => players(t)),
      row('Contract', contract, 'contract-row'),
      row('Bags', bags, 'bags-row'),
      row('Nil', nil, 'nil-row'),
      row('Bag penalty', penalty, 'penalty-row'),
      row('This hand', (tm) => h('b', { class: `total ${tm.hand_points >= 0 ? 'pos' : 'neg'}` }, signed(tm.hand_points)), 'hand-row'),
      row('Score', (tm) => [h('b', { class: 'score' }, num(tm.score)), h('span', { class: 'muted' }, ` · bags ${tm.bag_count}`)], 'score-row'),
    ),
  );
}

/** One line of text summing up a hand, for announcements. */
export function handSummary(result) {
  const [ns, ew] = result.teams;
  return `Hand ${result.hand_number} scored. North–South ${signed(ns.hand_points)}, now ${num(ns.score)}. East–West ${signed(ew.hand_points)}, now ${num(ew.score)}.`;
}

/**
 * Every finished hand in a table (`TableStatus.hands`). With `onHand`, each
 * hand's number is a button that opens that hand's full scoring.
 */
export function scoreSheet(hands, seats, you, onHand) {
  const myTeam = you ? (SEATS.indexOf(you) % 2) : -1;
  if (!hands.length) return h('p', { class: 'muted' }, 'No hand has been finished yet.');
  const teamCells = (r, t) => {
    const [a, b] = TEAM_SEATS[t].map((seat) => SEATS.indexOf(seat));
    const tm = r.teams[t];
    const cls = t === myTeam ? 'mine' : '';
    return [
      h('td', { class: cls }, `${bidText(r.bids[a])} + ${bidText(r.bids[b])}`),
      h('td', { class: `${cls} took` }, `${r.tricks[a] + r.tricks[b]}`),
      h('td', { class: `${cls} ${tm.hand_points >= 0 ? 'pos' : 'neg'}` }, signed(tm.hand_points)),
      h('td', { class: `${cls} total` }, num(tm.score), h('small', { class: 'muted bag-count' }, ` (${tm.bag_count})`)),
    ];
  };
  const names = (t) => TEAM_SEATS[t].map((seat) => seatLabel(seats, seat)).join(' & ');
  const handCell = (r) => h('th', { scope: 'row' }, onHand
    ? h('button', { type: 'button', class: 'btn btn-small btn-plain hand-open', dataset: { hand: r.hand_number }, onclick: () => onHand(r) },
      String(r.hand_number), h('span', { class: 'sr-only' }, ': show the scoring'))
    : String(r.hand_number));
  return h('div', { class: 'sheet-wrap' },
    h('table', { class: 'sheet' },
      h('caption', {}, `Bids are listed North then South, East then West; each team's bags are in brackets after its score.${onHand ? ' Choose a hand to see its whole scoring.' : ''}`),
      h('thead', {},
        h('tr', {}, h('th', { rowspan: 2, scope: 'col' }, 'Hand'),
          [0, 1].map((t) => h('th', { colspan: 4, scope: 'colgroup', class: t === myTeam ? 'mine' : '' }, TEAM_NAME[TEAMS[t]], h('br'), h('small', {}, names(t))))),
        h('tr', {}, [0, 1].flatMap(() => ['Bids', 'Took', 'Hand', 'Score'].map((x) => h('th', { scope: 'col', class: x === 'Took' ? 'took' : '' }, x)))),
      ),
      h('tbody', {}, hands.map((r) => h('tr', { dataset: { hand: r.hand_number } }, handCell(r), teamCells(r, 0), teamCells(r, 1)))),
    ),
  );
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "North–South win 512 to 388" */
export function resultHeadline(result, you) {
  const [ns, ew] = result.scores;
  if (result.outcome.result !== 'win') return `A draw at ${num(ns)} all after ${result.hands_played} hands`;
  const t = TEAMS.indexOf(result.outcome.team);
  const mine = you ? (SEATS.indexOf(you) % 2) === t : null;
  const who = TEAM_NAME[result.outcome.team];
  const score = t === 0 ? `${num(ns)} to ${num(ew)}` : `${num(ew)} to ${num(ns)}`;
  const lead = mine === true ? 'You win! ' : mine === false ? 'You lose. ' : '';
  return `${lead}${who} win ${score}`;
}

export function resultDetail(result) {
  const hands = plural(result.hands_played, 'hand');
  switch (result.reason) {
    case 'target': return `A team reached the target score; ${hands} played.`;
    case 'hands': return `All ${hands} have been played.`;
    case 'mercy': return `A team fell to −200 or below (mercy rule) after ${hands}.`;
    case 'hand_cap': return `The match stopped at the ${result.hands_played}-hand safety cap.`;
    default: return `${hands} played.`;
  }
}
