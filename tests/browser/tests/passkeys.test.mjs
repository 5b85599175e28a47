// Passkeys in the browser, with Chromium's own virtual authenticator (the
// DevTools protocol's WebAuthn domain): a guest keeps the account with a
// passkey from the account page; a second browser given the same
// credential signs in with it, no name typed, and is the same account, back
// at its seat; a third that plays as a guest is asked first, never merged,
// and a stale copy of the passkey (its signature counter behind) is
// refused; a passkey is removed. A server whose public address is another
// origin of the same relying party id refuses the passkey. Passkeys belong to a domain, so these
// pages open the server as `localhost` (the relying party when
// `server.public_url` is not set), never as 127.0.0.1.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { openPage, shot, startStack, tableIdOf, tableStatus } from '../lib/harness.mjs';

/** A virtual platform authenticator in `page` (user verification always passes). */
async function authenticator(context, page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true,
      isUserVerified: true, automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

const meOf = (page) => page.evaluate(async () => {
  const r = await fetch('/api/v1/me');
  return r.status === 200 ? r.json() : null;
});

export function passkeyTests(suite) {
  it('passkeys: a guest keeps the account with a passkey, a second browser signs in with it and finds its seat, and it is removed', async () => {
    const { browser, stack } = suite;
    const url = stack.url.replace('127.0.0.1', 'localhost');
    const a = await openPage(browser, url);
    let b = null;
    let c = null;
    try {
      const ka = await authenticator(a.context, a.page);
      await a.page.goto('/');
      await a.page.fill('#player-name', 'Keeper');
      await a.page.click('#play-now');
      await a.page.waitForSelector('.table-screen .seat.me');
      const id = tableIdOf(a.page);
      const seat = await a.page.getAttribute('.seat.me', 'data-seat');
      const account = (await meOf(a.page)).account;

      // Keep this account: a passkey named "Laptop".
      await a.page.goto('/#/me');
      await a.page.waitForSelector('#me-add-passkey');
      await a.page.fill('#me-passkey-name', 'Laptop');
      await a.page.click('#me-add-passkey');
      await a.page.waitForFunction(() => document.querySelector('#passkey-list .session-item') || document.querySelector('#me-passkey-error')?.textContent);
      assert.equal(await a.page.textContent('#me-passkey-error').catch(() => ''), '', 'no refusal');
      assert.match(await a.page.textContent('#passkey-list'), /Laptop/);
      assert.match(await a.page.textContent('#passkey-list'), /not used yet/);
      const { credentials } = await ka.cdp.send('WebAuthn.getCredentials', { authenticatorId: ka.authenticatorId });
      assert.equal(credentials.length, 1);
      assert.equal(credentials[0].isResidentCredential, true, 'a discoverable credential');
      assert.equal(credentials[0].rpId, 'localhost');
      await assertAccessible(assert, a.page, 'the account page with a passkey');
      await shot(a.page, 'account-passkey.png');

      // Another browser that holds the same passkey (as a synced passkey
      // would be): Sign in with a passkey, no name asked.
      b = await openPage(browser, url);
      const kb = await authenticator(b.context, b.page);
      await kb.cdp.send('WebAuthn.addCredential', { authenticatorId: kb.authenticatorId, credential: credentials[0] });
      await b.page.goto('/');
      await b.page.click('#lobby-sign-in');
      await b.page.waitForSelector('#me-none');
      await b.page.click('#me-passkey-sign-in');
      await b.page.waitForSelector('#me-passkeys');
      const signed = await meOf(b.page);

      // A third browser that plays as a guest first: signing in asks, and
      // staying keeps the guest; going on leaves the guest as it is.
      c = await openPage(browser, url);
      const kc = await authenticator(c.context, c.page);
      await kc.cdp.send('WebAuthn.addCredential', { authenticatorId: kc.authenticatorId, credential: credentials[0] });
      await c.page.goto('/');
      await c.page.fill('#player-name', 'Drifter');
      await c.page.click('#play-now');
      await c.page.waitForSelector('.table-screen .seat.me');
      const drifter = (await meOf(c.page)).account;
      const drifterTable = tableIdOf(c.page);
      await c.page.goto('/#/me');
      await c.page.click('#me-passkey-sign-in');
      await c.page.waitForSelector('dialog#passkey-switch[open]');
      assert.match(await c.page.textContent('dialog#passkey-switch'), /plays as Drifter.*not merged/s);
      await c.page.click('dialog#passkey-switch [data-action="false"]');
      assert.equal((await meOf(c.page)).account.id, drifter.id, 'staying keeps the guest');
      // This copy of the passkey is stale: its signature counter is behind
      // the one the server saw from the second browser (a cloned
      // credential), and it is refused.
      await c.page.click('#me-passkey-sign-in');
      await c.page.click('dialog#passkey-switch [data-action="true"]');
      await c.page.waitForFunction(() => /could not sign you in/.test(document.querySelector('#me-passkey-said')?.textContent || ''));
      assert.equal((await meOf(c.page)).account.id, drifter.id, 'still the guest');
      // The passkey as it is now (as a passkey synced between devices is).
      const { credentials: current } = await kb.cdp.send('WebAuthn.getCredentials', { authenticatorId: kb.authenticatorId });
      await kc.cdp.send('WebAuthn.clearCredentials', { authenticatorId: kc.authenticatorId });
      await kc.cdp.send('WebAuthn.addCredential', { authenticatorId: kc.authenticatorId, credential: current[0] });
      await c.page.click('#me-passkey-sign-in');
      await c.page.click('dialog#passkey-switch [data-action="true"]');
      await c.page.waitForFunction(() => document.querySelector('#topbar-me')?.textContent === 'Keeper');
      assert.equal((await meOf(c.page)).account.id, account.id, 'the passkey\'s account');
      assert.equal(await c.page.evaluate(() => localStorage.getItem('spades.v1.device')), null, 'the guest\'s secret is forgotten here');
      const drifterAt = await tableStatus(stack.api, drifterTable);
      assert.ok(drifterAt.seats.some((x) => x.name === 'Drifter'), 'the guest keeps its seat and name: nothing was merged');
      assert.equal(signed.account.id, account.id, 'the same account');
      assert.equal(signed.account.name, 'Keeper');
      assert.equal(await b.page.evaluate(() => localStorage.getItem('spades.v1.device')), null, 'no guest of its own');
      // Its seat follows it.
      await b.page.goto(`/#/table/${id}`);
      await b.page.waitForSelector(`.table-screen .seat.me[data-seat="${seat}"]`);
      assert.ok(b.rec.sent.filter((m) => m.type === 'resume').every((m) => !m.token), 'resumed as the account');
      // A reload keeps it signed in (the cookie), with no device secret.
      await b.page.reload();
      await b.page.waitForSelector(`.table-screen .seat.me[data-seat="${seat}"]`);

      // The passkey was used; it is removed from the first browser.
      await a.page.reload();
      await a.page.waitForSelector('#passkey-list .session-item');
      assert.doesNotMatch(await a.page.textContent('#passkey-list'), /not used yet/);
      await a.page.click('#passkey-list .btn-remove-passkey');
      await a.page.click('dialog#passkey-remove [data-action="true"]');
      await a.page.waitForSelector('#passkey-list', { state: 'detached' });
      const left = await a.page.evaluate(async () => (await fetch('/api/v1/me/passkeys')).json());
      assert.deepEqual(left, []);
      a.assertClean();
    } finally {
      await c?.close();
      await b?.close();
      await a.close();
    }
  });

  it('passkeys: the server refuses a passkey made for another origin of its relying party', async () => {
    const { browser } = suite;
    // The server's public address is localhost on port 9: a page on this
    // port is the same relying party id (the browser makes the passkey) but
    // another origin, which the server must refuse.
    const stack = await startStack({ SPADES_SERVER__PUBLIC_URL: 'http://localhost:9' });
    const p = await openPage(browser, stack.url.replace('127.0.0.1', 'localhost'));
    try {
      await authenticator(p.context, p.page);
      await p.page.goto('/');
      await p.page.fill('#player-name', 'Wanderer');
      await p.page.click('#play-now');
      await p.page.waitForSelector('.table-screen .seat.me');
      await p.page.goto('/#/me');
      await p.page.click('#me-add-passkey');
      await p.page.waitForFunction(() => document.querySelector('#me-passkey-error')?.textContent);
      assert.equal(await p.page.textContent('#me-passkey-error'), 'Could not add the passkey: the passkey could not be verified: try again');
      const kept = await p.page.evaluate(async () => (await fetch('/api/v1/me/passkeys')).json());
      assert.deepEqual(kept, [], 'nothing was kept');
    } finally {
      await p.close();
      await stack.stop();
    }
  });
}
