// OpenID Connect in the browser, against a real provider (npm
// `oidc-provider`, its own sign-in and consent pages): a visitor with no
// account signs in with the provider and comes back with a new account; a
// guest links an identity from the account page and it is listed; another
// guest is asked whether to link or sign in, and an identity that belongs
// to another account is refused, nothing merged. The server's public
// address is `localhost` (the provider sends the browser back there).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { openPage, shot, startStack } from '../lib/harness.mjs';
import { REPO_ROOT, freePort } from '../lib/server.mjs';

/** The provider on `port`, sending browsers back to the server at `server`. */
async function startProvider(port, server) {
  const child = spawn(process.execPath, [
    path.join(REPO_ROOT, 'tests/browser/oidc-provider.mjs'), String(port), 'spades-browser', 'browser-secret',
    `${server}/api/v1/oidc/club/callback`,
  ], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      if (String(d).includes('ready ')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the provider exited (${code})`)));
  });
  return { stop: () => child.kill() };
}

/**
 * Goes through the provider's pages as `login` (its sign-in form, then its
 * consent, each only when it asks), until the account page says how it went.
 */
async function throughProvider(page, login) {
  for (let step = 0; step < 4; step += 1) {
    await page.waitForSelector('input[name="login"], form[action*="/interaction/"] button[type="submit"], #me-oidc-said');
    if (await page.$('#me-oidc-said')) return;
    const at = page.url();
    if (await page.$('input[name="login"]')) {
      await page.fill('input[name="login"]', login);
      await page.fill('input[name="password"]', 'anything');
    }
    await page.click('form[action*="/interaction/"] button[type="submit"]');
    await page.waitForURL((u) => u.href !== at);
  }
  throw new Error('the provider never sent the browser back');
}

const meOf = (page) => page.evaluate(async () => {
  const r = await fetch('/api/v1/me');
  return r.status === 200 ? r.json() : null;
});

export function oidcTests(suite) {
  it('openid: a visitor signs in with a provider, a guest links an identity, and one of another account is refused', async () => {
    const { browser } = suite;
    const [serverPort, providerPort] = [await freePort(), await freePort()];
    const url = `http://localhost:${serverPort}`;
    const provider = await startProvider(providerPort, url);
    const stack = await startStack({
      SPADES_SERVER__PUBLIC_URL: url,
      SPADES_OIDC__PROVIDERS__CLUB__ISSUER: `http://localhost:${providerPort}`,
      SPADES_OIDC__PROVIDERS__CLUB__CLIENT_ID: 'spades-browser',
      SPADES_OIDC__PROVIDERS__CLUB__CLIENT_SECRET: 'browser-secret',
      SPADES_OIDC__PROVIDERS__CLUB__LABEL: 'Sign in with the Club',
    }, serverPort);
    const a = await openPage(browser, url);
    let b = null;
    let c = null;
    try {
      // No account yet: Have an account? Sign in with the Club.
      await a.page.goto('/#/me');
      await a.page.waitForSelector('#me-none');
      await a.page.click('#me-providers [data-provider="club"]');
      await throughProvider(a.page, 'carol');
      assert.match(await a.page.textContent('#me-oidc-said'), /new account/);
      assert.equal(new URL(a.page.url()).search, '', 'the address is clean again');
      const carol = (await meOf(a.page)).account;
      assert.equal(carol.name, 'carol', 'named as the provider names her');
      await a.page.waitForFunction(() => document.querySelector('#topbar-me')?.textContent === 'carol');
      assert.match(await a.page.textContent('#identity-list'), /the Club: carol/);
      await assertAccessible(assert, a.page, 'the account page signed in with a provider');
      await shot(a.page, 'account-oidc.png');

      // A guest links an identity: it is listed, and it signs the guest in.
      b = await openPage(browser, url);
      await b.page.goto('/');
      await b.page.fill('#player-name', 'Linker');
      await b.page.click('#play-now');
      await b.page.waitForSelector('.table-screen .seat.me');
      const linker = (await meOf(b.page)).account;
      await b.page.goto('/#/me');
      await b.page.click('#me-identities .btn-link-provider');
      await throughProvider(b.page, 'dave');
      assert.match(await b.page.textContent('#me-oidc-said'), /Linked/);
      assert.match(await b.page.textContent('#identity-list'), /dave/);
      assert.equal((await meOf(b.page)).account.id, linker.id, 'still the guest, now kept');

      // Another guest: asked first; linking dave, who is Linker's, is refused.
      c = await openPage(browser, url);
      await c.page.goto('/');
      await c.page.fill('#player-name', 'Other');
      await c.page.click('#play-now');
      await c.page.waitForSelector('.table-screen .seat.me');
      const other = (await meOf(c.page)).account;
      await c.page.goto('/#/me');
      await c.page.click('#me-providers [data-provider="club"]');
      await c.page.waitForSelector('dialog#provider-choice[open]');
      assert.match(await c.page.textContent('dialog#provider-choice'), /plays as Other.*Nothing is merged/s);
      await c.page.click('dialog#provider-choice [data-action="link"]');
      await throughProvider(c.page, 'dave');
      assert.match(await c.page.textContent('#me-oidc-said'), /already signs in another account/);
      assert.equal((await meOf(c.page)).account.id, other.id, 'still Other');
      const ways = await c.page.evaluate(async () => (await fetch('/api/v1/me/identities')).json());
      assert.deepEqual(ways.map((w) => w.kind), ['device'], 'nothing was linked to Other');
      // Signing in to dave's account instead: the page plays as Linker.
      await c.page.click('#me-providers [data-provider="club"]');
      await c.page.click('dialog#provider-choice [data-action="sign_in"]');
      await throughProvider(c.page, 'dave');
      await c.page.waitForFunction(() => document.querySelector('#topbar-me')?.textContent === 'Linker');
      assert.equal((await meOf(c.page)).account.id, linker.id);
      assert.equal(await c.page.evaluate(() => localStorage.getItem('spades.v1.device')), null, 'the guest\'s secret is forgotten here');
    } finally {
      await c?.close();
      await b?.close();
      await a.close();
      await stack.stop();
      provider.stop();
    }
  });
}
