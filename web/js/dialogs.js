// Modal dialogs on the native <dialog> element (focus trap, Escape to close).

import { h } from './dom.js';

const open = new Set();
/** Dialogs the table wants to show once the player's own has closed. */
const waiting = [];

/** Fires `dialogs-closed` on document when the last open dialog closes. */
function lastClosed() {
  const next = waiting.shift();
  if (next) {
    next();
    return;
  }
  document.dispatchEvent(new CustomEvent('dialogs-closed'));
}

/**
 * Shows a modal dialog. Resolves with the chosen action's value, or null
 * when dismissed (Escape or the close button).
 * @param {object} o
 * @param {string} o.title
 * @param {Node|Node[]} o.body
 * @param {{label: string, value: any, kind?: 'primary'|'danger'|'plain', autofocus?: boolean}[]} [o.actions]
 * @param {string} [o.id]  a stable id (tests and styling)
 * @param {string} [o.className]
 * @param {'replace'|'over'|'wait'} [o.mode]  one dialog at a time: a new one
 *        replaces what is open (the default), waits until it closes
 *        (what the table shows by itself: a hand's scoring), or, opened
 *        from inside a dialog, sits over it
 */
export function showDialog({ title, body, actions = [{ label: 'Close', value: null, kind: 'primary' }], id, className = '', mode = 'replace' }) {
  if (id) document.getElementById(id)?.close();
  if (mode === 'wait' && open.size > 0) {
    return new Promise((resolve) => {
      waiting.push(() => showDialog({ title, body, actions, id, className }).then(resolve));
    });
  }
  if (mode === 'replace') for (const d of [...open]) d._finish(null, true);
  return new Promise((resolve) => {
    const titleId = `dlg-title-${Math.random().toString(36).slice(2)}`;
    const buttons = actions.map((a) =>
      h('button', {
        type: 'button',
        class: `btn ${a.kind ? `btn-${a.kind}` : ''}`,
        autofocus: a.autofocus || false,
        onclick: () => finish(a.value),
        dataset: { action: String(a.value) },
      }, a.label),
    );
    const dlg = h('dialog', { class: `dialog ${className}`, id, 'aria-labelledby': titleId },
      h('div', { class: 'dialog-head' },
        h('h2', { id: titleId }, title),
        h('button', { type: 'button', class: 'btn-icon', 'aria-label': 'Close', onclick: () => finish(null) }, '×'),
      ),
      // Focusable, so that a long body can be scrolled with the keyboard.
      h('div', { class: 'dialog-body', tabindex: 0, role: 'region', 'aria-labelledby': titleId }, body),
      buttons.length ? h('div', { class: 'dialog-actions' }, buttons) : null,
    );
    let done = false;
    function finish(value, replaced = false) {
      if (done) return;
      done = true;
      open.delete(dlg);
      dlg.close();
      dlg.remove();
      resolve(value);
      if (open.size === 0 && !replaced) lastClosed();
    }
    dlg.addEventListener('cancel', (e) => {
      e.preventDefault();
      finish(null);
    });
    dlg.addEventListener('close', () => finish(null));
    dlg._finish = finish;
    document.body.append(dlg);
    open.add(dlg);
    dlg.showModal();
  });
}

/** A yes/no question; resolves true when confirmed. */
export async function confirmDialog({ title, body, confirm, cancel = 'Cancel', danger = false, id }) {
  const v = await showDialog({
    title,
    body,
    id,
    actions: [
      { label: cancel, value: false, kind: 'plain', autofocus: true },
      { label: confirm, value: true, kind: danger ? 'danger' : 'primary' },
    ],
  });
  return v === true;
}

/** Closes every open dialog (when leaving a screen). */
export function closeAllDialogs() {
  waiting.length = 0;
  for (const d of [...open]) d._finish(null, true);
}

/** Closes the dialog with this id, if open (as if dismissed). */
export function closeDialog(id) {
  for (const d of [...open]) if (d.id === id) d._finish(null);
}

/** True when a dialog with this id is open. */
export function isOpen(id) {
  return [...open].some((d) => d.id === id);
}

/** True while any dialog is open. */
export function anyOpen() {
  return open.size > 0;
}
