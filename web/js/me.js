// The player's account page (#/me): the name and renaming it, the sessions
// signed in to the account (each may be signed out), a token that signs a
// terminal in as the account, and the account's finished matches.
// docs/web-client.md, "The player's account".

import { endSession, issueSession, listMatches, listSessions } from './api.js';
import { announce, h, replace } from './dom.js';
import { session } from './session.js';

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const timeTag = (ms, cls = 'muted small') => h('time', { class: cls, datetime: new Date(ms).toISOString() }, when.format(new Date(ms)));

/** A session's client in words: "Chrome on Linux", else what it sent. */
export function clientName(ua) {
  if (!ua) return 'Unknown client';
  const browser = [['Edg/', 'Edge'], ['OPR/', 'Opera'], ['Firefox/', 'Firefox'], ['Chrome/', 'Chrome'], ['Chromium/', 'Chromium'], ['Safari/', 'Safari']]
    .find(([k]) => ua.includes(k))?.[1];
  const os = [['Android', 'Android'], ['iPhone', 'iPhone'], ['iPad', 'iPad'], ['Windows', 'Windows'], ['Mac OS X', 'macOS'], ['CrOS', 'ChromeOS'], ['Linux', 'Linux']]
    .find(([k]) => ua.includes(k))?.[1];
  if (browser) return os ? `${browser} on ${os}` : browser;
  return ua;
}

