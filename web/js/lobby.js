// The lobby: the player's name, the open tables and the create form.

import { createTable, listMatches, listTables, nameSuggestion } from './api.js';
import { h, replace, announce } from './dom.js';
import {
  MATCH_END_CHOICES, OPTION_MENUS, PHASE_NAME, SEATS, SEAT_NAME, botSeatsOpen, num, optionChips, parseMatchEnd,
} from './rules.js';
import { session } from './session.js';
import { store } from './store.js';

const REFRESH_MS = 4000;

/** A person sits there and is at the table (connected; a seat on autopilot is still connected). */
const isHere = (s) => s.kind === 'human' && (s.status === 'present' || s.status === 'autopilot');

/**
 * How the lobby shows a table (`TableSummary`), from its seats alone
 * (docs/web-client.md, "Which tables the lobby shows"):
 * - `present`: a seated person is at the table;
 * - `botsOnly`: every seat is a bot's;
 * - `open`: before the start, an empty seat; `botSeat`: before the start,
 *   no empty seat but a bot's seat a person may take (`bot_seats_open`);
 * - `main`: shown in the main list, a table a newcomer can join or watch
 *   with somebody there: a person is there, or it has a seat to take and
 *   nobody has sat down yet. Every other table (its people all away or
 *   gone, or bots playing alone) is folded under "Tables with nobody at them".
 */
export function standing(t) {
  const people = t.seats.filter((s) => s.kind === 'human');
  const present = people.some(isHere);
  const lobby = t.phase === 'lobby';
  const open = lobby && t.open_seats > 0;
  const botSeat = lobby && !open && botSeatsOpen(t);
  return {
    present,
    botsOnly: t.seats.every((s) => s.kind === 'bot'),
    open,
    botSeat,
    main: present || ((open || botSeat) && people.length === 0),
  };
}

/** The badge: the phase, unless nobody is at the table or only bots are. */
function badgeOf(t, s) {
  if (s.botsOnly) return { cls: 'bots', text: 'Bots only' };
  if (!s.present && t.phase !== 'finished' && !s.main) return { cls: 'nobody', text: 'Nobody at the table' };
  return { cls: t.phase, text: PHASE_NAME[t.phase] || t.phase };
}

/** A seated person who is not at the table: why. */
const AWAY = { away: 'away', bot: 'away', left: 'left' };

/** Says what is wrong with the name field, and focuses it. */
function refuseName(input, errorEl, text) {
  errorEl.textContent = text;
  input.setAttribute('aria-invalid', 'true');
  input.focus();
  announce(text, true);
  return null;
}

/**
 * Reads and checks the name field, then plays under it: signs the browser
 * in as a guest account of that name the first time, renames the account
 * when the field was changed (session.js). Resolves with the name, or null
 * with the field's message saying why (empty, too long, taken, renamed too
 * lately).
 */
async function takeName(input, errorEl) {
  const name = input.value.trim();
  if (!name || name.length > 24) {
    return refuseName(input, errorEl, name ? 'Names are at most 24 characters.' : 'Type your name first: the other players will see it.');
  }
  try {
    const acc = await session.playAs(name);
    if (acc) input.value = acc.name;
  } catch (err) {
    return refuseName(input, errorEl, err.message);
  }
  input.removeAttribute('aria-invalid');
  errorEl.textContent = '';
  return input.value.trim();
}

function selectField(id, labelText, menu, value, hint) {
  const select = h('select', { id, name: id },
    menu.map((o) => h('option', { value: o.value, selected: o.value === value }, o.hint ? `${o.label} (${o.hint})` : o.label)));
  return h('div', { class: 'field' }, h('label', { for: id }, labelText), select, hint ? h('small', { class: 'hint' }, hint) : null);
}

/**
 * Makes `list` (of `.table-item` rows) one Tab stop whatever its length:
 * one of its buttons has tabindex 0, the others -1 (a roving tab index).
 * The arrow keys move: up and down between the tables, left and right
 * between a table's buttons; Home and End go to the first and the last
 * table. Returns `redraw(rows)`, which replaces the rows and keeps the
 * Tab stop (and the focus) on the same button of the same table when it
 * is still there, else on the first table.
 */
