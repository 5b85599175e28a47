// The table's chat: quick phrases, short free text, and a mute switch per
// seat that only this browser knows; a message or a player can be
// reported to the operators (report.js, loaded when first used). Every
// message is shown as text (textContent), never as markup.

import { call } from './api.js';
import { h, replace, setText } from './dom.js';
import { SEATS, SEAT_NAME } from './rules.js';
import { session } from './session.js';
import { store } from './store.js';

export const PHRASES = ['Good game', 'Nice nil!', 'Sorry, partner'];
const MAX_CHARS = 200;
const KEEP = 100;

/**
 * The chat panel of one table. `send(text)` returns a promise that rejects
 * with the server's error; `onUnread(n)` is told how many messages arrived
 * while the panel was closed.
 */
export function chatPanel({ tableId, send, onUnread }) {
  let view = null;
  let unread = 0;
  const muted = new Set(store.mutedSeats(tableId));
  // The accounts this player blocks (kept with the account, every table).
  const blocked = new Set();
  session.ready().then((acc) => acc && call('GET', '/me/blocks')).then((list) => {
    for (const b of list || []) blocked.add(b.account);
    hideAll();
  }, () => {});
  const isHidden = (li) => muted.has(li.dataset.seat) || blocked.has(li.dataset.account);
  function hideAll() {
    for (const li of log.children) li.hidden = isHidden(li);
    renderHidden();
  }
  // Each message once (an attach repeats the recent ones), and what this
  // browser has read: the highest id seen with the panel open.
  const seen = new Set();
  let readUpTo = store.chatRead(tableId);
  let latest = 0;
  let returnFocus = null;
  let waitTimer = null;

  // A focusable scroll region, so the keyboard can scroll it.
  // The messages, a list inside a focusable scrolling log region.
  const log = h('ol', { class: 'chat-list' });
  const logBox = h('div', { class: 'chat-log', id: 'chat-log', role: 'log', tabindex: 0, 'aria-live': 'polite', 'aria-label': 'Messages' }, log);
  const empty = h('p', { class: 'muted small chat-empty' }, 'No message yet.');
  const error = h('p', { class: 'field-error', id: 'chat-error', role: 'alert' });
  const note = h('p', { class: 'muted small', id: 'chat-note', hidden: true });
  // What became of a report.
  const reported = h('p', { class: 'muted small', id: 'chat-reported', role: 'status' });
  const input = h('input', { type: 'text', id: 'chat-input', autocomplete: 'off', placeholder: 'Say something…', 'aria-describedby': 'chat-count' });
  const counter = h('span', { class: 'chat-counter muted small', id: 'chat-count', 'aria-live': 'polite' }, `0/${MAX_CHARS}`);
  const hiddenNote = h('p', { class: 'muted small', id: 'chat-hidden', hidden: true });
  const sendBtn = h('button', { type: 'submit', class: 'btn btn-primary btn-small', id: 'chat-send' }, 'Send');
  const phrases = h('div', { class: 'chat-phrases', role: 'group', 'aria-label': 'Quick phrases' },
    PHRASES.map((p) => h('button', { type: 'button', class: 'btn btn-plain btn-small chat-phrase', onclick: () => say(p) }, p)));
  const form = h('form', { class: 'chat-form', id: 'chat-form' },
    h('label', { for: 'chat-input', class: 'sr-only' }, 'Message'), input, sendBtn, counter);
  const mutes = h('fieldset', { class: 'chat-mutes' }, h('legend', {}, 'Mute a seat (only for you)'));

  /** Blocks the writer of a message (`account`), hiding their messages. */
  async function blockIt(account, name, button) {
    let said;
    try {
      const { block } = await import('./report.js');
      said = await block(account, name);
      blocked.add(account);
      hideAll();
    } catch (err) {
      said = `${name} was not blocked: ${err.message}.`;
    }
    setText(reported, said);
    // The button went with its message when it was hidden.
    if (button.isConnected && !button.closest('[hidden]')) button.focus();
    else logBox.focus();
  }

  /**
   * Asks why and reports `what` (`{message}` or `{seat}`), then says how it
   * went. The code of reporting is fetched when first used.
   */
  async function reportIt(what, about, button) {
    let said;
    try {
      const { report } = await import('./report.js');
      said = await report({ table: tableId, ...what }, about);
    } catch (err) {
      said = `The report was not sent: ${err.message}.`;
    }
    if (said) setText(reported, said);
    if (button.isConnected) button.focus();
  }
  const panel = h('section', { class: 'chat-panel', id: 'chat-panel', 'aria-labelledby': 'chat-h', hidden: true },
    h('div', { class: 'chat-head' },
      h('h2', { id: 'chat-h' }, 'Table chat'),
      h('button', { type: 'button', class: 'btn-icon', 'aria-label': 'Close the chat', onclick: () => toggle(false) }, '×')),
    logBox, empty, hiddenNote, note, phrases, form, error, mutes, reported);

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    say(input.value);
  });
  // Text past the cap is refused here, with the count, not cut.
  function renderCount() {
    const n = [...input.value].length;
    setText(counter, `${n}/${MAX_CHARS}`);
    counter.classList.toggle('over', n > MAX_CHARS);
    sendBtn.disabled = input.disabled || n > MAX_CHARS;
  }
  input.addEventListener('input', renderCount);
  // With Send off past the cap, Enter submits nothing by itself (a form's
  // disabled default button blocks it): the refusal is shown here instead.
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && sendBtn.disabled && !input.disabled) {
      e.preventDefault();
      say(input.value);
    }
  });
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      toggle(false);
    }
  });

  function say(text) {
    const t = text.trim();
    if (!t) return;
    if ([...t].length > MAX_CHARS) {
      setText(error, `Too long: ${[...t].length} characters, at most ${MAX_CHARS}.`);
      return;
    }
    setText(error, '');
    send(t).then(
      () => {
        if (t === input.value.trim()) input.value = '';
        renderCount();
      },
      (err) => {
        const wait = /^(.*): wait (\d+) s/.exec(err.message);
        if (err.code === 'chat_rate_limited' && wait) countDown(wait[1], Number(wait[2]));
        else setText(error, err.message);
      },
    );
  }

  /** "At most 5 messages in 10 s: wait 7 s", counting down, then gone. */
  function countDown(why, secs) {
    clearInterval(waitTimer);
    let left = secs;
    const show = () => setText(error, left > 0 ? `${why[0].toUpperCase()}${why.slice(1)}: wait ${left} s.` : '');
    show();
    waitTimer = setInterval(() => {
      left -= 1;
      show();
      if (left <= 0) clearInterval(waitTimer);
    }, 1000);
  }

  function markRead() {
    unread = 0;
    onUnread(0);
    if (latest > readUpTo) {
      readUpTo = latest;
      store.setChatRead(tableId, readUpTo);
    }
  }

  function toggle(open = panel.hidden) {
    const was = !panel.hidden;
    panel.hidden = !open;
    if (open && !was) {
      returnFocus = document.activeElement;
      markRead();
      log.lastElementChild?.scrollIntoView({ block: 'nearest' });
      if (!input.disabled) input.focus();
    }
    if (!open && was) {
      // Focus back where it was (or to the Chat button).
      const back = returnFocus?.isConnected ? returnFocus : document.getElementById('btn-chat');
      returnFocus = null;
      if (panel.contains(document.activeElement) || document.activeElement === document.body) back?.focus();
      document.getElementById('btn-chat')?.setAttribute('aria-expanded', 'false');
    }
    return open;
  }

  function renderHidden() {
    const n = [...log.children].filter((li) => li.hidden).length;
    hiddenNote.hidden = n === 0;
    setText(hiddenNote, n === 1 ? '1 message from a muted seat or a blocked player is hidden.' : `${n} messages from muted seats or blocked players are hidden.`);
  }

  function renderMutes() {
    // Bots say nothing: only people can be muted.
    const items = SEATS.filter((s) => s !== view?.you && view?.seats[SEATS.indexOf(s)]?.kind !== 'bot').map((seat) => {
      const id = `chat-mute-${seat}`;
      const box = h('input', { type: 'checkbox', id, checked: muted.has(seat), dataset: { seat } });
      box.addEventListener('change', () => {
        if (box.checked) muted.add(seat);
        else muted.delete(seat);
        store.setMutedSeats(tableId, [...muted]);
        hideAll();
        // Unmuted with the panel open: what shows now has been seen.
        if (!panel.hidden) markRead();
      });
      const name = view?.seats[SEATS.indexOf(seat)]?.name;
      const who = name ? `${name} (${SEAT_NAME[seat]})` : SEAT_NAME[seat];
      // A person sits there: they may be reported.
      const flag = name
        ? h('button', { type: 'button', class: 'btn btn-plain btn-small chat-report-seat', dataset: { seat } }, 'Report', h('span', { class: 'sr-only' }, ` ${who}`))
        : null;
      flag?.addEventListener('click', () => reportIt({ seat }, `Report ${who}.`, flag));
      return h('div', { class: 'field-check chat-mute' }, box, h('label', { for: id }, who), flag);
    });
    replace(mutes, h('legend', {}, 'Mute a seat (only for you)'), items);
  }

  return {
    panel,
    toggle,
    /** A `chat` message from the server. */
    isOpen: () => !panel.hidden,
    receive(msg) {
      if (msg.id != null) {
        if (seen.has(msg.id)) return;
        seen.add(msg.id);
        latest = Math.max(latest, msg.id);
      }
      const seat = msg.from || 'spectator';
      const li = h('li', { class: `chat-msg ${msg.from ? `team-${SEATS.indexOf(msg.from) % 2 ? 'ew' : 'ns'}` : 'spectator'}`, dataset: { seat, id: msg.id ?? '', account: msg.account || '' } },
        h('span', { class: 'chat-who' }), ' ', h('span', { class: 'chat-text' }));
      // Text, never markup.
      li.querySelector('.chat-who').textContent = `${msg.name}${msg.from ? ` (${SEAT_NAME[msg.from]})` : ''}:`;
      li.querySelector('.chat-text').textContent = msg.text;
      // Another's message may be reported (by its number at the table).
      const mine = !!(msg.from && view?.you && msg.from === view.you);
      if (msg.id != null && !mine) {
        const flag = h('button', { type: 'button', class: 'btn-icon chat-report', title: 'Report this message', 'aria-label': `Report this message of ${msg.name}` }, '⚑');
        flag.addEventListener('click', () => reportIt({ message: msg.id }, `Report ${msg.name}'s message: “${msg.text}”`, flag));
        li.append(' ', flag);
        if (msg.account) {
          const stop = h('button', { type: 'button', class: 'btn-icon chat-block', title: 'Block this player\'s chat', 'aria-label': `Block ${msg.name}'s chat for you, at every table` }, '⊘');
          stop.addEventListener('click', () => blockIt(msg.account, msg.name, stop));
          li.append(stop);
        }
      }
      li.hidden = isHidden(li);
      log.append(li);
      while (log.children.length > KEEP) log.firstElementChild.remove();
      empty.hidden = true;
      renderHidden();
      // Unread: news from someone else, newer than what this browser read.
      const old = msg.id != null && msg.id <= readUpTo;
      if (!li.hidden) {
        if (!panel.hidden) {
          markRead();
          li.scrollIntoView({ block: 'nearest' });
        } else if (!mine && !old) {
          unread += 1;
          onUnread(unread);
        }
      }
    },
    /** A `chat_removed` message: an operator removed message `id`. */
    remove(id) {
      const li = [...log.children].find((m) => m.dataset.id === String(id));
      if (!li) return;
      const text = li.querySelector('.chat-text');
      text.textContent = 'message removed by a moderator';
      text.classList.add('muted');
      li.querySelector('.chat-report')?.remove();
    },
    /** Follows the table's view: who may write, the names of the seats. */
    update(v) {
      const first = !view || view.you !== v.you || view.seats.map((s) => s.name).join() !== v.seats.map((s) => s.name).join();
      view = v;
      const seated = v.you && v.seats[SEATS.indexOf(v.you)]?.status !== 'left';
      const canWrite = !!seated || !!v.options.spectator_chat;
      input.disabled = !canWrite;
      sendBtn.disabled = !canWrite;
      for (const b of phrases.querySelectorAll('button')) b.disabled = !canWrite;
      renderCount();
      note.hidden = canWrite;
      setText(note, 'Spectators only read the chat at this table.');
      if (first) renderMutes();
    },
  };
}
