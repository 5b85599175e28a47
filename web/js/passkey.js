// Passkeys in the page (docs/accounts.md, "Passkeys"): each ceremony is
// options from the server, the browser's answer (it asks the player for
// the screen lock), then the server's verdict. Loaded with the account
// page only.

import { call } from './api.js';
import { session } from './session.js';

/** This browser can make and use passkeys (WebAuthn with its JSON helpers). */
export const passkeysSupported = () => typeof PublicKeyCredential !== 'undefined'
  && typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function'
  && typeof PublicKeyCredential.parseRequestOptionsFromJSON === 'function';

/** The account's passkeys (`PasskeyInfo[]`). */
export const listPasskeys = () => call('GET', '/me/passkeys');

/** Removes a passkey of the account. */
export const removePasskey = (id) => call('DELETE', `/me/passkeys/${encodeURIComponent(id)}`);

/**
 * Adds a passkey named `name` to the signed-in account. Resolves with the
 * passkey (`PasskeyInfo`); rejects with an `ApiError`, or the browser's
 * `DOMException` (the player said no: `NotAllowedError`).
 */
export async function addPasskey(name) {
  const { ceremony, options } = await call('POST', '/me/passkeys/options');
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options.publicKey);
  const credential = await navigator.credentials.create({ publicKey });
  return call('POST', '/me/passkeys', { ceremony, name, credential: credential.toJSON() });
}

/**
 * Signs in with a passkey this browser (or the player's phone) holds for
 * the site: a session of the passkey's account (the cookie), which the
 * page then plays as (`session.adopt`). Resolves with the account.
 */
export async function signInWithPasskey() {
  const { ceremony, options } = await call('POST', '/passkeys/options');
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options.publicKey);
  const credential = await navigator.credentials.get({ publicKey });
  const signed = await call('POST', '/passkeys/sign-in', { ceremony, credential: credential.toJSON() });
  session.adopt(signed.account);
  return signed.account;
}