function roving(list) {
  /** The button that holds the list's Tab stop: `{table, nav}`. */
  let stop = null;
  const rowsOf = () => [...list.querySelectorAll(':scope > .table-item')];
  const buttonsOf = (row) => [...row.querySelectorAll('button[data-nav]')];
  /** A row's main button: back to your seat, sit down, else watch. */
  const primaryOf = (row) => {
    const bs = buttonsOf(row);
    return bs.find((b) => b.dataset.nav === 'back') || bs.find((b) => b.dataset.nav === 'join') || bs.find((b) => b.dataset.nav === 'watch') || bs[0] || null;
  };
  /** Gives the Tab stop to `btn` (or, when it is gone, to the first row's main button). */
  function setStop(btn) {
    const all = [...list.querySelectorAll('button[data-nav]')];
    const target = btn && all.includes(btn) ? btn : (rowsOf()[0] && primaryOf(rowsOf()[0]));
    for (const b of all) b.tabIndex = b === target ? 0 : -1;
    stop = target ? { table: target.closest('.table-item').dataset.table, nav: target.dataset.nav } : null;
  }
  list.addEventListener('focusin', (e) => {
    if (e.target.matches?.('button[data-nav]')) setStop(e.target);
  });
  list.addEventListener('keydown', (e) => {
    const btn = e.target.closest?.('button[data-nav]');
    if (!btn || e.altKey || e.metaKey) return;
    const rows = rowsOf();
    const row = btn.closest('.table-item');
    const r = rows.indexOf(row);
    const inRow = buttonsOf(row);
    const k = inRow.indexOf(btn);
    let to = null;
    if (e.key === 'ArrowRight') to = inRow[Math.min(inRow.length - 1, k + 1)];
    else if (e.key === 'ArrowLeft') to = inRow[Math.max(0, k - 1)];
    else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const other = rows[e.key === 'ArrowDown' ? Math.min(rows.length - 1, r + 1) : Math.max(0, r - 1)];
      // The same button in the next table when it has one (Watch to Watch).
      to = buttonsOf(other).find((b) => b.dataset.nav === btn.dataset.nav) || primaryOf(other);
    } else if (e.key === 'Home') to = primaryOf(rows[0]);
    else if (e.key === 'End') to = primaryOf(rows[rows.length - 1]);
    else return;
    e.preventDefault();
    if (to) {
      setStop(to);
      to.focus();
    }
  });
  return function redraw(rows) {
    const hadFocus = list.contains(document.activeElement);
    const kept = stop;
    replace(list, rows);
    const again = kept && rowsOf().find((row) => row.dataset.table === kept.table);
    const btn = again && (buttonsOf(again).find((b) => b.dataset.nav === kept.nav) || primaryOf(again));
    setStop(btn);
    if (hadFocus) list.querySelector('button[tabindex="0"]')?.focus();
  };
}

/**
 * Mounts the lobby in `root`. `go(tableId, intent)` opens a table.
 * Returns a function that unmounts it.
 */
