// The table screen: one WebSocket connection to one table, drawn from the
// latest view the server sent. The skeleton is built once; every view
// updates it in place (so focus and running animations survive).

import { notificationsSupported, setNotify, turnAlert } from './alert.js';
import { nameSuggestion, tableStatus } from './api.js';
import { chatPanel } from './chat.js';
import { cardName, cardView, fullDeck, sortHand, winningIndex } from './cards.js';
import { clockRing, mmss, remaining, serverNow, setRing, syncServerTime } from './clock.js';
import { Connection } from './conn.js';
import { anyOpen, closeAllDialogs, closeDialog, confirmDialog, isOpen, showDialog } from './dialogs.js';
import { announce, classes, h, icon, replace, setText } from './dom.js';
import { contributeSeed, showVerification } from './fair.js';
import { createBidPicker, createHand, refusalSentence } from './hand.js';
import { howToPlay } from './howto.js';
import { paintAvatar } from './looks.js';
import {
  PHASE_NAME, SEATS, SEAT_NAME, TEAM_NAME, TEAMS, botSeatsOpen, matchEndText, num, partnerOf, seatIndex,
} from './rules.js';
import { handScoring, handSummary, resultDetail, resultHeadline, scoreSheet } from './scoring.js';
import { session } from './session.js';
import { store } from './store.js';

const POSITIONS = ['bottom', 'left', 'top', 'right'];
const LINGER_MS = 1400;
const NOTICE_MS = 7000;
const SCORING_STEPS_ASIDE_MS = 15000;

/** Where each seat sits on screen: the viewer at the bottom, partner on top. */
function positionOf(seat, viewer) {
  const base = viewer ? seatIndex(viewer) : seatIndex('south');
  return POSITIONS[(seatIndex(seat) - base + 4) % 4];
}

function initials(name) {
  const parts = String(name || '?').trim().split(/\s+/);
  const letters = parts.length > 1 ? parts[0][0] + parts[1][0] : parts[0].slice(0, 2);
  return letters.toUpperCase();
}

function sameTrick(a, b) {
  if (!a || !b) return a === b;
  return a.leader === b.leader && a.cards.join() === b.cards.join();
}

/** Completes a trick object with its winner, computed from the cards. */
function withWinner(trick) {
  const w = trick.cards.length === 4 ? SEATS[(seatIndex(trick.leader) + winningIndex(trick.cards)) % 4] : null;
  return { ...trick, winner: trick.winner || w };
}

