// Reporting a chat message or a player to the server's operators
// (docs/moderation.md#reports): a reason from the short list and, if the
// player likes, a few words; a spectator without an account is signed in
// as a guest first. And blocking a player's chat, kept with the account. The server finds the account reported and
// keeps what was said around it and the table as it is now.

import { ApiError, call, nameSuggestion } from './api.js';
import { showDialog } from './dialogs.js';
import { h } from './dom.js';
import { session } from './session.js';
import { store } from './store.js';

/** The reasons, in the order the server lists them, in words. */
export const REPORT_REASONS = {
  abusive_chat: 'Abusive chat',
  spam: 'Spam',
  cheating: 'Cheating',
  unsportsmanlike: 'Unsportsmanlike play (stalling, leaving, throwing)',
  offensive_name: 'Offensive name',
  other: 'Something else',
};

const TEXT_MAX = 500;

/**
 * A report is made by an account: a spectator who never sat is signed in
 * first, as a guest named as they were before or as the server suggests.
 */
async function signedIn() {
  if (await session.ready()) return;
  const name = store.name() || (await nameSuggestion()).name;
  if (!(await session.playAs(name))) throw new Error('an account is needed to report, and none could be had');
}

/**
 * Blocks the chat of `account` (named `name`) for this player, kept with
 * their account. Resolves with what to tell the player; rejects with the
 * server's refusal.
 */
export async function block(account, name) {
  await signedIn();
  await call('PUT', `/me/blocks/${encodeURIComponent(account)}`);
  return `You no longer read ${name}'s chat, at any table. Unblock on your account page.`;
}

/**
 * Asks why, then reports. `what` is `{ table, message }` (a chat message's
 * id) or `{ table, seat }`; `about` names it ("Rowdy's message: “…”").
 * Resolves with what to tell the player, or null when they cancelled.
 */
export async function report(what, about) {
  const reason = h('select', { id: 'report-reason' },
    Object.entries(REPORT_REASONS).map(([value, label]) => h('option', { value }, label)));
  const text = h('textarea', { id: 'report-text', rows: 3, maxlength: TEXT_MAX, 'aria-describedby': 'report-note' });
  const body = [
    h('p', { id: 'report-about' }, about),
    h('div', { class: 'field' }, h('label', { for: 'report-reason' }, 'Why'), reason),
    h('div', { class: 'field' }, h('label', { for: 'report-text' }, 'What happened (optional)'), text),
    h('p', { class: 'muted small', id: 'report-note' },
      'An operator of this server reads every report, with the messages around it and the table as it is now. The player is not told who reported them.'),
  ];
  const chosen = await showDialog({
    title: 'Report to the operators',
    id: 'report-dialog',
    body,
    mode: 'over',
    actions: [
      { label: 'Cancel', value: null, kind: 'plain' },
      { label: 'Send the report', value: 'send', kind: 'primary' },
    ],
  });
  if (chosen !== 'send') return null;
  const table = encodeURIComponent(what.table);
  const path = what.message != null
    ? `/tables/${table}/chat/${what.message}/report`
    : `/tables/${table}/seats/${what.seat}/report`;
  try {
    await signedIn();
    await call('POST', path, { reason: reason.value, text: text.value.trim() });
    return 'Report sent: an operator will look at it.';
  } catch (err) {
    return `The report was not sent: ${err instanceof ApiError ? err.message : String(err)}.`;
  }
}
