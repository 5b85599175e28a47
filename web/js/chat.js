// The table's chat: quick phrases, short free text, and a mute switch per
// seat that only this browser knows. Every message is shown as text
// (textContent), never as markup.

import { h, replace, setText } from './dom.js';
import { SEATS, SEAT_NAME } from './rules.js';
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

  const log = h('ol', { class: 'chat-log', id: 'chat-log', 'aria-live': 'polite', 'aria-label': 'Messages' });
  const empty = h('p', { class: 'muted small chat-empty' }, 'No message yet.');
  const error = h('p', { class: 'field-error', id: 'chat-error', role: 'alert' });
  const note = h('p', { class: 'muted small', id: 'chat-note', hidden: true });
  const input = h('input', { type: 'text', id: 'chat-input', maxlength: MAX_CHARS, autocomplete: 'off', placeholder: 'Say something…' });
  const sendBtn = h('button', { type: 'submit', class: 'btn btn-primary btn-small', id: 'chat-send' }, 'Send');
  const phrases = h('div', { class: 'chat-phrases', role: 'group', 'aria-label': 'Quick phrases' },
    PHRASES.map((p) => h('button', { type: 'button', class: 'btn btn-plain btn-small chat-phrase', onclick: () => say(p) }, p)));
  const form = h('form', { class: 'chat-form', id: 'chat-form' },
    h('label', { for: 'chat-input', class: 'sr-only' }, 'Message'), input, sendBtn);
  const mutes = h('fieldset', { class: 'chat-mutes' }, h('legend', {}, 'Mute a seat (only for you)'));
  const panel = h('section', { class: 'chat-panel', id: 'chat-panel', 'aria-labelledby': 'chat-h', hidden: true },
    h('div', { class: 'chat-head' },
      h('h2', { id: 'chat-h' }, 'Table chat'),
      h('button', { type: 'button', class: 'btn-icon', 'aria-label': 'Close the chat', onclick: () => toggle(false) }, '×')),
    log, empty, note, phrases, form, error, mutes);

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    say(input.value);
  });

  function say(text) {
    const t = text.trim();
    if (!t) return;
    setText(error, '');
    send(t).then(
      () => {
        if (t === input.value.trim()) input.value = '';
      },
      (err) => setText(error, err.message),
    );
  }

  function toggle(open = panel.hidden) {
    panel.hidden = !open;
    if (open) {
      unread = 0;
      onUnread(0);
      log.lastElementChild?.scrollIntoView({ block: 'nearest' });
      if (!input.disabled) input.focus();
    }
    return open;
  }

  function renderMutes() {
    const items = SEATS.filter((s) => s !== view?.you).map((seat) => {
      const id = `chat-mute-${seat}`;
      const box = h('input', { type: 'checkbox', id, checked: muted.has(seat), dataset: { seat } });
      box.addEventListener('change', () => {
        if (box.checked) muted.add(seat);
        else muted.delete(seat);
        store.setMutedSeats(tableId, [...muted]);
        for (const li of log.children) li.hidden = muted.has(li.dataset.seat);
      });
      const name = view?.seats[SEATS.indexOf(seat)]?.name;
      return h('div', { class: 'field-check chat-mute' }, box, h('label', { for: id }, name ? `${name} (${SEAT_NAME[seat]})` : SEAT_NAME[seat]));
    });
    replace(mutes, h('legend', {}, 'Mute a seat (only for you)'), items);
  }

  return {
    panel,
    toggle,
    /** A `chat` message from the server. */
    receive(msg) {
      const seat = msg.from || 'spectator';
      const li = h('li', { class: `chat-msg ${msg.from ? `team-${SEATS.indexOf(msg.from) % 2 ? 'ew' : 'ns'}` : 'spectator'}`, dataset: { seat } },
        h('span', { class: 'chat-who' }), ' ', h('span', { class: 'chat-text' }));
      // Text, never markup.
      li.querySelector('.chat-who').textContent = `${msg.name}${msg.from ? ` (${SEAT_NAME[msg.from]})` : ''}:`;
      li.querySelector('.chat-text').textContent = msg.text;
      li.hidden = muted.has(seat);
      log.append(li);
      while (log.children.length > KEEP) log.firstElementChild.remove();
      empty.hidden = true;
      if (!li.hidden) {
        if (panel.hidden) {
          unread += 1;
          onUnread(unread);
        } else {
          li.scrollIntoView({ block: 'nearest' });
        }
      }
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
      note.hidden = canWrite;
      setText(note, 'Spectators only read the chat at this table.');
      if (first) renderMutes();
    },
  };
}