/** A list in words: "a", "a and b", "a, b and c". */
function listInWords(items) {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * Moves the table made, in order, in words: "played 8 of diamonds and bid 3",
 * "bid 2 and played 8 of diamonds, 2 of clubs and king of hearts"; a run of
 * bids or of cards says its verb once.
 */
function movesInWords(moves) {
  const runs = [];
  for (const m of moves) {
    const bid = m.action.bid != null;
    const what = bid ? (m.action.bid === 0 ? 'nil' : String(m.action.bid)) : cardName(m.action.play);
    const last = runs.at(-1);
    if (last && last.bid === bid) last.items.push(what);
    else runs.push({ bid, items: [what] });
  }
  const said = runs.map((r, i) => `${r.bid ? 'bid' : 'played'} ${i === runs.length - 1 ? listInWords(r.items) : r.items.join(', ')}`);
  return listInWords(said);
}

/**
 * Mounts the table `tableId` in `root`. `intent` is `{join: {name, seat}}`
 * (take a seat; with `quick: true` the owner also fills the other seats with
 * bots and starts), `{watch: true}` or null (resume the seat, else watch).
 *
 * Signed in (session.js), the page sits and comes back as the account: it
 * resumes without a token, so a reload, a second tab or a browser whose
 * stored seat is gone finds the account's seat, and it falls back to a
 * stored seat token (a seat taken before signing in) when the account has
 * none here.
 */
export function mountTable(root, tableId, intent, { setTitle }) {
  const st = {
    view: null,
    seq: -1,
    joinIntent: intent?.join || null,
    link: intent?.link || null,
    pendingCard: null,
    pendingBid: false,
    linger: null,
    finalTrick: null,
    refusal: null,
    refusalTimer: null,
    turnKey: null,
    lastActionKey: null,
    returning: null,
    firstView: true,
    net: { status: 'connecting' },
    notice: null,
    scoringTimer: null,
    gone: false,
  };

  // ---- skeleton --------------------------------------------------------
  const teamBox = (t) => h('div', { class: `team team-${t === 0 ? 'ns' : 'ew'}`, dataset: { team: TEAMS[t] } },
    h('div', { class: 'team-name' }, h('span', { class: 'team-label' }, h('span', { class: 'long' }, TEAM_NAME[TEAMS[t]]), h('span', { class: 'short', 'aria-hidden': 'true' }, t === 0 ? 'N–S' : 'E–W')), h('span', { class: 'you-tag', hidden: true }, 'you')),
    h('div', { class: 'team-players' }),
    h('div', { class: 'team-score', 'aria-label': 'score' }, '0'),
    h('div', { class: 'team-meta' }, h('span', { class: 'team-bags' }), h('span', { class: 'team-hand' })),
  );
  const teams = [teamBox(0), teamBox(1)];
  const handNo = h('div', { class: 'hand-no' });
  const matchEnd = h('div', { class: 'match-end' });
  const broken = h('div', { class: 'broken', hidden: true }, icon('suit-S', 'pip'), ' broken');
  const scorebar = h('section', { class: 'scorebar', 'aria-label': 'Scores' },
    teams[0], h('div', { class: 'score-mid' }, handNo, matchEnd, broken), teams[1]);

  const seatEls = {};
  for (const seat of SEATS) {
    const ring = clockRing();
    const avatar = h('div', { class: 'avatar', 'aria-hidden': 'true' });
    const sitBtn = h('button', { type: 'button', class: 'btn btn-small btn-primary sit-btn', hidden: true, onclick: () => sitAt(seat) }, 'Sit here');
    seatEls[seat] = {
      root: h('div', { class: `seat team-${seatIndex(seat) % 2 ? 'ew' : 'ns'}`, dataset: { seat } },
        h('div', { class: 'avatar-wrap' }, ring, avatar,
          h('span', { class: 'bot-icon', hidden: true, title: 'bot' }, icon('icon-bot')),
          h('span', { class: 'dealer-chip', hidden: true, title: 'dealer' }, 'D')),
        h('div', { class: 'seat-info' },
          h('div', { class: 'seat-name' }),
          h('div', { class: 'seat-meta' }, h('span', { class: 'seat-dir' }, SEAT_NAME[seat]), h('span', { class: 'seat-bid' })),
          h('div', { class: 'seat-status' })),
        sitBtn),
      ring, avatar, sitBtn,
    };
  }
  const slots = {};
  for (const pos of POSITIONS) slots[pos] = h('div', { class: `slot slot-${pos}` });
  const centerMsg = h('div', { class: 'center-msg' });
  const trickBox = h('div', { class: 'trick-box', role: 'group', 'aria-label': 'Cards on the table' }, ...POSITIONS.map((p) => slots[p]));
  const trickArea = h('div', { class: 'trick-area' }, trickBox, centerMsg);
  const felt = h('section', { class: 'felt', 'aria-label': 'Table' },
    ...SEATS.map((s) => seatEls[s].root), trickArea);

  const refusal = h('div', { class: 'refusal', id: 'refusal', role: 'alert', hidden: true });
  const turnText = h('span', { class: 'turn-text' });
  const myClock = h('span', { class: 'my-clock', hidden: true });
  const turnWarn = h('span', { class: 'turn-warn', id: 'turn-warn' });
  const turnLine = h('div', { class: 'turn-line', id: 'turn-line', tabindex: -1 }, turnText, myClock, turnWarn);
  // The bid picker and the hand (one tab stop, arrow keys, Enter plays):
  // the same widgets as in the tutorial (hand.js).
  const bids = createBidPicker({ onBid: () => sendBid() });
  const bidPicker = bids.el;
  const hand = createHand({ onPlay: (card, btn) => playCard(card, btn) });
  const handKeys = hand.keys;
  const handEl = hand.el;
  const watchNote = h('p', { class: 'watch-note', hidden: true });

  const offline = h('div', { class: 'offline-banner', id: 'offline-banner', role: 'alert', hidden: true });
  const lastTrickBtn = h('button', { type: 'button', class: 'btn btn-plain', id: 'btn-last-trick', onclick: () => showLastTrick() }, 'Last trick');
  const chatCount = h('span', { class: 'chat-count', hidden: true });
  const chatBtn = h('button', { type: 'button', class: 'btn btn-plain', id: 'btn-chat', 'aria-expanded': 'false', 'aria-controls': 'chat-panel', onclick: () => toggleChat() }, 'Chat', chatCount);
  const alertsBtn = h('button', { type: 'button', class: 'btn btn-plain', id: 'btn-alerts', onclick: () => showAlerts() }, 'Alerts');
  const sheetBtn = h('button', { type: 'button', class: 'btn btn-plain', id: 'btn-sheet', onclick: () => showSheet() }, 'Score sheet');
  const rulesBtn = h('button', { type: 'button', class: 'btn btn-plain', id: 'btn-rules', onclick: () => showRules() }, 'Rules');
  const takeOverBtn = h('button', { type: 'button', class: 'btn btn-primary', id: 'btn-take-over', hidden: true, onclick: () => takeOver() }, 'Take over');
  const leaveBtn = h('button', { type: 'button', class: 'btn btn-danger-plain', id: 'btn-leave', hidden: true, onclick: () => leave() }, 'Leave');
  // At the top, so that neither the bid picker nor a phone's height can
  // push it out of sight.
  const toolbar = h('nav', { class: 'toolbar', 'aria-label': 'Table' }, lastTrickBtn, sheetBtn, rulesBtn, chatBtn, alertsBtn, takeOverBtn, leaveBtn);

  const dock = h('section', { class: 'dock', 'aria-label': 'Your hand and actions' },
    refusal, turnLine, bidPicker, handKeys, handEl, watchNote);
  const chat = chatPanel({
    tableId,
    send: (text) => conn.request({ type: 'chat', text }),
    onUnread(n) {
      chatCount.hidden = n === 0;
      setText(chatCount, n ? ` ${n}` : '');
      chatCount.setAttribute('aria-label', `${n} new`);
    },
  });
  function toggleChat() {
    const open = chat.toggle();
    chatBtn.setAttribute('aria-expanded', String(open));
    if (!open) chatBtn.focus();
  }
  chat.panel.addEventListener('click', (e) => {
    if (e.target.closest('.btn-icon')) chatBtn.setAttribute('aria-expanded', 'false');
  });
  const screen = h('div', { class: 'table-screen', dataset: { table: tableId } }, offline, toolbar, scorebar, felt, dock, chat.panel);
  replace(root, screen);

  // ---- connection ------------------------------------------------------
  // An invitation link: sit down at once as the account (or, before the
  // first game, with the name asked once) unless this browser already
  // holds a seat here.
  if (st.link && store.seat(tableId)) st.link = null;
  const linkJoin = (name) => ({ name, seat: st.link.seat || null, invite: st.link.invite });

  const conn = new Connection({
    async prepare() {
      // The session the socket's upgrade carries: known, or asked for.
      const acc = await session.ready();
      if (acc && st.link && !st.joinIntent) st.joinIntent = linkJoin(acc.name);
    },
    onClose(code) {
      // Signed out (elsewhere, or the session ran out): sign in again first.
      if (code === 4005) session.forget();
    },
    attach() {
      const saved = store.seat(tableId);
      // As the account: the seat it holds here, whatever this browser kept.
      if (session.account() && !st.joinIntent) return { type: 'resume', table: tableId };
      if (saved?.token) return { type: 'resume', table: tableId, token: saved.token };
      if (st.joinIntent) {
        const m = { type: 'join', table: tableId, name: st.joinIntent.name };
        if (st.joinIntent.seat) m.seat = st.joinIntent.seat;
        if (st.joinIntent.invite) m.invite = st.joinIntent.invite;
        return m;
      }
      return { type: 'watch', table: tableId };
    },
    onAttached(reply) {
      // Back at the seat: the first view says what the table played for the
      // player since the last frame this page applied.
      if (reply.type === 'resumed') st.returning = st.seq;
      if (reply.type === 'resumed' && !store.seat(tableId)) store.setSeat(tableId, null, reply.seat);
      if (reply.type === 'joined') {
        store.setSeat(tableId, reply.token, reply.seat);
        const quick = st.joinIntent?.quick;
        st.joinIntent = null;
        st.link = null;
        announce(`You sit at ${SEAT_NAME[reply.seat]}.`);
        if (quick) quickStart();
      }
      st.notice = null;
      render();
      // The rematch this browser asked for: start it as soon as it is here.
      if (store.pendingStart(tableId) && store.owner(tableId)) {
        store.setPendingStart(tableId, false);
        ownerAction('start');
      }
    },
    onAttachError(err, msg) {
      if (err.code === 'suspended' || err.code === 'banned') {
        // The message says until when and why: nothing else to try.
        st.notice = `${err.message[0].toUpperCase()}${err.message.slice(1)}.`;
        render();
        return null;
      }
      if (err.code === 'table_not_found') {
        st.notice = 'There is no such table (it may have closed).';
        render();
        return null;
      }
      if (msg.type === 'resume' && err.code === 'invalid_token' && !msg.token) {
        // The account holds no seat here: a seat taken before signing in,
        // else watch (a seat this browser remembered is gone).
        const saved = store.seat(tableId);
        if (saved?.token) return { type: 'resume', table: tableId, token: saved.token };
        if (!saved) return { type: 'watch', table: tableId };
      }
      if (msg.type === 'join' && err.code === 'already_seated') {
        // This account sits here already (another tab sat first): back to it.
        st.joinIntent = null;
        st.link = null;
        return { type: 'resume', table: tableId };
      }
      if (msg.type === 'resume' && err.code === 'invalid_token') {
        store.dropSeat(tableId);
        st.notice = 'Your seat at this table is no longer valid: you are watching.';
        return { type: 'watch', table: tableId };
      }
      if (msg.type === 'join') {
        st.joinIntent = null;
        st.link = null;
        st.notice = err.code === 'table_full'
          ? 'Every seat is taken: you are watching. Ask the table\'s owner to free a seat.'
          : `Could not sit down: ${err.message}. You are watching.`;
        render();
        return { type: 'watch', table: tableId };
      }
      return msg.type === 'watch' ? null : { type: 'watch', table: tableId };
    },
    onView(msg) {
      if (msg.seq < st.seq) return;
      st.seq = msg.seq;
      syncServerTime(msg.view.server_time);
      onView(msg.view);
      contributeSeed(tableId, msg.view, conn);
    },
    onChat(msg) {
      // A message, or an operator's removal of one.
      if (msg.type === 'chat_removed') chat.remove(msg.id);
      else chat.receive(msg);
    },
    onUnsolicitedError(err) {
      showRefusal(refusalText(err));
    },
    onState(s) {
      st.net = s;
      renderNet();
      if (s.status === 'closed') render();
    },
  });

  // Closing the page on purpose: the server holds the seat for the short grace.
  const onPageHide = () => conn.sendClosing();
  // Back from the browser's page cache: the socket is gone, connect again.
  const onPageShow = (e) => {
    if (e.persisted) conn.reconnectNow();
  };
  const alerts = turnAlert({ tableId });
  window.addEventListener('pagehide', onPageHide);
  window.addEventListener('beforeunload', onPageHide);
  window.addEventListener('pageshow', onPageShow);
  conn.start();
  if (st.link) {
    // Not signed in yet: the name first (it makes the guest account).
    session.ready().then(async (acc) => {
      if (acc || st.gone || st.joinIntent) return;
      const name = await askName(st.link.seat ? `Play ${SEAT_NAME[st.link.seat]}'s seat` : 'Sit at this table');
      if (!name || st.gone) return;
      st.joinIntent = linkJoin(name);
      conn.restart();
    });
  }
  // When the last dialog closes on the player's turn, the turn's control
  // has the focus.
  const onDialogsClosed = () => {
    if (!st.gone && myTurn()) focusControls();
  };
  document.addEventListener('dialogs-closed', onDialogsClosed);

  // ---- derived state ---------------------------------------------------
  const game = () => st.view?.game || null;
  const you = () => st.view?.you || null;
  const mySeatInfo = () => (you() ? st.view.seats[seatIndex(you())] : null);
  const role = () => {
    if (!st.view?.you) return 'spectator';
    return mySeatInfo()?.status === 'left' ? 'left' : 'seat';
  };
  const myTurn = () => !!(game() && you() && game().turn === you() && role() === 'seat');
  const legal = () => game()?.legal || { kind: 'none' };
  const seatName = (seat) => st.view?.seats[seatIndex(seat)]?.name || SEAT_NAME[seat];

  function onView(view) {
    const prev = st.view;
    if (view.grace_ms != null) st.graceMs = view.grace_ms;
    const wasMyTurn = myTurn();
    st.view = view;
    const g = view.game;
    const pg = prev?.game;
    setTitle(view.name);
    alerts.refresh();
    chat.update(view);
    followRematch(view);
    // Everything to tell a screen reader about this change, said at once
    // (a second announcement would cut the first one off).
    const said = [];

    // A trick just completed: keep it on the table for a moment.
    if (g && pg && g.hand_number === pg.hand_number && g.last_trick && !sameTrick(g.last_trick, pg.last_trick)) {
      st.linger = { trick: withWinner(g.last_trick), until: performance.now() + LINGER_MS };
      said.push(trickWinnerText(st.linger.trick));
    }
    // A hand just ended: the new deal's view no longer holds the 13th trick,
    // but its last card is the one card the previous view had not seen played.
    if (g && pg && g.hand_number > pg.hand_number) {
      st.finalTrick = null;
      if (pg.trick.cards.length === 3 && pg.played.length === 51) {
        const missing = fullDeck().find((c) => !pg.played.includes(c));
        st.finalTrick = withWinner({ leader: pg.trick.leader, cards: [...pg.trick.cards, missing] });
        st.linger = { trick: st.finalTrick, until: performance.now() + LINGER_MS };
        said.push(trickWinnerText(st.finalTrick));
      } else {
        st.linger = null;
      }
    }
    if (g?.last_trick) st.finalTrick = null;
    // A new trick has started: show it rather than the finished one.
    if (!g || g.trick.cards.length > 0) st.linger = null;

    // The move we sent has been taken (or it is no longer our turn).
    if (st.pendingCard && (!myTurn() || legal().kind !== 'play' || !(g.hand || []).includes(st.pendingCard))) st.pendingCard = null;
    if (legal().kind !== 'bid') {
      st.pendingBid = false;
      bids.choice = null;
    }

    // A refusal stays until the player acts again (it would otherwise
    // flash by when a bot plays right after it); news stays its time.

    const told = announceAway(view, said);
    announceChanges(prev, view, said, told);
    maybeShowScoring(view, said);
    if (said.length) announce(said.filter(Boolean).join(' '));
    st.firstView = false;
    render();
    if (myTurn() && !wasMyTurn) onTurnStarted();
    if (!myTurn()) alerts.turnEnded();
  }

  /** The player's turn has begun: bring the controls to hand, and alert a hidden page. */
  function onTurnStarted() {
    const bidding = legal().kind === 'bid';
    // The chat never stands between the player and the turn: it closes.
    if (chat.isOpen()) chat.toggle(false);
    alerts.turnStarted(bidding ? `${st.view.name}: your turn to bid.` : `${st.view.name}: your turn to play a card.`);
    // Focus goes to the hand or the bid picker, unless the player is busy
    // elsewhere (a dialog, a text field) or the autopilot plays the turn.
    const active = document.activeElement;
    const busy = document.querySelector('dialog[open]') || (active && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName));
    if (busy || mySeatInfo()?.status === 'autopilot') return;
    focusControls();
  }

  /**
   * Focuses the chosen (or first) bid, or a card of the hand: the one
   * focused if it is playable, else the hand's tab stop if it is, else the
   * first playable card.
   */
  function focusControls() {
    if (legal().kind === 'bid' && !bidPicker.hidden) {
      bids.focus();
      return true;
    }
    if (handEl.hidden) return false;
    const active = handEl.contains(document.activeElement) ? document.activeElement : null;
    const stop = handEl.querySelector('.card[tabindex="0"]:not(:disabled)');
    const playable = (el) => el && el.classList.contains('legal') && !el.disabled;
    const card = [active, stop].find(playable) || handEl.querySelector('.card.legal:not(:disabled)')
      || active || stop || handEl.querySelector('.card:not(:disabled)');
    if (!card) return false;
    if (card !== document.activeElement) card.focus();
    return true;
  }

  /** Focus must never fall to the page's body (a removed card, a closed picker). */
  function keepFocus() {
    const active = document.activeElement;
    if (active && active !== document.body) return;
    if (document.querySelector('dialog[open]')) return;
    if (!focusControls()) turnLine.focus({ preventScroll: true });
  }

  // ---- announcements ---------------------------------------------------
  function trickWinnerText(trick) {
    return trick.winner ? `${seatName(trick.winner)} wins the trick.` : '';
  }

  function announceChanges(prev, view, parts, told) {
    const g = view.game;
    const la = view.last_action;
    const laKey = la ? `${g?.hand_number}:${g?.tricks.length}:${g?.trick.cards.length}:${JSON.stringify(la)}` : null;
    if (la && laKey !== st.lastActionKey && la.seat !== view.you && !st.firstView) {
      const who = seatName(la.seat);
      // The move comes first: it is what completed a trick, if one was.
      if (la.action.bid != null) parts.unshift(`${who} bids ${la.action.bid === 0 ? 'nil' : la.action.bid}.`);
      else if (la.action.play) parts.unshift(`${who} plays ${cardName(la.action.play)}.`);
    }
    // The player's own clock ran out: say what the table played for them.
    if (la && laKey !== st.lastActionKey && la.seat === view.you && la.source === 'timeout' && !st.firstView && !told) {
      const me = view.seats[seatIndex(view.you)];
      const what = la.action.bid != null
        ? (la.action.bid === 0 ? 'bid nil' : `bid ${la.action.bid}`)
        : `played ${cardName(la.action.play)}`;
      const text = `Time ran out: the table ${what} for you (${me.timeouts} of ${view.autopilot_after ?? 3} before autopilot).`;
      parts.push(text);
      showNotice(text);
    }
    st.lastActionKey = laKey;
    if (g && myTurn()) {
      const key = `${g.hand_number}:${g.phase}:${g.tricks.length}:${g.trick.cards.length}`;
      if (key !== st.turnKey) {
        st.turnKey = key;
        parts.push(legal().kind === 'bid' ? 'Your turn to bid.' : 'Your turn: play a card.');
      }
    }
    if (prev && view.you && prev.seats[seatIndex(view.you)].status !== view.seats[seatIndex(view.you)].status) {
      const s = view.seats[seatIndex(view.you)].status;
      if (s === 'autopilot') {
        const n = view.seats[seatIndex(view.you)].timeouts;
        const text = `Autopilot is on: your time ran out ${n} times in a row. Press Take over to play again.`;
        parts.push(text);
        showNotice(text);
      }
    }
  }

  /**
   * The first view after the page attached to its seat again (a reconnect,
   * a reload): one notice of every move the table made for the player that
   * this page had not seen (`played_for_you` entries shown in a later frame
   * than the last it applied). True when it said something.
   */
  function announceAway(view, parts) {
    if (st.returning == null) return false;
    const seen = st.returning;
    st.returning = null;
    const moves = (view.played_for_you || []).filter((m) => m.seq > seen);
    if (!moves.length) return false;
    const text = `While you were away the table ${movesInWords(moves)} for you.`;
    parts.push(text);
    showNotice(text);
    return true;
  }

  // ---- scoring and the end of the match ----------------------------------
  function maybeShowScoring(view, said) {
    const g = view.game;
    if (!g) return;
    const lh = g.last_hand;
    const seen = store.seenHand(tableId);
    if (lh && lh.hand_number > seen) {
      store.setSeenHand(tableId, lh.hand_number);
      // A spectator arriving mid-match does not need the previous hand's sheet.
      const fresh = st.firstView && seen === 0 && !store.seat(tableId) && !g.result;
      if (!fresh) {
        said.push(handSummary(lh));
        clearTimeout(st.scoringTimer);
        const delay = st.linger ? Math.max(0, st.linger.until - performance.now()) : 0;
        st.scoringTimer = setTimeout(() => {
          if (!st.gone) showHandScoring(lh, !!g.result);
        }, delay);
      }
    }
    if (g.result && !store.seenResult(tableId)) {
      store.setSeenResult(tableId);
      said.push(resultHeadline(g.result, view.you));
      const delay = (st.linger ? Math.max(0, st.linger.until - performance.now()) : 0) + (lh ? 50 : 0);
      setTimeout(() => {
        if (!st.gone) showMatchOver();
      }, delay);
    }
  }

  function showHandScoring(lh, matchOver) {
    const v = st.view;
    showDialog({
      id: 'hand-scoring',
      className: 'dialog-scoring',
      title: `Hand ${lh.hand_number}: scoring`,
      body: handScoring(lh, v.seats, v.options.rules, v.you),
      actions: [{ label: matchOver ? 'See the result' : 'Next hand', value: 'ok', kind: 'primary', autofocus: true }],
      mode: 'wait',
    }).then(() => {
      if (matchOver && !isOpen('match-over') && !st.gone) showMatchOver();
    });
  }

  async function showMatchOver() {
    if (isOpen('hand-scoring') || isOpen('match-over') || st.matchOverWaiting) return;
    const v = st.view;
    const result = v.game.result;
    const sheetHolder = h('div', { class: 'sheet-holder' }, h('p', { class: 'muted' }, 'Loading the score sheet…'));
    // Another match, offered here: who is ready, and the buttons.
    const rematchHolder = h('div', { class: 'rematch-holder', id: 'match-over-rematch' });
    st.matchOverRematch = rematchHolder;
    renderRematchIn(rematchHolder, 'dlg-');
    const body = [
      h('p', { class: 'result-headline', id: 'result-headline' }, resultHeadline(result, v.you)),
      h('p', { class: 'muted' }, resultDetail(result)),
      rematchHolder,
      sheetHolder,
    ];
    tableStatus(tableId).then(
      (status) => replace(sheetHolder, scoreSheet(status.hands, v.seats, v.you, showHandDetail)),
      (err) => replace(sheetHolder, h('p', { class: 'field-error' }, `Could not load the score sheet: ${err.message}`)),
    );
    st.matchOverWaiting = anyOpen();
    const choice = await showDialog({
      id: 'match-over',
      className: 'dialog-wide',
      title: 'Match over',
      mode: 'wait',
      body,
      actions: [
        ...(v.fair ? [{ label: 'Verify the deals', value: 'verify', kind: 'plain' }] : []),
        { label: 'Replay the match', value: 'replay', kind: 'plain' },
        { label: 'Stay at the table', value: 'stay', kind: 'plain' },
        { label: 'Back to the lobby', value: 'lobby', kind: 'primary', autofocus: true },
      ],
    });
    st.matchOverWaiting = false;
    st.matchOverRematch = null;
    if (choice === 'verify') showVerification(tableId);
    if (choice === 'lobby') location.hash = '#/';
    if (choice === 'replay') location.hash = `#/replay/${tableId}`;
  }

  async function showSheet() {
    const v = st.view;
    const holder = h('div', { class: 'sheet-holder' }, h('p', { class: 'muted' }, 'Loading…'));
    showDialog({ id: 'score-sheet', className: 'dialog-wide', title: 'Score sheet', body: holder });
    try {
      const status = await tableStatus(tableId);
      const parts = [scoreSheet(status.hands, v?.seats, v?.you, showHandDetail)];
      if (status.result) parts.unshift(h('p', { class: 'result-headline' }, resultHeadline(status.result, v?.you)));
      replace(holder, parts);
    } catch (err) {
      replace(holder, h('p', { class: 'field-error' }, `Could not load the score sheet: ${err.message}`));
    }
  }

  /** One finished hand's whole scoring, reopened from the score sheet. */
  function showHandDetail(result) {
    const v = st.view;
    showDialog({
      id: 'hand-detail',
      className: 'dialog-scoring',
      title: `Hand ${result.hand_number}: scoring`,
      body: handScoring(result, v?.seats, v?.options.rules, v?.you),
      mode: 'over',
    });
  }

  function showRules() {
    const v = st.view;
    if (!v) return;
    showDialog({
      id: 'rules',
      className: 'dialog-wide',
      title: 'How to play at this table',
      body: howToPlay(v.options),
    });
  }

  function showLastTrick() {
    const g = game();
    const t = g?.last_trick ? withWinner(g.last_trick) : st.finalTrick;
    if (!t) return;
    const viewer = you();
    const mini = h('div', { class: 'trick-box mini' });
    for (const pos of POSITIONS) mini.append(h('div', { class: `slot slot-${pos}` }));
    t.cards.forEach((card, i) => {
      const seat = SEATS[(seatIndex(t.leader) + i) % 4];
      const slot = mini.querySelector(`.slot-${positionOf(seat, viewer)}`);
      slot.append(cardView(card, seat === t.winner ? 'winner' : ''),
        h('span', { class: 'slot-label' }, seatName(seat), i === 0 ? h('span', { class: 'led-tag' }, ' · led') : null));
    });
    const lines = t.cards.map((card, i) => {
      const seat = SEATS[(seatIndex(t.leader) + i) % 4];
      return h('li', {}, `${seatName(seat)}${i === 0 ? ' led' : ''}: ${cardName(card)}${seat === t.winner ? ' (won)' : ''}`);
    });
    showDialog({
      id: 'last-trick',
      title: 'Last trick',
      body: [mini, h('ol', { class: 'sr-only' }, lines),
        h('p', { class: 'muted center', id: 'last-trick-summary' }, `${seatName(t.leader)} led; ${seatName(t.winner)} won it.`)],
    });
  }

  /**
   * A refusal in words: the player's sentence for the rule broken (the same
   * as the tutorial's, hand.js), naming the player on turn rather than only
   * the seat; a stale move says what the table did instead (`what`: the
   * move). Codes without words of their own say the server's message.
   */
  function refusalText(err, what) {
    if (err.code === 'stale') return `${what || 'Your move was not made'}: ${err.message}.`;
    if (err.code === 'disconnected') return `${what || 'Your move was not made'}: the connection was lost. Look at the table again once it is back.`;
    const g = game();
    let turn = null;
    if (g?.turn) {
      const info = st.view.seats[seatIndex(g.turn)];
      turn = info?.name ? `${info.name} (${SEAT_NAME[g.turn]})` : SEAT_NAME[g.turn];
    }
    const led = g?.trick?.cards?.[0]?.[1];
    return refusalSentence(err.code, { led, turn }) || err.message;
  }

  function showAlerts() {
    const sound = h('input', { type: 'checkbox', id: 'alert-sound', checked: !store.muted() });
    const notify = h('input', { type: 'checkbox', id: 'alert-notify', checked: store.notify(), disabled: !notificationsSupported() });
    const note = h('p', { class: 'muted small', id: 'alert-note' });
    sound.addEventListener('change', () => store.setMuted(!sound.checked));
    notify.addEventListener('change', async () => {
      const on = await setNotify(notify.checked);
      notify.checked = on;
      setText(note, '');
      if (!on && notificationsSupported() && Notification.permission === 'denied') {
        setText(note, 'The browser blocks notifications for this site: allow them in its settings.');
      }
    });
    showDialog({
      id: 'alerts',
      title: 'Turn alerts',
      body: [
        h('p', {}, 'When this page is hidden (another tab, a minimised window) and your turn begins, the tab\'s title says so, and:'),
        h('div', { class: 'field field-check' }, sound, h('label', { for: 'alert-sound' }, 'Play a short sound')),
        h('div', { class: 'field field-check' }, notify, h('label', { for: 'alert-notify' }, 'Show a desktop notification',
          notificationsSupported() ? null : h('small', { class: 'hint' }, 'this browser has no notifications'))),
        note,
      ],
    });
  }

  // ---- actions ---------------------------------------------------------
  /** News for the player (not a refusal): shown where refusals are. */
  function showNotice(message) {
    showRefusal(message);
    st.refusalInfo = true;
    st.refusalTimer = setTimeout(() => {
      if (!st.refusalInfo) return;
      st.refusal = null;
      renderRefusal();
    }, NOTICE_MS);
    renderRefusal();
  }

  /** A refusal: shown until the player acts again. */
  function showRefusal(message) {
    st.refusalInfo = false;
    st.refusal = message;
    clearTimeout(st.refusalTimer);
    renderRefusal();
  }

  function clearRefusal() {
    st.refusal = null;
    clearTimeout(st.refusalTimer);
    renderRefusal();
  }

  function playCard(card, btn) {
    if (st.pendingCard || st.net.status !== 'open') return;
    const isLegal = myTurn() && legal().kind === 'play' && legal().cards.includes(card);
    if (isLegal) {
      st.pendingCard = card;
      clearRefusal();
      renderHand();
    }
    // Every tap goes to the server, which is the judge: a refusal comes back
    // with its code, said to the player in a sentence (refusalText).
    // The move is for the turn on screen: `seq` names the frame it was
    // chosen from, and the server refuses it (`stale`) if a bid or card
    // was applied since (a timeout, say, while the network stalled).
    conn.request({ type: 'play', card, seq: st.seq }).catch((err) => {
      if (st.pendingCard === card) st.pendingCard = null;
      showRefusal(refusalText(err, `${cardName(card)} was not played`));
      hand.refused(btn);
      renderHand();
    });
  }

  function sendBid() {
    if (bids.choice == null || st.pendingBid) return;
    st.pendingBid = true;
    renderBid();
    const chosen = bids.choice;
    conn.request({ type: 'bid', bid: chosen, seq: st.seq }).then(
      () => clearRefusal(),
      (err) => {
        st.pendingBid = false;
        showRefusal(refusalText(err, `Your bid of ${chosen === 0 ? 'nil' : chosen} was not made`));
        renderBid();
      },
    );
  }

  function ownerAction(type) {
    const owner = store.owner(tableId);
    if (!owner) return;
    conn.request({ type, owner_token: owner }).then(() => clearRefusal(), (err) => showRefusal(err.message));
  }

  /** Play now: bots in every other seat, then the match starts. */
  async function quickStart() {
    const owner = store.owner(tableId);
    if (!owner) return;
    try {
      await conn.request({ type: 'add_bots', owner_token: owner });
      await conn.request({ type: 'start', owner_token: owner });
      clearRefusal();
    } catch (err) {
      showRefusal(err.message);
    }
  }

  function takeOver() {
    conn.request({ type: 'take_over' }).then(
      () => {
        clearRefusal();
        announce('You play your seat again.');
      },
      (err) => showRefusal(err.message),
    );
  }

  async function leave() {
    const inMatch = st.view && st.view.phase !== 'lobby';
    if (!inMatch) {
      const ok = await confirmDialog({
        id: 'leave-confirm',
        title: 'Leave your seat?',
        body: h('p', {}, 'Your seat becomes free for someone else. You can keep watching this table.'),
        confirm: 'Leave the seat',
      });
      if (!ok) return;
    } else {
      const partner = seatName(partnerOf(you()));
      const ok = await confirmDialog({
        id: 'leave-confirm',
        title: 'Leave the match?',
        body: [
          h('p', {}, h('strong', {}, `A bot will play your seat for the rest of the match, and your partner ${partner} keeps the bot.`)),
          h('p', {}, 'You cannot come back to this seat; you can still watch. If you only need a break, just close the page: your seat is held for a while and you can take it back.'),
        ],
        confirm: 'Leave for good',
        cancel: 'Stay',
        danger: true,
      });
      if (!ok) return;
    }
    conn.request({ type: 'leave' }).then(
      () => {
        if (!inMatch) store.dropSeat(tableId);
        announce(inMatch ? 'You left the match. A bot plays your seat.' : 'You left your seat.');
      },
      (err) => showRefusal(err.message),
    );
  }

  /**
   * The player's name: the account's; else the one remembered, or asked
   * once (a generated one offered), which signs the browser in as a guest
   * account of that name. A name the server refuses (taken, or like a
   * taken one) is asked again, with why.
   */
  async function askName(title) {
    const acc = session.account();
    if (acc) return acc.name;
    let name = store.name();
    let error = '';
    if (name) {
      try {
        return (await session.playAs(name))?.name || name;
      } catch (err) {
        error = err.message;
      }
    } else {
      name = (await nameSuggestion().catch(() => null))?.name || '';
    }
    for (;;) {
      const input = h('input', {
        type: 'text', maxlength: 24, id: 'sit-name', autocomplete: 'nickname', required: true, value: name,
        'aria-describedby': 'sit-name-error', 'aria-invalid': error ? 'true' : null,
      });
      const v = await showDialog({
        id: 'name-dialog',
        title,
        body: h('div', { class: 'field' }, h('label', { for: 'sit-name' }, 'Your name at the table'), input,
          h('p', { id: 'sit-name-error', class: 'field-error' }, error)),
        actions: [{ label: 'Just watch', value: null, kind: 'plain' }, { label: 'Sit down', value: 'ok', kind: 'primary' }],
      });
      name = input.value.trim();
      if (v !== 'ok' || !name || st.gone) return null;
      try {
        return (await session.playAs(name))?.name || name;
      } catch (err) {
        error = err.message;
      }
    }
  }

  async function sitAt(seat) {
    const name = await askName(`Sit at ${SEAT_NAME[seat]}`);
    if (!name) return;
    st.joinIntent = { name, seat };
    conn.restart();
  }

  /** A link to copy, with its button and what happened. */
  function copyBox(id, label, text) {
    const input = h('input', { type: 'text', readonly: true, id, value: text, class: 'copy-input', 'aria-label': label });
    const said = h('span', { class: 'copy-said muted small', role: 'status' });
    const btn = h('button', {
      type: 'button', class: 'btn btn-small btn-plain copy-btn', 'aria-label': `Copy ${label.toLowerCase()}`,
      onclick: async () => {
        let ok = false;
        try {
          await navigator.clipboard.writeText(text);
          ok = true;
        } catch {
          input.select();
          ok = document.execCommand?.('copy') || false;
        }
        setText(said, ok ? 'Copied.' : 'Select the text and copy it.');
      },
    }, 'Copy');
    return h('div', { class: 'copy-box' }, h('label', { for: id, class: 'small' }, label), h('div', { class: 'copy-row' }, input, btn), said);
  }

  /** The invitation before the start: the page's link, and the terminal's command. */
  function inviteBox() {
    const link = `${location.origin}/#/table/${tableId}/join`;
    return h('div', { class: 'invite', id: 'invite' },
      h('p', { class: 'invite-title' }, 'Invite a friend'),
      copyBox('invite-link', 'Invitation link', link),
      copyBox('invite-command', 'In a terminal', `spades-tui --url ${location.origin} --join ${tableId}`));
  }

  /** The owner, in the lobby: take a bot out, or swap two seats. */
  function arrangeSeats() {
    const owner = store.owner(tableId);
    const v = st.view;
    if (!owner || !v) return;
    const rows = SEATS.map((seat, i) => {
      const info = v.seats[i];
      const swap = h('select', { id: `swap-${seat}`, 'aria-label': `Swap ${SEAT_NAME[seat]} with` },
        h('option', { value: '' }, 'Swap with…'),
        SEATS.filter((o) => o !== seat).map((o) => h('option', { value: o }, `${SEAT_NAME[o]} (${v.seats[seatIndex(o)].name || 'empty'})`)));
      swap.addEventListener('change', () => {
        if (!swap.value) return;
        conn.request({ type: 'move_seat', owner_token: owner, from: seat, to: swap.value }).then(
          () => closeDialog('arrange'),
          (err) => showRefusal(err.message),
        );
      });
      const remove = info.kind === 'bot'
        ? h('button', {
          type: 'button', class: 'btn btn-small btn-plain', id: `remove-bot-${seat}`,
          onclick: () => conn.request({ type: 'remove_bot', owner_token: owner, seat }).then(
            () => closeDialog('arrange'),
            (err) => showRefusal(err.message),
          ),
        }, 'Remove the bot')
        : null;
      return h('li', { class: 'arrange-row', dataset: { seat } },
        h('span', { class: 'arrange-who' }, `${SEAT_NAME[seat]}: ${info.name || 'empty'}${info.kind === 'bot' ? ' (bot)' : ''}`), remove, swap);
    });
    showDialog({ id: 'arrange', title: 'Arrange the seats', body: [h('p', { class: 'muted small' }, 'Before the start: free a bot\'s seat for a friend, or move players. Partners sit across (North–South, East–West).'), h('ul', { class: 'arrange' }, rows)] });
  }

  /** The owner, during the match: hand the seat of a player who left to a person. */
  function inviteToSeat(seat) {
    const owner = store.owner(tableId);
    if (!owner) return;
    conn.request({ type: 'invite', owner_token: owner, seat }).then(
      (reply) => {
        const link = `${location.origin}/#/table/${tableId}/invite/${reply.seat}/${reply.code}`;
        showDialog({
          id: 'invite-seat',
          title: `Invite someone to ${SEAT_NAME[reply.seat]}`,
          body: [
            h('p', {}, `Whoever opens this link plays ${SEAT_NAME[reply.seat]} from the next move on: the seat keeps its score and cards, and the record notes who played which hands. The link works once.`),
            copyBox('invite-seat-link', 'Invitation link', link),
          ],
        });
      },
      (err) => showRefusal(err.message),
    );
  }

  // ---- rendering -------------------------------------------------------
  function render() {
    if (st.gone) return;
    const v = st.view;
    screen.classList.toggle('loading', !v);
    if (!v) {
      const closed = st.net.status === 'closed';
      setText(turnText, st.notice || (closed ? `Disconnected: ${st.net.reason}` : 'Connecting to the table…'));
      if (closed && !centerMsg.querySelector('a')) {
        replace(centerMsg, h('p', { class: 'center-title' }, st.notice || 'This table cannot be reached.'),
          h('a', { class: 'btn btn-primary', href: '#/' }, 'Back to the lobby'));
      }
      return;
    }
    const g = v.game;
    screen.dataset.phase = v.phase;
    screen.dataset.role = role();
    renderScorebar();
    for (const seat of SEATS) renderSeat(seat);
    renderTrick();
    renderTurnLine();
    renderBid();
    renderHand();
    renderRefusal();
    const lt = g?.last_trick || st.finalTrick;
    lastTrickBtn.disabled = !lt;
    lastTrickBtn.hidden = !g;
    sheetBtn.hidden = !g;
    const mine = mySeatInfo();
    takeOverBtn.hidden = !(role() === 'seat' && (mine?.status === 'autopilot' || mine?.status === 'bot'));
    leaveBtn.hidden = !(role() === 'seat' && v.phase !== 'finished');
    if (st.matchOverRematch?.isConnected) renderRematchIn(st.matchOverRematch, 'dlg-');
    renderNet();
    keepFocus();
  }

  function renderNet() {
    const el = document.getElementById('net');
    if (!el) return;
    const s = st.net;
    const text = {
      open: '',
      connecting: 'Connecting…',
      reconnecting: 'Connection lost: reconnecting…',
      closed: `Disconnected${s.reason ? `: ${s.reason}` : ''}`,
    }[s.status] || '';
    setText(el, text);
    el.dataset.status = s.status;
    const down = s.status !== 'open';
    const was = screen.classList.contains('offline');
    screen.classList.toggle('offline', down);
    // A lost connection is impossible to miss, and nothing that cannot
    // work looks as if it could.
    offline.hidden = !(down && st.view);
    setText(offline, bannerText());
    if (st.view && was !== down) {
      renderHand();
      renderBid();
      keepFocus();
    }
  }

  /**
   * The banner of a lost connection: how long the seat is held (the
   * snapshot's grace_ms, counted from the moment the table was last
   * reachable) and what the player's clock says, which keeps running.
   */
  function bannerText() {
    const s = st.net;
    if (s.status === 'closed') return `Disconnected${s.reason ? `: ${s.reason}` : ''}. Your moves cannot reach the table.`;
    const parts = ['Connection lost: reconnecting…'];
    const v = st.view;
    if (v && role() === 'seat') {
      const grace = v.grace_ms ?? st.graceMs;
      if (grace != null && s.lostAt) {
        const held = Math.max(0, grace - (Date.now() - s.lostAt));
        parts.push(held > 0 ? `Your seat is held for ${mmss(held)}.` : 'Your hold on the seat has run out: a bot plays it until you are back.');
      } else {
        parts.push('Your seat is held.');
      }
      const c = v.clock;
      if (c && c.seat === v.you) {
        const left = remaining(c.deadline);
        parts.push(left > 0 ? `Your turn's clock: ${Math.ceil(left / 1000)} s, and it keeps running.` : 'Your turn\'s time ran out: the table plays for you.');
      }
      parts.push('You cannot play until the table is back.');
    }
    return parts.join(' ');
  }

  function renderScorebar() {
    const v = st.view;
    const g = v.game;
    const myTeam = v.you ? seatIndex(v.you) % 2 : -1;
    const rules = v.options.rules;
    const per = rules.bag_penalty === 'ten_for_hundred' ? 10 : rules.bag_penalty === 'five_for_fifty' ? 5 : null;
    for (const t of [0, 1]) {
      const box = teams[t];
      const [a, b] = t === 0 ? ['north', 'south'] : ['east', 'west'];
      box.classList.toggle('mine', t === myTeam);
      box.querySelector('.you-tag').hidden = t !== myTeam;
      setText(box.querySelector('.team-players'), `${v.seats[seatIndex(a)].name || 'open'} & ${v.seats[seatIndex(b)].name || 'open'}`);
      setText(box.querySelector('.team-score'), num(g ? g.scores[t] : 0));
      const bags = g ? g.bags[t] : 0;
      setText(box.querySelector('.team-bags'), per ? `bags ${bags}/${per}` : `bags ${bags}`);
      let handText = '';
      if (g && g.phase !== 'match_over') {
        const bids = [g.bids[seatIndex(a)], g.bids[seatIndex(b)]];
        const contract = bids.reduce((s, x) => s + (x || 0), 0);
        const won = g.tricks_won[seatIndex(a)] + g.tricks_won[seatIndex(b)];
        const nils = bids.filter((x) => x === 0).length;
        if (bids.every((x) => x == null)) handText = '';
        else handText = `bid ${contract}${nils ? ` + nil${nils > 1 ? ' ×2' : ''}` : ''} · won ${won}`;
      }
      setText(box.querySelector('.team-hand'), handText);
    }
    setText(handNo, g ? (rules.match_end.hands ? `Hand ${g.hand_number} of ${rules.match_end.hands}` : `Hand ${g.hand_number}`) : PHASE_NAME[v.phase]);
    setText(matchEnd, matchEndText(rules.match_end));
    broken.hidden = !(g && g.spades_broken && g.phase === 'playing');
  }

  function seatStatusText(info) {
    switch (info.status) {
      case 'empty': return 'empty seat';
      case 'away': return info.away_until ? `away · held ${mmss(remaining(info.away_until))}` : 'away';
      case 'autopilot': return 'autopilot';
      case 'bot': return info.kind === 'bot' ? '' : 'bot playing (away)';
      case 'left': return 'left · bot playing';
      default: return '';
    }
  }

  function renderSeat(seat) {
    const v = st.view;
    const g = v.game;
    const info = v.seats[seatIndex(seat)];
    const el = seatEls[seat];
    const pos = positionOf(seat, v.you);
    el.root.className = `seat pos-${pos} team-${seatIndex(seat) % 2 ? 'ew' : 'ns'}`;
    const onTurn = g?.turn === seat && v.phase !== 'finished';
    classes(el.root, {
      'on-turn': onTurn,
      me: v.you === seat,
      empty: info.status === 'empty',
      [`status-${info.status}`]: true,
      timed: !!(v.clock && v.clock.seat === seat),
    });
    const table = v.seats.map((x, i) => ({ seat: SEATS[i], name: x.name, mine: v.you === SEATS[i], empty: x.status === 'empty' }));
    paintAvatar(el.avatar, { seat, name: info.name, initials: initials(info.name), mine: v.you === seat, empty: info.status === 'empty', table });
    el.root.querySelector('.bot-icon').hidden = !(info.kind === 'bot' || info.status === 'bot' || info.status === 'left' || info.status === 'autopilot');
    el.root.querySelector('.dealer-chip').hidden = !(g && g.dealer === seat && v.phase !== 'finished');
    const nameEl = el.root.querySelector('.seat-name');
    replace(nameEl, info.name || 'Empty', v.you === seat ? h('span', { class: 'you-tag' }, 'you') : null);
    let bidText = '';
    if (g && v.phase !== 'lobby') {
      const bid = g.bids[seatIndex(seat)];
      const won = g.tricks_won[seatIndex(seat)];
      if (bid == null) bidText = onTurn && g.phase === 'bidding' ? 'bidding…' : '';
      else bidText = `${bid === 0 ? 'nil' : `bid ${bid}`} · won ${won}`;
    }
    setText(el.root.querySelector('.seat-bid'), bidText);
    setText(el.root.querySelector('.seat-status'), seatStatusText(info));
    const botSeat = info.kind === 'bot' && v.options.bot_seats_open !== false && !v.seats.some((x) => x.status === 'empty');
    el.sitBtn.hidden = !(v.phase === 'lobby' && (info.status === 'empty' || botSeat) && !v.you);
    const label = [
      `${SEAT_NAME[seat]}: ${info.name || 'empty'}`,
      v.you === seat ? '(you)' : v.you && partnerOf(v.you) === seat ? '(your partner)' : '',
      bidText,
      seatStatusText(info),
      onTurn ? 'on turn' : '',
    ].filter(Boolean).join(', ');
    el.root.setAttribute('aria-label', label);
    el.root.setAttribute('role', 'group');
  }

  function renderTrick() {
    const v = st.view;
    const g = v.game;
    let trick = g?.trick;
    let done = false;
    if (st.linger && performance.now() < st.linger.until && (!trick || trick.cards.length === 0)) {
      trick = st.linger.trick;
      done = true;
    } else if (st.linger && performance.now() >= st.linger.until) {
      st.linger = null;
    }
    trickBox.classList.toggle('done', done);
    const bySlot = {};
    let winner = null;
    if (trick && trick.cards.length) {
      winner = done ? trick.winner : SEATS[(seatIndex(trick.leader) + winningIndex(trick.cards)) % 4];
      trick.cards.forEach((card, i) => {
        const seat = SEATS[(seatIndex(trick.leader) + i) % 4];
        bySlot[positionOf(seat, v.you)] = { card, seat, lead: i === 0 };
      });
    }
    for (const pos of POSITIONS) {
      const slot = slots[pos];
      const want = bySlot[pos];
      const have = slot.firstElementChild?.dataset.card;
      if (!want) {
        if (have) slot.replaceChildren();
        continue;
      }
      if (have !== want.card) slot.replaceChildren(cardView(want.card, 'played'));
      const c = slot.firstElementChild;
      c.classList.toggle('winner', done && want.seat === winner);
      c.classList.toggle('winning', !done && trick.cards.length > 1 && want.seat === winner);
      c.setAttribute('aria-label', `${seatName(want.seat)}: ${cardName(want.card)}${want.lead ? ' (led)' : ''}`);
    }
    trickBox.classList.toggle('empty', !(trick && trick.cards.length));
    renderCenter(trick);
  }

  function renderCenter(trick) {
    const v = st.view;
    const g = v.game;
    const parts = [];
    if (v.phase === 'lobby') {
      const owner = store.owner(tableId);
      const full = v.seats.every((s) => s.status !== 'empty');
      const botSeats = full && botSeatsOpen(v);
      parts.push(h('p', { class: 'center-title' }, !full ? 'Waiting for players' : botSeats ? 'Bots hold the free seats.' : 'Every seat is taken.'));
      if (owner) {
        parts.push(h('div', { class: 'owner-controls' },
          h('button', { type: 'button', class: 'btn btn-plain', id: 'btn-add-bots', disabled: full, onclick: () => ownerAction('add_bots') }, 'Fill empty seats with bots'),
          h('button', { type: 'button', class: 'btn btn-plain', id: 'btn-arrange', onclick: () => arrangeSeats() }, 'Arrange seats'),
          h('button', { type: 'button', class: 'btn btn-primary', id: 'btn-start', disabled: !full, onclick: () => ownerAction('start') }, 'Start the match')));
      } else {
        parts.push(h('p', { class: 'muted small' }, 'The table\'s owner starts the match.'));
      }
      const botsOpen = v.options.bot_seats_open !== false && v.seats.some((x) => x.kind === 'bot');
      if (full && !v.you) {
        parts.push(h('p', { class: 'muted small' }, botsOpen ? 'Sit down in place of a bot: press Sit here.' : 'Ask the table\'s owner to free a seat.'));
      }
      if (v.you || owner) parts.push(inviteBox());
    } else if (g?.result) {
      parts.push(h('p', { class: 'center-title result-headline' }, resultHeadline(g.result, v.you)),
        h('button', { type: 'button', class: 'btn btn-plain', id: 'btn-result', onclick: () => showMatchOver() }, 'Result and score sheet'));
      parts.push(...rematchControls(v));
    } else if (g && store.owner(tableId) && v.seats.some((x) => x.status === 'left')) {
      // The owner can hand a seat whose player left to a person.
      for (const seat of SEATS.filter((x) => v.seats[seatIndex(x)].status === 'left')) {
        parts.push(h('button', { type: 'button', class: 'btn btn-small btn-plain invite-seat-btn', id: `btn-invite-${seat}`, onclick: () => inviteToSeat(seat) },
          `Invite someone to ${SEAT_NAME[seat]}`));
      }
      if (g.phase === 'bidding' && (!trick || !trick.cards.length)) {
        parts.push(h('p', { class: 'center-note' }, g.turn === v.you ? 'Your bid' : `${seatName(g.turn)} to bid`));
      }
    } else if (g?.phase === 'bidding' && (!trick || !trick.cards.length)) {
      parts.push(h('p', { class: 'center-note' }, g.turn === v.you ? 'Your bid' : `${seatName(g.turn)} to bid`));
    }
    // Rebuild only when the content changed (keeps focus on the buttons).
    const sig = parts.map((p) => p.outerHTML).join('');
    if (centerMsg.dataset.sig !== sig) {
      const focusedId = document.activeElement?.id;
      replace(centerMsg, parts);
      centerMsg.dataset.sig = sig;
      if (focusedId && centerMsg.querySelector(`#${focusedId}`)) centerMsg.querySelector(`#${focusedId}`).focus();
    }
  }

  /** Who is ready for another match, and the buttons to get there. */
  function rematchControls(v, prefix = '') {
    const r = v.rematch;
    if (!r || r.next_table) return [];
    const seated = role() === 'seat';
    const owner = store.owner(tableId);
    const mine = seated ? r.ready[seatIndex(v.you)] : false;
    const list = h('ul', { class: 'rematch-ready', id: `${prefix}rematch-ready`, 'aria-label': 'Ready for a rematch' },
      SEATS.map((seat, i) => h('li', { class: r.ready[i] ? 'ready' : 'waiting', dataset: { seat } },
        `${seatName(seat)}: ${r.ready[i] ? 'ready' : 'not yet'}`)));
    const out = [h('p', { class: 'center-note' }, 'Another match with the same seats and rules?'), list];
    const buttons = [];
    if (seated) {
      buttons.push(h('button', { type: 'button', class: 'btn btn-plain', id: `${prefix}btn-ready`, 'aria-pressed': String(mine), onclick: () => sendReady(!mine) },
        mine ? 'Not ready' : 'Ready for a rematch'));
    }
    if (owner) {
      const others = r.ready.every((x, i) => x || (seated && SEATS[i] === v.you));
      buttons.push(h('button', { type: 'button', class: 'btn btn-primary', id: `${prefix}btn-rematch`, disabled: !others, onclick: () => startRematch() }, 'Start the rematch'));
    }
    if (buttons.length) out.push(h('div', { class: 'owner-controls' }, buttons));
    return out;
  }

  /** The rematch controls inside `holder`, rebuilt only when they change. */
  function renderRematchIn(holder, prefix) {
    const parts = st.view ? rematchControls(st.view, prefix) : [];
    const sig = parts.map((p) => p.outerHTML).join('');
    if (holder.dataset.sig === sig) return;
    const focusedId = document.activeElement?.id;
    replace(holder, parts);
    holder.dataset.sig = sig;
    if (focusedId && holder.querySelector(`#${focusedId}`)) holder.querySelector(`#${focusedId}`).focus();
  }

  function sendReady(ready) {
    conn.request({ type: 'rematch', ready }).then(() => clearRefusal(), (err) => showRefusal(refusalText(err)));
  }

  function startRematch() {
    const owner = store.owner(tableId);
    if (!owner) return;
    conn.request({ type: 'start_rematch', owner_token: owner }).then(() => clearRefusal(), (err) => showRefusal(refusalText(err)));
  }

  /** The rematch has its table: take this browser's seat and owner token there. */
  function followRematch(view) {
    const next = view.rematch?.next_table;
    if (!next || st.followed) return;
    st.followed = true;
    const seat = store.seat(tableId);
    if (seat && role() === 'seat') store.setSeat(next, seat.token, seat.seat);
    const owner = store.owner(tableId);
    if (owner) {
      store.setOwner(next, owner);
      store.setPendingStart(next, true);
    }
    announce('The rematch is starting: to the new table.');
    closeAllDialogs();
    setTimeout(() => {
      if (!st.gone) location.hash = `#/table/${next}`;
    }, 0);
  }

  /** A watcher's line before the start: what they can do, as the seats are. */
  function watchingInLobby(v) {
    if (v.seats.some((x) => x.status === 'empty')) return 'Watching: pick an empty seat to play.';
    if (botSeatsOpen(v)) return 'Watching: press Sit here to play in place of a bot.';
    return 'Watching: every seat is taken.';
  }

  function renderTurnLine() {
    const v = st.view;
    const g = v.game;
    let text = '';
    const r = role();
    if (st.notice && r !== 'seat') text = st.notice;
    else if (v.phase === 'lobby') text = r === 'seat' ? 'Waiting for the match to start.' : watchingInLobby(v);
    else if (g?.result) text = resultHeadline(g.result, v.you);
    else if (myTurn()) text = legal().kind === 'bid' ? 'Your turn to bid.' : 'Your turn: play a card.';
    else if (g?.turn) {
      const who = seatName(g.turn);
      text = g.phase === 'bidding' ? `${who} is bidding…` : `${who} is playing…`;
      if (r === 'seat' && mySeatInfo()?.status === 'autopilot') text = `Autopilot is playing for you. ${text}`;
    }
    if (!g?.result) {
      if (r === 'spectator' && v.phase !== 'lobby') text = `Watching. ${text}`;
      if (r === 'left') text = `You left this match; a bot plays your seat. ${text}`;
    }
    setText(turnText, text);
    turnLine.classList.toggle('mine', myTurn());
  }

  function renderBid() {
    const l = legal();
    const show = myTurn() && l.kind === 'bid';
    if (!show) {
      bids.update({ show });
      return;
    }
    const rules = st.view.options.rules;
    const partner = you() ? partnerOf(you()) : null;
    const pb = partner ? game().bids[seatIndex(partner)] : null;
    const notes = [];
    if (l.min > 0) notes.push('Nil is off at this table.');
    if (pb != null) notes.push(`Your partner bid ${pb === 0 ? 'nil' : pb}.`);
    bids.update({
      show, min: l.min, max: l.max, nil: rules.nil === 'fifty' ? '±50' : '±100',
      disabled: st.pendingBid || st.net.status !== 'open', note: notes.join(' '),
    });
  }

  function renderHand() {
    const v = st.view;
    const g = v?.game;
    const r = role();
    watchNote.hidden = !(r !== 'seat' && v && v.phase !== 'lobby' && v.phase !== 'finished');
    if (!watchNote.hidden) setText(watchNote, r === 'left' ? 'You left this match: you are watching.' : 'You are watching: no cards are shown to spectators.');
    const l = legal();
    hand.update({
      shown: !!(g && g.hand),
      cards: g?.hand ? sortHand(g.hand) : [],
      playing: myTurn() && l.kind === 'play',
      legal: (card) => l.cards.includes(card),
      pending: st.pendingCard,
      disabled: st.net.status !== 'open',
    });
  }

  function renderRefusal() {
    refusal.hidden = !st.refusal;
    refusal.classList.toggle('info', !!st.refusalInfo);
    setText(refusal, st.refusal || '');
  }

  // ---- the clock: redrawn every frame while something is timed ----------
  let raf = 0;
  let lastSecond = -1;
  function tick() {
    raf = requestAnimationFrame(tick);
    const v = st.view;
    if (!v) return;
    const c = v.clock;
    for (const seat of SEATS) {
      const ring = seatEls[seat].ring;
      if (c && c.seat === seat && v.phase !== 'finished') setRing(ring, remaining(c.deadline) / c.duration_ms);
      else setRing(ring, 1);
    }
    const mine = !!(c && v.you && c.seat === v.you && role() === 'seat');
    myClock.hidden = !mine;
    if (mine) {
      const left = remaining(c.deadline);
      setText(myClock, `${Math.ceil(left / 1000)} s`);
      // Low: the last 10 seconds, or the last third of a shorter clock.
      const low = left < Math.min(10000, c.duration_ms / 3);
      myClock.classList.toggle('low', low);
      if (low && left > 0) {
        // The words follow the clock beside them; a screen reader hears
        // them once per turn.
        const text = `Hurry: ${Math.ceil(left / 1000)} s left before the table plays for you.`;
        setText(turnWarn, text);
        if (st.warnedDeadline !== c.deadline) {
          st.warnedDeadline = c.deadline;
          announce(text, true);
        }
      }
      if (!low || left <= 0) setText(turnWarn, '');
    } else {
      setText(turnWarn, '');
    }
    const second = Math.floor(serverNow() / 1000);
    if (second !== lastSecond) {
      lastSecond = second;
      for (const seat of SEATS) {
        const info = v.seats[seatIndex(seat)];
        if (info.status === 'away') renderSeat(seat);
      }
      if (!offline.hidden) setText(offline, bannerText());
    }
    if (st.linger && performance.now() >= st.linger.until) {
      st.linger = null;
      renderTrick();
    }
    // The scoring must not cost the player the next bid: it steps aside
    // when the player's own clock runs low.
    if (mine && remaining(c.deadline) < SCORING_STEPS_ASIDE_MS && isOpen('hand-scoring')) {
      const n = document.querySelector('dialog#hand-scoring .scoring')?.dataset.hand;
      closeDialog('hand-scoring');
      showNotice(`The scoring of hand ${n} stepped aside for your bid: the Score sheet has it.`);
      announce('Your turn to bid.');
    }
  }
  raf = requestAnimationFrame(tick);

  render();

  return () => {
    st.gone = true;
    cancelAnimationFrame(raf);
    alerts.dispose();
    clearTimeout(st.scoringTimer);
    clearTimeout(st.refusalTimer);
    window.removeEventListener('pagehide', onPageHide);
    window.removeEventListener('beforeunload', onPageHide);
    window.removeEventListener('pageshow', onPageShow);
    document.removeEventListener('dialogs-closed', onDialogsClosed);
    conn.sendClosing();
    conn.dispose();
    closeAllDialogs();
    const net = document.getElementById('net');
    if (net) net.textContent = '';
  };
}

