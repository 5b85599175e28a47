// Passwords in the browser, on a server that has them switched on: a guest
// sets a password on the account page; a second browser signs in with the
// name and the password, and is the same account, back at its seat; a
// third that plays as a guest is asked first and a wrong password is
// refused in the form; changing the password (the current one asked)
// signs the other browsers out; it is removed.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { openPage, shot, startStack, tableIdOf } from '../lib/harness.mjs';

const meOf = (page) => page.evaluate(async () => {
  const r = await fetch('/api/v1/me');
  return r.status === 200 ? r.json() : null;
});

/** Fills the account page's sign-in form and sends it. */
async function signIn(page, name, password) {
  await page.fill('#me-signin-name', name);
  await page.fill('#me-signin-password', password);
  await page.click('#me-password-sign-in');
}

export function passwordTests(suite) {
  it('passwords: a guest sets a password, another browser signs in with the name and it, a change signs the others out', async () => {
    const { browser } = suite;
    const stack = await startStack({ SPADES_ACCOUNTS__PASSWORDS: 'true' });
    const a = await openPage(browser, stack.url);
    let b = null;
    let c = null;
    try {
      await a.page.goto('/');
      await a.page.fill('#player-name', 'Wordsmith');
      await a.page.click('#play-now');
      await a.page.waitForSelector('.table-screen .seat.me');
      const id = tableIdOf(a.page);
      const seat = await a.page.getAttribute('.seat.me', 'data-seat');
      const account = (await meOf(a.page)).account;

      // Set a password: too short is said in the form first.
      await a.page.goto('/#/me');
      await a.page.waitForSelector('#me-password');
      assert.equal(await a.page.$('#me-password-current'), null, 'no current password to give yet');
      await a.page.fill('#me-password-new', 'short');
      await a.page.click('#me-set-password');
      assert.match(await a.page.textContent('#me-password-error'), /at least 8/);
      await a.page.fill('#me-password-new', 'wordsmith');
      await a.page.click('#me-set-password');
      await a.page.waitForFunction(() => /your name/.test(document.querySelector('#me-password-error')?.textContent || ''));
      await a.page.fill('#me-password-new', 'quill and inkwell');
      await a.page.click('#me-set-password');
      await a.page.waitForSelector('#me-password-current');
      assert.match(await a.page.textContent('#me-password'), /Change the password/);
      await assertAccessible(assert, a.page, 'the account page with a password');
      await shot(a.page, 'account-password.png');

      // A second browser: Have an account? The name and the password.
      b = await openPage(browser, stack.url);
      await b.page.goto('/');
      await b.page.click('#lobby-sign-in');
      await b.page.waitForSelector('#me-none');
      await signIn(b.page, 'wordsmith', 'quill and inkwell');
      await b.page.waitForSelector('#me-password-current');
      const signed = (await meOf(b.page)).account;
      assert.equal(signed.id, account.id, 'the same account');
      assert.equal(await b.page.evaluate(() => localStorage.getItem('spades.v1.device')), null, 'no guest of its own');
      await b.page.goto(`/#/table/${id}`);
      await b.page.waitForSelector(`.table-screen .seat.me[data-seat="${seat}"]`);

      // A third browser that plays as a guest: asked first; a wrong
      // password is refused in the form and it stays the guest.
      c = await openPage(browser, stack.url);
      await c.page.goto('/');
      await c.page.fill('#player-name', 'Scribbler');
      await c.page.click('#play-now');
      await c.page.waitForSelector('.table-screen .seat.me');
      const scribbler = (await meOf(c.page)).account;
      await c.page.goto('/#/me');
      await signIn(c.page, 'Wordsmith', 'not the password');
      await c.page.waitForSelector('dialog#password-switch[open]');
      assert.match(await c.page.textContent('dialog#password-switch'), /plays as Scribbler.*not merged/s);
      await c.page.click('dialog#password-switch [data-action="true"]');
      await c.page.waitForFunction(() => /do not sign anybody in/.test(document.querySelector('#me-signin-error')?.textContent || ''));
      assert.equal((await meOf(c.page)).account.id, scribbler.id, 'still the guest');
      assert.equal(await c.page.inputValue('#me-signin-password'), '', 'the wrong password is cleared');

      // The first browser changes the password: the second is signed out.
      await a.page.fill('#me-password-current', 'wrong guess here');
      await a.page.fill('#me-password-new', 'feather and parchment');
      await a.page.click('#me-set-password');
      await a.page.waitForFunction(() => /not this account's password/.test(document.querySelector('#me-password-error')?.textContent || ''));
      await a.page.fill('#me-password-current', 'quill and inkwell');
      await a.page.click('#me-set-password');
      // Drawn again once changed: the fields empty, no refusal.
      await a.page.waitForFunction(() => document.querySelector('#me-password-error')?.textContent === ''
        && document.querySelector('#me-password-new')?.value === '');
      assert.equal(await meOf(b.page), null, 'the other browser is signed out');
      assert.ok(await meOf(a.page), 'this one stays');
      // The new password signs in; then it is removed.
      await c.page.fill('#me-signin-name', 'Wordsmith');
      await c.page.fill('#me-signin-password', 'feather and parchment');
      await c.page.click('#me-password-sign-in');
      await c.page.click('dialog#password-switch [data-action="true"]');
      await c.page.waitForFunction(() => document.querySelector('#topbar-me')?.textContent === 'Wordsmith');
      assert.equal((await meOf(c.page)).account.id, account.id);
      await a.page.click('#me-remove-password');
      await a.page.click('dialog#password-remove [data-action="true"]');
      await a.page.waitForFunction(() => /Set a password/.test(document.querySelector('#me-set-password')?.textContent || ''));
      const ways = await a.page.evaluate(async () => (await fetch('/api/v1/me/identities')).json());
      assert.deepEqual(ways.map((w) => w.kind), ['device']);
      // The two refusals the page was sent (its name as the password, a
      // wrong current password) are the only errors.
      assert.deepEqual(a.rec.console.map((t) => t.match(/status of (\d+)/)?.[1]), ['400', '403']);
      a.rec.console.length = 0;
      a.assertClean();
    } finally {
      await c?.close();
      await b?.close();
      await a.close();
      await stack.stop();
    }
  });

  it('passwords: a server without them shows no password form', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url);
    try {
      await p.page.goto('/#/me');
      await p.page.waitForSelector('#me-none');
      assert.equal(await p.page.$('#me-password-form'), null);
    } finally {
      await p.close();
    }
  });
}
