// The player's account page (#/me): the name and renaming it, the passkeys
// that keep the account (added, listed, removed) or sign it in, its
// password where the server has passwords on (set, changed, removed, and a
// name with its password signing an account in), the OpenID providers it
// offers (signing in, linking and unlinking an identity), the sessions
// signed in to the account (each may be signed out), a token that signs a
// terminal in as the account, and the account's finished matches; what an
// operator's sanction stops, and for an operator a link to their page.
// docs/web-client.md, "The player's account".

import { call, getMe, listMatches } from './api.js';
import { confirmDialog, showDialog } from './dialogs.js';
import { announce, h, replace } from './dom.js';
import { addPasskey, listPasskeys, passkeysSupported, removePasskey, signInWithPasskey } from './passkey.js';
import { session } from './session.js';

/** The account's sessions, the last used first (`SessionInfo[]`). */
const listSessions = () => call('GET', '/me/sessions');

/** A session of the account for another client (a terminal), labelled `client`: `{session, token}`, the token shown once. */
const issueSession = (client) => call('POST', '/me/sessions', client ? { client } : {});

/** Signs one session out (its id, or `current`). */
const endSession = (id) => call('DELETE', `/me/sessions/${encodeURIComponent(id)}`);

/** How this server signs players in: `{passkeys, passwords}`. */
const signInMethods = () => call('GET', '/sign-in/methods');

/** Every way into the account (`Identity[]`): devices, the password, passkeys. */
const listIdentities = () => call('GET', '/me/identities');

/** Sets the account's password (`current` when it has one): `{changed, signed_out}`. */
const setPassword = (password, current) =>
  call('PUT', '/me/password', current ? { password, current_password: current } : { password });

/** Removes the account's password. */
const removePassword = () => call('DELETE', '/me/password');

/** Unlinks an OpenID identity from the account. */
const unlinkIdentity = (id) => call('DELETE', `/me/oidc/${encodeURIComponent(id)}`);

/** Leaves for provider `id`'s sign-in (`link`: to link the identity to this account). */
const toProvider = (id, link) => {
  location.assign(`/api/v1/oidc/${encodeURIComponent(id)}/start${link ? '?link=true' : ''}`);
};

/** What the page says when a provider sent the player back (`?oidc=` or `?oidc_error=`). */
const OIDC_SAID = {
  created: 'Signed in: a new account was made for you.',
  signed_in: 'Signed in.',
  linked: 'Linked: it signs this account in now.',
  expired: 'That sign-in had run out or was not started in this browser: try again.',
  denied: 'The provider did not sign you in.',
  failed: 'The provider\'s answer could not be checked: try again.',
  taken: 'That identity already signs in another account: it was not linked (accounts are never merged).',
  unavailable: 'The provider cannot be reached right now: try again in a minute.',
  signed_out: 'This browser is not signed in to the account any more: sign in, then link the identity.',
  cross_site: 'A link can only be asked for from this page.',
  storage: 'The server could not keep that: try again.',
};