/** Mounts the account page in `root`; returns a function that unmounts it. */
export function mountMe(root, { setTitle }) {
  let alive = true;
  setTitle('Your account');
  const status = h('p', { class: 'muted', role: 'status' }, 'Loading…');
  const body = h('div', { class: 'me-body' });
  replace(root, h('div', { class: 'me-screen' }, h('section', { class: 'panel' }, h('h2', {}, 'Your account'), status, body)));

  async function load() {
    const acc = await session.ready({ fresh: true });
    if (!alive) return;
    if (!acc) {
      status.textContent = '';
      replace(body, [
        h('p', { id: 'me-none' }, 'You have no account on this server yet: it is made the first time you sit down at a table, under the name you choose.'),
        h('a', { class: 'btn btn-primary', href: '#/' }, 'To the lobby'),
      ]);
      return;
    }
    const [sessions, matches] = await Promise.all([
      listSessions().catch((err) => err),
      listMatches(20, { finished: true, mine: true }).catch((err) => err),
    ]);
    if (!alive) return;
    status.textContent = '';
    sessionsBox = sessionsSection(sessions);
    replace(body, [nameSection(acc), sessionsBox, tokenSection(), matchesSection(matches)]);
  }

  /** The sessions' section, drawn again in place (the rest of the page stays). */
  let sessionsBox = null;
  async function refreshSessions() {
    const sessions = await listSessions().catch((err) => err);
    if (!alive || !sessionsBox) return;
    const next = sessionsSection(sessions);
    sessionsBox.replaceWith(next);
    sessionsBox = next;
  }

  /** A copy box: a read-only field and its Copy button. */
  function copyField(id, label, text) {
    const input = h('input', { type: 'text', readonly: true, id, value: text, class: 'copy-input' });
    const said = h('span', { class: 'muted small', role: 'status' });
    const btn = h('button', {
      type: 'button', class: 'btn btn-small btn-plain', 'aria-label': `Copy ${label.toLowerCase()}`,
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(text);
          said.textContent = 'Copied.';
        } catch {
          input.select();
          said.textContent = 'Select the text and copy it.';
        }
      },
    }, 'Copy');
    return h('div', { class: 'field' }, h('label', { for: id }, label), h('div', { class: 'copy-row' }, input, btn), said);
  }

  function tokenSection() {
    const label = h('input', { id: 'me-token-label', name: 'client', type: 'text', maxlength: 40, placeholder: 'Terminal on my laptop', 'aria-describedby': 'me-token-error' });
    const error = h('p', { id: 'me-token-error', class: 'field-error', role: 'alert' });
    const shown = h('div', { id: 'me-token', class: 'me-token', hidden: true });
    const button = h('button', { type: 'submit', class: 'btn btn-plain', id: 'me-make-token' }, 'Make a token');
    const form = h('form', { class: 'me-name-form', novalidate: true },
      h('div', { class: 'field' }, h('label', { for: 'me-token-label' }, 'What it is for'), label), error, button);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      button.disabled = true;
      error.textContent = '';
      try {
        const made = await issueSession(label.value.trim() || null);
        replace(shown, [
          h('p', {}, h('strong', {}, 'Copy it now: it is shown only this once.'), ' Anyone who has it plays as you until you sign it out above.'),
          copyField('me-token-value', 'Token', made.token),
          copyField('me-token-command', 'In a terminal', `spades-tui --url ${location.origin} --token ${made.token}`),
        ]);
        shown.hidden = false;
        label.value = '';
        announce('Token made: copy it now, it is shown once.');
        refreshSessions();
      } catch (err) {
        error.textContent = err.message;
      }
      button.disabled = false;
    });
    return h('section', { class: 'me-section', 'aria-labelledby': 'me-token-h' },
      h('h3', { id: 'me-token-h' }, 'Play from a terminal or another machine'),
      h('p', { class: 'muted small' }, 'A token signs a program in as you: the terminal client (spades-tui --token), or one of your own. It is a session like this browser\'s, listed above and signed out there.'),
      form, shown);
  }

  function nameSection(acc) {
    const input = h('input', {
      id: 'me-name', name: 'name', type: 'text', maxlength: 24, autocomplete: 'nickname', value: acc.name,
      'aria-describedby': 'me-name-error me-name-hint',
    });
    const error = h('p', { id: 'me-name-error', class: 'field-error', role: 'alert' });
    const later = acc.rename_after && acc.rename_after > Date.now();
    const hint = h('small', { id: 'me-name-hint', class: 'hint' },
      later ? ['You may rename again after ', timeTag(acc.rename_after, ''), '.'] : 'You may rename once a day; the name you give up stays yours for 30 days.');
    const button = h('button', { type: 'submit', class: 'btn btn-primary', id: 'me-rename' }, 'Rename');
    const form = h('form', { class: 'me-name-form', novalidate: true },
      h('div', { class: 'field' }, h('label', { for: 'me-name' }, 'Your name'), input, hint), error, button);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const name = input.value.trim();
      if (!name || name === acc.name) {
        error.textContent = name ? 'That is your name already.' : 'Type the new name.';
        input.setAttribute('aria-invalid', 'true');
        return;
      }
      button.disabled = true;
      try {
        await session.rename(name);
        announce(`You are now ${name}.`);
        load();
      } catch (err) {
        error.textContent = err.message;
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        button.disabled = false;
      }
    });
    return h('section', { class: 'me-section', 'aria-labelledby': 'me-name-h' },
      h('h3', { id: 'me-name-h' }, 'Name'),
      h('p', { class: 'muted small' }, `A guest account, made ${when.format(new Date(acc.created_at))}. It lives in this browser: clearing the site's data loses it.`),
      form);
  }

  function sessionsSection(sessions) {
    const head = h('h3', { id: 'me-sessions-h' }, 'Where you are signed in');
    if (sessions instanceof Error) return h('section', { class: 'me-section' }, head, h('p', { class: 'field-error' }, `Could not load the sessions (${sessions.message}).`));
    const said = h('p', { class: 'muted small', role: 'status' });
    const signOut = async (ids, btn) => {
      btn.disabled = true;
      try {
        for (const id of ids) await endSession(id);
        announce(ids.length === 1 ? 'Signed out.' : `Signed out of ${ids.length} sessions.`);
        refreshSessions();
      } catch (err) {
        said.textContent = `Could not sign out: ${err.message}`;
        btn.disabled = false;
      }
    };
    const others = sessions.filter((s) => !s.current);
    const rows = sessions.map((s) => {
      const btn = s.current ? null : h('button', { type: 'button', class: 'btn btn-small btn-danger-plain btn-sign-out' }, 'Sign out', h('span', { class: 'sr-only' }, ` ${clientName(s.client)}`));
      btn?.addEventListener('click', () => signOut([s.id], btn));
      return h('li', { class: `session-item${s.current ? ' current' : ''}`, dataset: { session: s.id } },
        h('div', { class: 'session-text' },
          h('span', { class: 'session-client' }, clientName(s.client), s.current ? h('strong', { class: 'session-here' }, ' · this browser') : null),
          h('span', { class: 'muted small' }, 'Signed in ', timeTag(s.created_at, ''), ' · last used ', timeTag(s.last_used_at, ''), s.address ? ` · ${s.address}` : '')),
        btn);
    });
    const all = others.length > 1 ? h('button', { type: 'button', class: 'btn btn-small btn-plain', id: 'me-sign-out-others' }, 'Sign out everywhere else') : null;
    all?.addEventListener('click', () => signOut(others.map((s) => s.id), all));
    return h('section', { class: 'me-section', id: 'me-sessions', 'aria-labelledby': 'me-sessions-h' }, head,
      h('p', { class: 'muted small' }, 'Each browser or program signed in to this account. Signing one out closes its tables\' connections at once; it can no longer play as you.'),
      h('ul', { class: 'session-list', id: 'session-list' }, rows), all, said);
  }

  function matchesSection(matches) {
    const head = h('h3', { id: 'me-matches-h' }, 'Your matches');
    if (matches instanceof Error) return h('section', { class: 'me-section' }, head, h('p', { class: 'field-error' }, `Could not load the matches (${matches.message}).`));
    const done = matches.filter((m) => m.hands_played > 0);
    return h('section', { class: 'me-section', 'aria-labelledby': 'me-matches-h' }, head,
      done.length
        ? h('ul', { class: 'recent-list', id: 'me-matches' }, done.map((m) => h('li', { class: 'recent-item', dataset: { table: m.table } },
          h('div', { class: 'recent-text' },
            h('span', { class: 'recent-name' }, m.name),
            h('span', { class: 'muted small' }, `${m.scores[0]} – ${m.scores[1]} · ${m.hands_played} hand${m.hands_played === 1 ? '' : 's'}`),
            timeTag(m.created_at)),
          h('a', { class: 'btn btn-plain btn-small btn-replay', href: `#/replay/${m.table}` }, 'Replay', h('span', { class: 'sr-only' }, ` ${m.name}`)))))
        : h('p', { class: 'muted' }, 'You have not finished a match yet.'));
  }

  load().catch((err) => {
    if (alive) status.textContent = `Could not load your account (${err.message}).`;
  });
  return () => {
    alive = false;
  };
}
