// Who the player is: this browser's guest account, signed in at the first
// sit-down with a device secret kept in localStorage; the session is an
// HttpOnly cookie (REST and the WebSocket carry it). Without an account
// the page plays by name and seat token. docs/web-client.md, "The
// player's account".

import { ApiError, getMe, renameMe, signInGuest } from './api.js';
import { store } from './store.js';

/** A check of the session before a connection gives up waiting after this. */
const CHECK_TIMEOUT_MS = 3000;

/** Refusals of the name itself: the player chooses another. */
const NAME_REFUSALS = new Set(['name_taken', 'invalid_name']);

/** The account as last seen (`Account`), or null when signed out. */
let account = null;
/** The last answer is still good (no sign-out or refusal seen since). */
let known = false;
/** The check under way, shared by every caller. */
let checking = null;
/** The device secret when localStorage cannot keep it (private mode): for this page only. */
let pageSecret = null;
const listeners = new Set();

function set(next) {
  const changed = JSON.stringify(next) !== JSON.stringify(account);
  account = next;
  known = true;
  // Whether to ask the server at the next load (a session cookie may be there).
  store.setSignedIn(!!next);
  if (changed) for (const f of listeners) f(account);
}

/** 32 random bytes in base64url: the form docs/accounts.md asks for. */
function newSecret() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** This browser's device secret; made (and kept) with `create`. */
function deviceSecret(create) {
  const kept = store.device() || pageSecret;
  if (kept || !create) return kept;
  pageSecret = newSecret();
  store.setDevice(pageSecret);
  return pageSecret;
}

/** Signs the device in (making its account, named `name`, on first use). */
async function signIn(name, opts) {
  const r = await signInGuest(deviceSecret(true), name || null, opts);
  set(r.account);
  return r;
}

export const session = {
  /** The signed-in account as last seen, or null. */
  account: () => account,

  /** Calls `f(account)` whenever the account changes (signed in, renamed, signed out). */
  subscribe(f) {
    listeners.add(f);
    return () => listeners.delete(f);
  },

  /**
   * Who is signed in, asking the server when the last answer may be
   * stale: the account, or null. A browser without a device secret has
   * no account and asks nothing. A browser that already has an account
   * (a device secret) but no live session (the cookie ran out, was
   * cleared or signed out) signs in again with its secret. Never throws:
   * a server that cannot be reached answers null, and the page plays
   * without an account.
   */
  ready({ fresh = false } = {}) {
    if (known && !fresh) return Promise.resolve(account);
    if (!checking) {
      checking = (async () => {
        // Never signed in here (no device secret, no session seen): nothing to ask.
        if (!deviceSecret(false) && !store.signedIn()) {
          set(null);
          return null;
        }
        const opts = { timeoutMs: CHECK_TIMEOUT_MS };
        try {
          set((await getMe(opts)).account);
        } catch (err) {
          if (!(err instanceof ApiError) || err.status !== 401) return account;
          if (!deviceSecret(false)) {
            set(null);
            return null;
          }
          try {
            await signIn(null, opts);
          } catch {
            set(null);
          }
        }
        return account;
      })().finally(() => {
        checking = null;
      });
    }
    return checking;
  },

  /** The session may have ended (a close `4005`, a refusal): the next `ready` asks. */
  forget() {
    known = false;
  },

  /**
   * Plays as `name`: signs in (making the guest account under that name)
   * or renames the account when its name differs. Resolves with the
   * account, or null when no account could be had (too many accounts from
   * this address, the server unreachable): the page then plays by name,
   * as without accounts. Rejects with the server's `ApiError` when the
   * name is refused (`name_taken`, `invalid_name`, a rename too soon:
   * `rate_limited`), whose message says why, for the name field.
   */
  async playAs(name) {
    let acc = await this.ready();
    if (!acc) {
      try {
        acc = (await signIn(name)).account;
      } catch (err) {
        if (NAME_REFUSALS.has(err.code)) throw err;
        store.setName(name);
        return null;
      }
    }
    if (acc.name !== name) set(await renameMe(name));
    store.setName(account.name);
    return account;
  },

  /**
   * Signed in to `acc` another way (a passkey): this browser's guest
   * account, if any, is left as it is and its device secret forgotten, so
   * that the page never signs in to it again behind the player's back.
   */
  adopt(acc) {
    store.setDevice(null);
    pageSecret = null;
    set(acc);
    store.setName(acc.name);
  },

  /** Renames the account (`PATCH /api/v1/me`). */
  async rename(name) {
    set(await renameMe(name));
    store.setName(account.name);
    return account;
  },
};