/** Signs in with an account's name and password; the page then plays as it. Resolves with the account. */
async function signInWithPassword(name, password) {
  const signed = await call('POST', '/passwords/sign-in', { name, password });
  session.adopt(signed.account);
  return signed.account;
}

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

  // Back from a provider: what happened, said once, then the address is clean.
  const back = new URLSearchParams(location.search);
  const outcome = back.get('oidc') || back.get('oidc_error');
  if (outcome) history.replaceState(null, '', `${location.pathname}#/me`);
  const oidcSaid = outcome ? h('p', { id: 'me-oidc-said', class: back.get('oidc') ? 'muted' : 'field-error', role: 'status' }, OIDC_SAID[outcome] || 'Back from the provider.') : null;

  let methods = null;
  let signedByProvider = outcome === 'created' || outcome === 'signed_in';
  async function load() {
    let acc = null;
    if (signedByProvider) {
      signedByProvider = false;
      // Signed in by the provider (the cookie): the page plays as that
      // account now, and forgets a guest's device secret, as a passkey
      // sign-in does.
      const me = await call('GET', '/me').catch(() => null);
      if (me) {
        session.adopt(me.account);
        acc = me.account;
      }
    }
    acc ??= await session.ready({ fresh: true });
    methods ??= await signInMethods().catch(() => ({ passkeys: true, passwords: false, providers: [] }));
    if (!alive) return;
    if (!acc) {
      status.textContent = '';
      replace(body, [
        oidcSaid,
        h('p', { id: 'me-none' }, 'You have no account on this server yet: it is made the first time you sit down at a table, under the name you choose.'),
        signInSection(),
        h('a', { class: 'btn btn-primary', href: '#/' }, 'To the lobby'),
      ]);
      return;
    }
    const [me, sessions, matches, passkeys, ways, blocks] = await Promise.all([
      getMe().catch((err) => err),
      listSessions().catch((err) => err),
      listMatches(20, { finished: true, mine: true }).catch((err) => err),
      listPasskeys().catch((err) => err),
      listIdentities().catch((err) => err),
      call('GET', '/me/blocks').catch((err) => err),
    ]);
    if (!alive) return;
    status.textContent = '';
    sessionsBox = sessionsSection(sessions);
    replace(body, [
      oidcSaid, standingSection(me), nameSection(acc, ways), passkeysSection(passkeys, ways), methods.passwords ? passwordSection(acc, ways) : null,
      providersSection(ways), sessionsBox, tokenSection(), matchesSection(matches), blocksSection(blocks), dataSection(), signInSection(acc),
    ]);
  }

  /** What an operator's sanctions stop now (`GET /api/v1/me`'s restrictions), and the operators' page for an operator. */
  function standingSection(me) {
    if (me instanceof Error) return null;
    const words = (r) => `${{ suspend: 'Suspended', ban: 'Banned', mute: 'Muted in chat' }[r.kind] || r.kind}${r.until ? ` until ${when.format(new Date(r.until))}` : ''}: ${r.reason}`;
    return [
      me.restrictions?.length ? h('section', { class: 'me-section', id: 'me-restrictions', 'aria-labelledby': 'me-restrictions-h' },
        h('h3', { id: 'me-restrictions-h' }, 'Restricted by an operator'),
        h('ul', { class: 'session-list' }, me.restrictions.map((r) => h('li', { class: 'session-item', dataset: { kind: r.kind } }, words(r))))) : null,
      me.operator ? h('p', {}, h('a', { class: 'btn btn-plain', id: 'me-moderation', href: '/admin' }, 'Moderation')) : null,
    ];
  }

  /** Asks before a browser that plays as `acc` signs in to another account (`how`: "with a passkey"). */
  function switchOk(acc, how, id) {
    if (!acc) return Promise.resolve(true);
    return confirmDialog({
      id,
      title: 'Sign in to another account?',
      body: [
        h('p', {}, `This browser plays as ${acc.name}. Signing in ${how} plays as that account instead.`),
        h('p', {}, `${acc.name} is not merged into it and stays as it is: keep ${acc.name} with a passkey${methods?.passwords ? ' or a password' : ''} first if you want to come back to it; otherwise this browser forgets it.`),
      ],
      confirm: `Sign in ${how}`,
      cancel: `Stay ${acc.name}`,
    });
  }

  /** Signing in to an account: a passkey, a provider, or (where passwords are on) a name and password. */
  function signInSection(acc) {
    const passkey = passkeySignIn(acc);
    const password = methods?.passwords ? passwordSignIn(acc) : null;
    const providers = providerSignIn(acc);
    if (!passkey && !password && !providers) return null;
    return h('section', { class: 'me-section', 'aria-labelledby': 'me-passkey-sign-in-h' },
      h('h3', { id: 'me-passkey-sign-in-h' }, acc ? 'Another account' : 'Have an account?'),
      providers, passkey, password);
  }

  /** A button for each OpenID provider: sign in with it (asking a guest whether to link it instead). */
  function providerSignIn(acc) {
    const list = methods?.providers || [];
    if (!list.length) return null;
    return h('div', { class: 'me-providers', id: 'me-providers' }, list.map((p) => {
      const button = h('button', { type: 'button', class: 'btn btn-primary btn-provider', dataset: { provider: p.id }, disabled: !p.available }, p.label);
      button.addEventListener('click', async () => {
        if (acc) {
          const choice = await showDialog({
            id: 'provider-choice',
            title: `${p.label}?`,
            body: [
              h('p', {}, `This browser plays as ${acc.name}. Link this identity to ${acc.name}, and it signs ${acc.name} in from now on (its name, seats and matches stay); or sign in to the account it already belongs to, leaving ${acc.name} as it is.`),
              h('p', {}, 'Nothing is merged: an identity that belongs to another account is never linked to this one.'),
            ],
            actions: [
              { label: 'Cancel', value: null, kind: 'plain', autofocus: true },
              { label: 'Sign in to another account', value: 'sign_in', kind: 'plain' },
              { label: `Link it to ${acc.name}`, value: 'link', kind: 'primary' },
            ],
          });
          if (!choice) return;
          toProvider(p.id, choice === 'link');
          return;
        }
        toProvider(p.id, false);
      });
      return h('p', {}, button, p.available ? null : h('span', { class: 'muted small' }, ' (cannot be reached right now)'));
    }));
  }

  /** The account's identities at OpenID providers: listed, each unlinked; a button to link another. */
  function providersSection(ways) {
    const list = methods?.providers || [];
    const linked = ways instanceof Error ? [] : ways.filter((w) => w.kind === 'oidc');
    if (!list.length && !linked.length) return null;
    const said = h('p', { class: 'muted small', role: 'status' });
    const rows = linked.map((w) => {
      const btn = h('button', { type: 'button', class: 'btn btn-small btn-danger-plain btn-unlink' }, 'Unlink', h('span', { class: 'sr-only' }, ` ${w.label}`));
      btn.addEventListener('click', async () => {
        btn.disabled = true;
        try {
          await unlinkIdentity(w.id);
          announce(`${w.label} unlinked.`);
          load();
        } catch (err) {
          said.textContent = `Could not unlink it: ${err.message}`;
          btn.disabled = false;
        }
      });
      return h('li', { class: 'session-item', dataset: { identity: w.id } },
        h('div', { class: 'session-text' },
          h('span', { class: 'session-client' }, w.label.replace(/^Sign in with /, '')),
          h('span', { class: 'muted small' }, 'Linked ', timeTag(w.created_at, ''), w.last_used_at ? [' · last used ', timeTag(w.last_used_at, '')] : '')),
        btn);
    });
    const links = list.map((p) => {
      const b = h('button', { type: 'button', class: 'btn btn-plain btn-link-provider', dataset: { provider: p.id }, disabled: !p.available }, `Link ${p.label.replace(/^Sign in with /, '')}`);
      b.addEventListener('click', () => toProvider(p.id, true));
      return b;
    });
    return h('section', { class: 'me-section', id: 'me-identities', 'aria-labelledby': 'me-identities-h' },
      h('h3', { id: 'me-identities-h' }, 'Sign in with another site'),
      h('p', { class: 'muted small' }, 'An identity you have elsewhere, linked to this account, signs it in on any browser.'),
      rows.length ? h('ul', { class: 'session-list', id: 'identity-list' }, rows) : null,
      h('div', { class: 'me-providers' }, links), said);
  }

  /** "Sign in with a password": the account's name and its password. */
  function passwordSignIn(acc) {
    const name = h('input', { id: 'me-signin-name', name: 'username', type: 'text', maxlength: 24, autocomplete: 'username', required: true });
    const password = h('input', { id: 'me-signin-password', name: 'password', type: 'password', maxlength: 128, autocomplete: 'current-password', required: true, 'aria-describedby': 'me-signin-error' });
    const error = h('p', { id: 'me-signin-error', class: 'field-error', role: 'alert' });
    const button = h('button', { type: 'submit', class: acc ? 'btn btn-plain' : 'btn btn-primary', id: 'me-password-sign-in' }, 'Sign in with a password');
    const form = h('form', { class: 'me-name-form me-pass-form', id: 'me-password-form', novalidate: true },
      h('div', { class: 'field' }, h('label', { for: 'me-signin-name' }, 'Name'), name),
      h('div', { class: 'field' }, h('label', { for: 'me-signin-password' }, 'Password'), password),
      error, button);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      if (!name.value.trim() || !password.value) {
        error.textContent = 'Type the account\'s name and its password.';
        return;
      }
      if (!(await switchOk(acc, 'with a password', 'password-switch'))) return;
      button.disabled = true;
      error.textContent = '';
      try {
        const signed = await signInWithPassword(name.value.trim(), password.value);
        announce(`Signed in as ${signed.name}.`);
        load();
      } catch (err) {
        error.textContent = err.message;
        password.value = '';
        password.focus();
        button.disabled = false;
      }
    });
    return [h('p', { class: 'muted small' }, 'Or the account\'s name and the password set on it.'), form];
  }

  /** The account's password: set one, or change (the other sessions are signed out) or remove it. */
  function passwordSection(acc, ways) {
    const head = h('h3', { id: 'me-password-h' }, 'Password');
    if (ways instanceof Error) return h('section', { class: 'me-section' }, head, h('p', { class: 'field-error' }, `Could not load the ways in (${ways.message}).`));
    const has = ways.some((w) => w.kind === 'password');
    const error = h('p', { id: 'me-password-error', class: 'field-error', role: 'alert' });
    const said = h('p', { class: 'muted small', role: 'status', id: 'me-password-said' });
    // The name, for the browser's password manager to file the password under.
    const user = h('input', { type: 'text', name: 'username', autocomplete: 'username', value: acc.name, hidden: true, readonly: true });
    const current = has ? h('input', { id: 'me-password-current', name: 'current-password', type: 'password', maxlength: 128, autocomplete: 'current-password', 'aria-describedby': 'me-password-error' }) : null;
    const next = h('input', { id: 'me-password-new', name: 'new-password', type: 'password', minlength: 8, maxlength: 128, autocomplete: 'new-password', 'aria-describedby': 'me-password-error me-password-hint' });
    const button = h('button', { type: 'submit', class: 'btn btn-primary', id: 'me-set-password' }, has ? 'Change the password' : 'Set a password');
    const form = h('form', { class: 'me-name-form me-pass-form', novalidate: true }, user,
      current ? h('div', { class: 'field' }, h('label', { for: 'me-password-current' }, 'Current password'), current) : null,
      h('div', { class: 'field' }, h('label', { for: 'me-password-new' }, has ? 'New password' : 'Password'), next,
        h('small', { id: 'me-password-hint', class: 'hint' }, 'At least 8 characters; a few words make a strong one.')),
      error, button);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      if (next.value.length < 8) {
        error.textContent = 'A password is at least 8 characters long.';
        next.focus();
        return;
      }
      button.disabled = true;
      error.textContent = '';
      try {
        const set = await setPassword(next.value, current?.value);
        const out = set.signed_out ? ` ${set.signed_out} other session${set.signed_out === 1 ? ' was' : 's were'} signed out.` : '';
        announce(set.changed ? `Password changed.${out}` : 'Password set: sign in anywhere with your name and it.');
        load();
      } catch (err) {
        error.textContent = err.message;
        (err.code === 'wrong_password' ? current : next)?.focus();
        button.disabled = false;
      }
    });
    let remove = null;
    if (has) {
      remove = h('button', { type: 'button', class: 'btn btn-small btn-danger-plain', id: 'me-remove-password' }, 'Remove the password');
      remove.addEventListener('click', async () => {
        const ok = await confirmDialog({
          id: 'password-remove',
          title: 'Remove the password?',
          body: h('p', {}, 'Your name and a password will no longer sign this account in. This browser stays signed in.'),
          confirm: 'Remove',
          danger: true,
        });
        if (!ok) return;
        remove.disabled = true;
        try {
          await removePassword();
          announce('Password removed.');
          load();
        } catch (err) {
          said.textContent = `Could not remove it: ${err.message}`;
          remove.disabled = false;
        }
      });
    }
    return h('section', { class: 'me-section', id: 'me-password', 'aria-labelledby': 'me-password-h' }, head,
      h('p', { class: 'muted small' }, has
        ? 'Your name and this password sign this account in on any browser. Changing it signs out everywhere else.'
        : 'Or keep this account with a password: then sign in on any browser with your name and it.'),
      form, remove, said);
  }

  /**
   * "Sign in with a passkey": on a browser with no account, or (asking
   * first) one that plays as a guest, which is then left as it is.
   */
  function passkeySignIn(acc) {
    if (!passkeysSupported()) return null;
    const said = h('p', { id: 'me-passkey-said', class: 'field-error', role: 'alert' });
    const button = h('button', { type: 'button', class: acc ? 'btn btn-plain' : 'btn btn-primary', id: 'me-passkey-sign-in' }, 'Sign in with a passkey');
    button.addEventListener('click', async () => {
      if (!(await switchOk(acc, 'with a passkey', 'passkey-switch'))) return;
      button.disabled = true;
      said.textContent = '';
      try {
        const signed = await signInWithPasskey();
        announce(`Signed in as ${signed.name}.`);
        load();
      } catch (err) {
        said.textContent = err?.name === 'NotAllowedError' ? 'No passkey was chosen.' : `Could not sign in: ${err.message}`;
        button.disabled = false;
      }
    });
    return [
      h('p', { class: 'muted small' }, 'A passkey made for this server on another device (or kept by your phone or password manager) signs you in here: no name to type.'),
      button, said,
    ];
  }

  function passkeysSection(passkeys, ways) {
    const head = h('h3', { id: 'me-passkeys-h' }, 'Keep this account');
    if (passkeys instanceof Error) return h('section', { class: 'me-section' }, head, h('p', { class: 'field-error' }, `Could not load the passkeys (${passkeys.message}).`));
    const kept = Array.isArray(ways) && ways.some((w) => w.kind !== 'device');
    const intro = passkeys.length
      ? 'Your passkeys: each signs this account in on any browser, with the screen lock of the device that holds it.'
      : kept ? 'A passkey (your fingerprint, face or screen lock) signs this account in on any browser or device, with nothing to type.' : 'A guest account lives in this browser only. Add a passkey (your fingerprint, face or screen lock) to keep it: sign in with it on another browser or device, and find your name, seats and matches there.';
    const rows = passkeys.map((p) => {
      const btn = h('button', { type: 'button', class: 'btn btn-small btn-danger-plain btn-remove-passkey' }, 'Remove', h('span', { class: 'sr-only' }, ` ${p.name}`));
      btn.addEventListener('click', async () => {
        const ok = await confirmDialog({
          id: 'passkey-remove',
          title: `Remove ${p.name}?`,
          body: [
            h('p', {}, 'It will no longer sign this account in. This browser stays signed in.'),
            passkeys.length === 1
              ? h('p', {}, h('strong', {}, 'It is the last one:'), ' the account then lives only where it is signed in now, and in the browser that made it, while it keeps its data.')
              : null,
          ],
          confirm: 'Remove',
          danger: true,
        });
        if (!ok) return;
        btn.disabled = true;
        try {
          await removePasskey(p.id);
          announce(`${p.name} removed.`);
          load();
        } catch (err) {
          error.textContent = `Could not remove it: ${err.message}`;
          btn.disabled = false;
        }
      });
      return h('li', { class: 'session-item', dataset: { passkey: p.id } },
        h('div', { class: 'session-text' },
          h('span', { class: 'session-client' }, p.name),
          h('span', { class: 'muted small' }, 'Added ', timeTag(p.created_at, ''), p.last_used_at ? [' · last used ', timeTag(p.last_used_at, '')] : ' · not used yet')),
        btn);
    });
    const name = h('input', { id: 'me-passkey-name', name: 'passkey', type: 'text', maxlength: 40, value: passkeys.length ? '' : 'This device', placeholder: 'Phone', 'aria-describedby': 'me-passkey-error' });
    const error = h('p', { id: 'me-passkey-error', class: 'field-error', role: 'alert' });
    const add = h('button', { type: 'submit', class: 'btn btn-primary', id: 'me-add-passkey' }, passkeys.length ? 'Add another passkey' : 'Keep this account: add a passkey');
    const form = h('form', { class: 'me-name-form', novalidate: true },
      h('div', { class: 'field' }, h('label', { for: 'me-passkey-name' }, 'Name of the passkey'), name), error, add);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const n = name.value.trim();
      if (!n) {
        error.textContent = 'Name the passkey ("Phone", "Laptop"): you will see the name in this list.';
        return;
      }
      add.disabled = true;
      error.textContent = '';
      try {
        const made = await addPasskey(n);
        announce(`Passkey ${made.name} added: this account is kept.`);
        load();
      } catch (err) {
        error.textContent = err?.name === 'NotAllowedError' ? 'The passkey was not made (cancelled or timed out).' : `Could not add the passkey: ${err.message}`;
        add.disabled = false;
      }
    });
    if (!passkeysSupported()) {
      add.disabled = true;
      error.textContent = 'This browser cannot make passkeys.';
    }
    return h('section', { class: 'me-section', id: 'me-passkeys', 'aria-labelledby': 'me-passkeys-h' }, head,
      h('p', { class: 'muted small' }, intro),
      passkeys.length ? h('ul', { class: 'session-list', id: 'passkey-list' }, rows) : null,
      form);
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

  function nameSection(acc, ways) {
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
      h('p', { class: 'muted small' }, Array.isArray(ways) && ways.some((w) => w.kind !== 'device')
        ? `Your account, made ${when.format(new Date(acc.created_at))}. It is kept: sign in with any of its ways below on another browser or device.`
        : `A guest account, made ${when.format(new Date(acc.created_at))}. It lives in this browser: clearing the site's data loses it.`),
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

  /** The players whose chat this account blocks (at every table, on every device), each with Unblock. */
  function blocksSection(blocks) {
    const head = h('h3', { id: 'me-blocks-h' }, 'Blocked in chat');
    if (blocks instanceof Error) return h('section', { class: 'me-section' }, head, h('p', { class: 'field-error' }, `Could not load the players you block (${blocks.message}).`));
    const said = h('p', { class: 'muted small', role: 'status' });
    const rows = blocks.map((b) => {
      const btn = h('button', { type: 'button', class: 'btn btn-small btn-plain btn-unblock' }, 'Unblock', h('span', { class: 'sr-only' }, ` ${b.name}`));
      const row = h('li', { class: 'session-item', dataset: { account: b.account } },
        h('div', { class: 'session-text' }, h('span', { class: 'session-client' }, b.name), h('span', { class: 'muted small' }, 'Blocked ', timeTag(b.at, ''))), btn);
      btn.addEventListener('click', async () => {
        btn.disabled = true;
        try {
          await call('DELETE', `/me/blocks/${encodeURIComponent(b.account)}`);
          row.remove();
          said.textContent = `You read ${b.name}'s chat again.`;
        } catch (err) {
          said.textContent = `Could not unblock ${b.name}: ${err.message}`;
          btn.disabled = false;
        }
      });
      return row;
    });
    return h('section', { class: 'me-section', id: 'me-blocks', 'aria-labelledby': 'me-blocks-h' }, head,
      h('p', { class: 'muted small' }, 'Players whose chat you do not read, at every table and on every device signed in as you. They are not told.'),
      rows.length ? h('ul', { class: 'session-list', id: 'me-blocks-list' }, rows) : h('p', { class: 'muted' }, 'Nobody.'), said);
  }

  /** The account's data as one JSON file (`GET /api/v1/me/export`, a download). */
  function dataSection() {
    return h('section', { class: 'me-section', 'aria-labelledby': 'me-data-h' }, h('h3', { id: 'me-data-h' }, 'Your data'),
      h('p', { class: 'muted' }, 'Everything this server keeps about your account, without a secret: ways in, sessions, matches and any sanction.'),
      h('p', {}, h('a', { class: 'btn btn-plain', id: 'me-export', href: '/api/v1/me/export', download: '' }, 'Download my data')));
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
