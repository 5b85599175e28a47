// The player's account page (#/me): the name and renaming it, the sessions
// signed in to the account (each may be signed out), and the account's
// finished matches. docs/web-client.md, "The player's account".

import { endSession, listMatches, listSessions } from './api.js';
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
    replace(body, [nameSection(acc), sessionsSection(sessions), matchesSection(matches)]);
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
        load();
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
    return h('section', { class: 'me-section', 'aria-labelledby': 'me-sessions-h' }, head,
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