export function mountLobby(root, go) {
  let timer = null;
  let alive = true;

  // The name: the account's; before the first game, the one typed last
  // or a generated one nobody holds, which the player may keep or change.
  const nameInput = h('input', {
    id: 'player-name', name: 'player-name', type: 'text', maxlength: 24, autocomplete: 'nickname',
    placeholder: 'e.g. Ann', value: session.account()?.name || store.name(), 'aria-describedby': 'name-error',
  });
  const nameError = h('p', { id: 'name-error', class: 'field-error', role: 'alert' });
  // A player with an account elsewhere (a passkey) signs in on the account page.
  const signInLink = h('a', { href: '#/me', id: 'lobby-sign-in', class: 'small lobby-sign-in', hidden: !!session.account() || typeof PublicKeyCredential === 'undefined' }, 'Have an account? Sign in');
  let typed = false;
  nameInput.addEventListener('input', () => {
    typed = true;
  });
  session.ready().then(async (acc) => {
    signInLink.hidden = !!acc || typeof PublicKeyCredential === 'undefined';
    if (!alive || typed) return;
    if (acc) nameInput.value = acc.name;
    else if (!nameInput.value) {
      const offered = (await nameSuggestion().catch(() => null))?.name;
      if (alive && !typed && offered && !nameInput.value) nameInput.value = offered;
    }
  });

  // The create form: every option of SPEC §3.
  const matchEnd = h('select', { id: 'opt-match-end', name: 'match_end' },
    ['Target score', 'Fixed number of hands'].map((group) => h('optgroup', { label: group },
      MATCH_END_CHOICES.filter((c) => c.group === group).map((c) => h('option', { value: c.value, selected: c.value === 'target:500' }, c.label)))));
  const mercy = h('input', { id: 'opt-mercy', name: 'mercy', type: 'checkbox' });
  const spectatorChat = h('input', { id: 'opt-spectator-chat', name: 'spectator_chat', type: 'checkbox' });
  const botSeatsOpen = h('input', { id: 'opt-bot-seats-open', name: 'bot_seats_open', type: 'checkbox', checked: true });
  const formError = h('p', { class: 'field-error', role: 'alert' });
  const createBtn = h('button', { type: 'submit', class: 'btn btn-primary', id: 'create-table' }, 'Create table and sit down');
  const form = h('form', { class: 'create-form', id: 'create-form', novalidate: true },
    h('div', { class: 'field' }, h('label', { for: 'opt-name' }, 'Table name'),
      h('input', { id: 'opt-name', name: 'name', type: 'text', maxlength: 40, placeholder: 'Friday night' })),
    h('div', { class: 'field' }, h('label', { for: 'opt-match-end' }, 'Match end'), matchEnd,
      h('small', { class: 'hint' }, 'A hand is always finished; a tie plays another hand.')),
    selectField('opt-nil', 'Nil', OPTION_MENUS.nil, 'hundred'),
    selectField('opt-bag-penalty', 'Bag penalty', OPTION_MENUS.bag_penalty, 'ten_for_hundred', 'Bags are tricks taken over the contract; each scores +1.'),
    selectField('opt-failed-nil', "A nil bidder's tricks", OPTION_MENUS.failed_nil, 'bags_only'),
    selectField('opt-spades-lead', 'Leading spades', OPTION_MENUS.spades_lead, 'after_broken'),
    h('div', { class: 'field field-check' }, mercy,
      h('label', { for: 'opt-mercy' }, 'Mercy rule', h('small', { class: 'hint' }, 'a team at −200 or below loses at once'))),
    selectField('opt-tempo', 'Tempo', OPTION_MENUS.tempo, 'normal'),
    h('div', { class: 'field field-check' }, spectatorChat,
      h('label', { for: 'opt-spectator-chat' }, 'Spectators may chat', h('small', { class: 'hint' }, 'otherwise they only read the table\'s chat'))),
    h('div', { class: 'field field-check' }, botSeatsOpen,
      h('label', { for: 'opt-bot-seats-open' }, 'Friends may take a bot\'s seat', h('small', { class: 'hint' }, 'before the start, a person who joins sits in place of a bot'))),
    selectField('opt-seat', 'Your seat', [{ value: '', label: 'First free seat' }, ...SEATS.map((s) => ({ value: s, label: SEAT_NAME[s] }))], ''),
    formError,
    createBtn,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    createBtn.disabled = true;
    const name = await takeName(nameInput, nameError);
    createBtn.disabled = false;
    if (!name) return;
    const val = (id) => form.querySelector(`#${id}`).value;
    const options = {
      rules: {
        match_end: parseMatchEnd(matchEnd.value),
        nil: val('opt-nil'),
        bag_penalty: val('opt-bag-penalty'),
        failed_nil: val('opt-failed-nil'),
        spades_lead: val('opt-spades-lead'),
        mercy: mercy.checked,
      },
      tempo: val('opt-tempo'),
      spectator_chat: spectatorChat.checked,
      bot_seats_open: botSeatsOpen.checked,
    };
    const tableName = val('opt-name').trim() || `${name}'s table`;
    createBtn.disabled = true;
    formError.textContent = '';
    try {
      const created = await createTable(tableName, options);
      store.setOwner(created.table, created.owner_token);
      go(created.table, { join: { name, seat: val('opt-seat') || null } });
    } catch (err) {
      formError.textContent = `Could not create the table: ${err.message}`;
      createBtn.disabled = false;
    }
  });

  // Play now: a table with the default options, the player and three bots.
  const quickError = h('p', { class: 'field-error', role: 'alert' });
  const quickBtn = h('button', { type: 'button', class: 'btn btn-primary', id: 'play-now' }, 'Play now against bots');
  quickBtn.addEventListener('click', async () => {
    quickBtn.disabled = true;
    const name = await takeName(nameInput, nameError);
    quickBtn.disabled = false;
    if (!name) return;
    quickBtn.disabled = true;
    quickError.textContent = '';
    try {
      const created = await createTable(`${name}'s table`, {});
      store.setOwner(created.table, created.owner_token);
      go(created.table, { join: { name, seat: null, quick: true } });
    } catch (err) {
      quickError.textContent = `Could not create the table: ${err.message}`;
      quickBtn.disabled = false;
    }
  });

  const listKeys = h('p', { class: 'sr-only', id: 'table-list-keys' },
    'One Tab stop: the up and down arrows move between the tables, left and right between a table\'s buttons, Home and End to the first and last table.');
  const list = h('ul', { class: 'table-list', id: 'table-list', 'aria-live': 'polite', 'aria-busy': 'true', 'aria-describedby': 'table-list-keys' });
  const mainRows = roving(list);
  // Tables with nobody at them: folded away, their number in the summary.
  const idleList = h('ul', { class: 'table-list', id: 'idle-table-list', 'aria-describedby': 'table-list-keys' });
  const idleRows = roving(idleList);
  const idleCount = h('span', {});
  const idle = h('details', { class: 'idle-tables', id: 'idle-tables', hidden: true },
    h('summary', {}, 'Tables with nobody at them (', idleCount, ')'),
    h('p', { class: 'muted small' }, 'Their players are away or have left, or bots play by themselves.'),
    idleList);
  const listNote = h('p', { class: 'muted list-note' }, 'Loading tables…');
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-plain btn-small', onclick: () => refresh() }, 'Refresh');

  function tableItem(t) {
    const mine = store.seat(t.table);
    const inLobby = t.phase === 'lobby';
    const st = standing(t);
    const badge = badgeOf(t, st);
    const bots = t.seats.filter((s) => s.kind === 'bot').length;
    const sit = async (seat) => {
      const name = await takeName(nameInput, nameError);
      if (name && alive) go(t.table, { join: { name, seat } });
    };
    const seats = t.seats.map((s) => {
      const empty = s.status === 'empty';
      return h('li', { class: `seat-chip team-${SEATS.indexOf(s.seat) % 2 ? 'ew' : 'ns'} ${empty ? 'open' : ''}` },
        h('span', { class: 'seat-dir' }, SEAT_NAME[s.seat]),
        empty
          ? (inLobby && !mine
            ? h('button', { type: 'button', class: 'btn btn-small btn-sit', dataset: { nav: `sit-${s.seat}` }, onclick: () => sit(s.seat) }, 'Sit here', h('span', { class: 'sr-only' }, ` at ${SEAT_NAME[s.seat]}, ${t.name}`))
            : h('span', { class: 'muted' }, 'open'))
          : h('span', { class: 'seat-who' }, s.name, s.kind === 'bot' ? ' (bot)' : s.kind === 'human' && AWAY[s.status] ? ` (${AWAY[s.status]})` : ''),
      );
    });
    const facts = [
      !inLobby ? `Hand ${t.hand_number} · ${num(t.scores[0])} – ${num(t.scores[1])}`
        : st.open ? `${t.open_seats} open seat${t.open_seats === 1 ? '' : 's'}`
          : st.botSeat ? `${bots} bot${bots === 1 ? '\'s seat' : 's\' seats'} to take` : 'Every seat is taken',
      t.spectators ? `${t.spectators} watching` : null,
    ].filter(Boolean).join(' · ');
    return h('li', { class: `table-item phase-${t.phase}`, dataset: { table: t.table } },
      h('div', { class: 'ti-head' },
        h('h3', { class: 'ti-name' }, t.name),
        h('span', { class: `phase-badge phase-${badge.cls}` }, badge.text)),
      h('ul', { class: 'chips', 'aria-label': 'Options' }, optionChips(t.options).map((c) => h('li', { class: 'chip' }, c))),
      h('ul', { class: 'seat-chips', 'aria-label': 'Seats' }, seats),
      h('div', { class: 'ti-foot' },
        h('span', { class: 'muted' }, facts),
        h('span', { class: 'ti-actions' },
          mine
            ? h('button', { type: 'button', class: 'btn btn-primary btn-small btn-back', dataset: { nav: 'back' }, onclick: () => go(t.table, null) },
              `Back to your seat (${SEAT_NAME[mine.seat] || 'seat'})`, h('span', { class: 'sr-only' }, ` at ${t.name}`))
            : st.open
              ? h('button', { type: 'button', class: 'btn btn-primary btn-small btn-join', dataset: { nav: 'join' }, onclick: () => sit(null) }, 'Sit down', h('span', { class: 'sr-only' }, ` at ${t.name}`))
              // No empty seat, but a person may sit in place of a bot
              // before the start: the server gives the first bot's seat.
              : st.botSeat
                ? h('button', { type: 'button', class: 'btn btn-primary btn-small btn-join btn-take-bot', dataset: { nav: 'join' }, onclick: () => sit(null) }, 'Take a bot\'s seat', h('span', { class: 'sr-only' }, ` at ${t.name}`))
                : null,
          mine ? null : h('button', { type: 'button', class: 'btn btn-plain btn-small btn-watch', dataset: { nav: 'watch' }, onclick: () => go(t.table, { watch: true }) }, 'Watch', h('span', { class: 'sr-only' }, ` ${t.name}`)),
        ),
      ),
    );
  }

  // Finished matches, from the event log: they outlive a restart, unlike
  // the tables in memory.
  const recent = h('ul', { class: 'recent-list', id: 'recent-list' });
  // When a match was played: the day (today, yesterday, or the date) and
  // the time it began, in the browser's language.
  const timeOf = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
  const dayOf = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
  function playedOn(ms) {
    const at = new Date(ms);
    const days = Math.round((new Date().setHours(0, 0, 0, 0) - new Date(ms).setHours(0, 0, 0, 0)) / 86_400_000);
    const day = days === 0 ? 'Today' : days === 1 ? 'Yesterday' : dayOf.format(at);
    return h('time', { class: 'muted small recent-when', datetime: at.toISOString() }, `${day}, ${timeOf.format(at)}`);
  }
  const recentNote = h('p', { class: 'muted list-note' }, 'Loading…');
  // Signed in: the player's own matches, or everybody's (one click apart).
  let whose = 'mine';
  const whoseBtn = (value, label) => h('button', {
    type: 'button', class: 'btn btn-small btn-plain', id: `recent-${value}`, 'aria-pressed': String(whose === value),
    onclick: () => {
      whose = value;
      for (const b of whoseBtns.children) b.setAttribute('aria-pressed', String(b.id === `recent-${value}`));
      recentShown = null;
      refreshRecent();
    },
  }, label);
  const whoseBtns = h('div', { class: 'recent-whose', role: 'group', 'aria-label': 'Whose matches', hidden: true },
    whoseBtn('mine', 'Yours'), whoseBtn('all', 'Everybody\'s'));
  let recentShown = null;
  async function refreshRecent() {
    try {
      const acc = session.account();
      const mine = !!acc && whose === 'mine';
      whoseBtns.hidden = !acc;
      // The server finds the finished ones, however many newer matches
      // are still in play.
      const matches = (await listMatches(10, { finished: true, mine })).filter((m) => m.hands_played > 0);
      if (!alive) return;
      const sig = JSON.stringify([mine, matches]);
      if (sig === recentShown) return;
      recentShown = sig;
      replace(recent, matches.map((m) => {
        const [ns, ew] = m.scores;
        const players = (a, b) => `${m.seats[a]?.name || SEAT_NAME[SEATS[a]]} & ${m.seats[b]?.name || SEAT_NAME[SEATS[b]]}`;
        return h('li', { class: 'recent-item', dataset: { table: m.table } },
          h('div', { class: 'recent-text' },
            h('span', { class: 'recent-name' }, m.name),
            h('span', { class: 'muted small' }, `${players(0, 2)} ${num(ns)} – ${num(ew)} ${players(1, 3)} · ${m.hands_played} hand${m.hands_played === 1 ? '' : 's'}`),
            playedOn(m.created_at)),
          h('a', { class: 'btn btn-plain btn-small btn-replay', href: `#/replay/${m.table}` }, 'Replay', h('span', { class: 'sr-only' }, ` ${m.name}`)));
      }));
      recentNote.textContent = matches.length ? '' : mine ? 'You have not finished a match yet.' : 'No finished match yet.';
    } catch (err) {
      if (alive) recentNote.textContent = `Could not load the matches (${err.message}).`;
    }
  }

  let shown = null;
  async function refresh() {
    clearTimeout(timer);
    try {
      const tables = await listTables();
      if (!alive) return;
      // Redraw only on a change, so a button is never swapped mid-click.
      const sig = JSON.stringify(tables);
      if (sig === shown) {
        timer = setTimeout(refresh, REFRESH_MS);
        return;
      }
      shown = sig;
      // The main list, people first: your own tables, then the tables with
      // a person at them (a seat to take first, then matches in play, then
      // finished ones), then the tables with a seat to take that nobody has
      // sat at yet. The rest fold away, in the same order.
      const rank = { lobby: 0, bidding: 1, playing: 1, finished: 2 };
      const rows = tables.map((t) => ({ t, s: standing(t), mine: !!store.seat(t.table) }));
      const key = ({ t, s, mine }) => [mine ? 0 : 1, s.present ? 0 : 1, s.open || s.botSeat ? 0 : 1, rank[t.phase] ?? 3];
      const order = (a, b) => {
        const ka = key(a);
        const kb = key(b);
        return ka.reduce((d, x, i) => d || x - kb[i], 0) || b.t.created_at - a.t.created_at;
      };
      const main = rows.filter((r) => r.mine || r.s.main).sort(order);
      const folded = rows.filter((r) => !(r.mine || r.s.main)).sort(order);
      mainRows(main.map((r) => tableItem(r.t)));
      idleRows(folded.map((r) => tableItem(r.t)));
      idleCount.textContent = String(folded.length);
      idle.hidden = folded.length === 0;
      list.setAttribute('aria-busy', 'false');
      listNote.textContent = main.length ? '' : folded.length ? 'Nobody is at a table now: create one.' : 'No tables yet: create one.';
    } catch (err) {
      if (!alive) return;
      listNote.textContent = `Could not load the tables (${err.message}). Retrying…`;
    }
    refreshRecent();
    if (alive) timer = setTimeout(refresh, REFRESH_MS);
  }

  const onVisible = () => {
    if (document.visibilityState === 'visible') refresh();
  };
  document.addEventListener('visibilitychange', onVisible);

  replace(root,
    h('div', { class: 'lobby' },
      h('section', { class: 'panel name-panel', 'aria-labelledby': 'name-h' },
        h('h2', { id: 'name-h', class: 'sr-only' }, 'You'),
        h('div', { class: 'name-row' },
          h('div', { class: 'field field-inline' }, h('label', { for: 'player-name' }, 'Your name'), nameInput, signInLink),
          h('div', { class: 'quick-play' }, quickBtn,
            h('small', { class: 'hint' }, 'First to 500, nil ±100, normal tempo: you and three bots.'),
            h('a', { class: 'btn btn-plain', href: '#/tutorial', id: 'learn-to-play' }, 'Learn to play'),
            h('small', { class: 'hint' }, 'a guided hand: bids, suits, trumps, nil and bags'))),
        nameError, quickError),
      h('div', { class: 'lobby-grid' },
        h('section', { class: 'panel tables-panel', 'aria-labelledby': 'tables-h' },
          h('div', { class: 'panel-head' }, h('h2', { id: 'tables-h' }, 'Tables'), refreshBtn),
          listNote, listKeys, list, idle),
        h('div', { class: 'lobby-side' },
          h('section', { class: 'panel create-panel', 'aria-labelledby': 'create-h' },
            // The full options fold away: most players want the defaults.
            h('details', { class: 'create-details', id: 'create-details' },
              h('summary', {}, h('h2', { id: 'create-h' }, 'New table with your own rules')),
              form)),
          h('section', { class: 'panel recent-panel', 'aria-labelledby': 'recent-h' },
            h('div', { class: 'panel-head' }, h('h2', { id: 'recent-h' }, 'Recent matches'), whoseBtns),
            recentNote, recent)),
      ),
    ),
  );
  refresh();
  // Signed in (or out) meanwhile: the player's own matches.
  const unsubscribe = session.subscribe((acc) => {
    signInLink.hidden = !!acc || typeof PublicKeyCredential === 'undefined';
    refreshRecent();
  });

  return () => {
    alive = false;
    unsubscribe();
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', onVisible);
  };
}
