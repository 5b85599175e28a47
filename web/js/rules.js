// Plain-English names for seats, teams and the table options (SPEC §3).

export const SEATS = ['north', 'east', 'south', 'west'];
export const SEAT_NAME = { north: 'North', east: 'East', south: 'South', west: 'West' };
export const TEAMS = ['north_south', 'east_west'];
export const TEAM_NAME = { north_south: 'North–South', east_west: 'East–West' };

export const seatIndex = (seat) => SEATS.indexOf(seat);
/**
 * A person may sit in place of one of the table's bots (`bot_seats_open`,
 * on unless turned off; the server allows it before the start): a
 * `TableSummary` or a view.
 */
export const botSeatsOpen = (t) => t.options?.bot_seats_open !== false && t.seats.some((s) => s.kind === 'bot');
export const partnerOf = (seat) => SEATS[(seatIndex(seat) + 2) % 4];

/** The option menus of the create form, in SPEC §3 order. */
export const MATCH_END_CHOICES = [
  { value: 'target:500', label: 'First to 500 points', group: 'Target score' },
  { value: 'target:300', label: 'First to 300 points', group: 'Target score' },
  { value: 'target:250', label: 'First to 250 points', group: 'Target score' },
  { value: 'target:200', label: 'First to 200 points', group: 'Target score' },
  { value: 'hands:5', label: '5 hands', group: 'Fixed number of hands' },
  { value: 'hands:9', label: '9 hands', group: 'Fixed number of hands' },
  { value: 'hands:11', label: '11 hands', group: 'Fixed number of hands' },
];

export const OPTION_MENUS = {
  nil: [
    { value: 'hundred', label: 'Nil ±100', hint: 'made +100, failed −100' },
    { value: 'fifty', label: 'Nil ±50', hint: 'made +50, failed −50' },
    { value: 'off', label: 'No nil', hint: 'bids are 1 to 13' },
  ],
  bag_penalty: [
    { value: 'ten_for_hundred', label: '10 bags cost 100' },
    { value: 'five_for_fifty', label: '5 bags cost 50' },
    { value: 'off', label: 'No bag penalty', hint: 'bags still score +1 each' },
  ],
  failed_nil: [
    { value: 'bags_only', label: 'Count only as bags' },
    { value: 'count_for_partner', label: "Also count toward the partner's contract" },
  ],
  spades_lead: [
    { value: 'after_broken', label: 'Only once spades are broken' },
    { value: 'any_time', label: 'At any time' },
  ],
  tempo: [
    { value: 'relaxed', label: 'Relaxed', hint: '60 s a card, 75 s a bid' },
    { value: 'normal', label: 'Normal', hint: '30 s a card, 40 s a bid' },
    { value: 'fast', label: 'Fast', hint: '15 s a card, 25 s a bid' },
  ],
};

export function matchEndText(matchEnd) {
  if (matchEnd?.target != null) return `First to ${matchEnd.target}`;
  if (matchEnd?.hands != null) return `${matchEnd.hands} hands`;
  return '';
}

export function parseMatchEnd(value) {
  const [kind, n] = value.split(':');
  return { [kind]: Number(n) };
}

const label = (menu, value) => OPTION_MENUS[menu].find((o) => o.value === value)?.label || value;

/** Short chips describing a table's options, for the lobby and the table. */
export function optionChips(options) {
  const r = options.rules;
  const chips = [
    matchEndText(r.match_end),
    label('nil', r.nil),
    r.bag_penalty === 'off' ? 'No bag penalty' : label('bag_penalty', r.bag_penalty),
    r.nil === 'off' ? null : r.failed_nil === 'bags_only' ? 'Failed nil: bags' : 'Failed nil: counts for partner',
    r.spades_lead === 'after_broken' ? 'Spades must break' : 'Spades lead any time',
    r.mercy ? 'Mercy at −200' : null,
    `${label('tempo', options.tempo)} tempo`,
  ];
  return chips.filter(Boolean);
}

/** The rules as sentences, for the table's rules panel. */
export function optionSentences(options) {
  const r = options.rules;
  const nil = OPTION_MENUS.nil.find((o) => o.value === r.nil);
  const tempo = OPTION_MENUS.tempo.find((o) => o.value === options.tempo);
  return [
    ['Match end', r.match_end?.target != null
      ? `the first team to ${r.match_end.target} points after a hand wins`
      : `the higher score after ${r.match_end.hands} hands wins`],
    ['Nil', `${nil.label} (${nil.hint})`],
    ['Bags', r.bag_penalty === 'off' ? 'no penalty (bags still score +1 each)' : `${label('bag_penalty', r.bag_penalty)} points`],
    ["A nil bidder's tricks", r.nil === 'off' ? 'not applicable (no nil)' : label('failed_nil', r.failed_nil).toLowerCase()],
    ['Leading spades', label('spades_lead', r.spades_lead).toLowerCase()],
    ['Mercy rule', r.mercy ? 'a team at −200 or below loses at once' : 'off'],
    ['Tempo', `${tempo.label.toLowerCase()}: ${tempo.hint}`],
    ['Chat', options.spectator_chat ? 'players and spectators may write' : 'players write; spectators only read'],
  ];
}

export const PHASE_NAME = { lobby: 'Waiting for players', bidding: 'Bidding', playing: 'Playing', finished: 'Finished' };

/** "+72", "−40", "0" with a real minus sign. */
export function signed(n) {
  if (n > 0) return `+${n}`;
  if (n < 0) return `−${-n}`;
  return '0';
}

/** A score with a real minus sign. */
export function num(n) {
  return n < 0 ? `−${-n}` : String(n);
}
