// Turn alerts while the page is hidden: the tab's title, a tone made in the
// page (a remembered mute switch) and an opt-in desktop notification.
// The page's visibility, the tone and the notifications are observed
// through small wrappers installed before the page's own scripts.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { bid, createFromLobby, fillBotsAndStart, openPage } from '../lib/harness.mjs';

function instrument() {
  let hidden = false;
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (hidden ? 'hidden' : 'visible') });
  window.setHiddenForTest = (h) => {
    hidden = h;
    document.dispatchEvent(new Event('visibilitychange'));
  };
  window.tones = 0;
  const start = OscillatorNode.prototype.start;
  OscillatorNode.prototype.start = function (...args) {
    window.tones += 1;
    return start.apply(this, args);
  };
  window.notes = [];
  const Native = window.Notification;
  class Recorded extends Native {
    constructor(title, options) {
      super(title, options);
      window.notes.push({ title, body: options?.body, tag: options?.tag });
    }
  }
  window.Notification = Recorded;
}

export function alertTests(suite) {
  it('alerts a hidden page at the turn: title, a tone with a remembered mute switch, and an opt-in notification', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url);
    const { page, context } = p;
    await context.grantPermissions(['notifications'], { origin: new URL(stack.url).origin });
    await page.addInitScript(instrument);
    try {
      await createFromLobby(page, { player: 'Hal', table: 'Alerts' });
      // Opt in to notifications; the sound is on by default.
      await page.click('#btn-alerts');
      await page.waitForSelector('dialog#alerts[open]');
      assert.equal(await page.isChecked('#alert-sound'), true);
      assert.equal(await page.isChecked('#alert-notify'), false);
      await page.check('#alert-notify');
      await page.waitForFunction(() => localStorage.getItem('spades.v1.notify') === 'true');
      await page.keyboard.press('Escape');

      // The player goes to another tab; the match starts and the turn comes.
      await page.evaluate(() => window.setHiddenForTest(true));
      await fillBotsAndStart(page);
      await page.waitForSelector('#bid-picker:not([hidden])', { timeout: 20000 });
      await page.waitForFunction(() => document.title.startsWith('▶ Your turn'));
      assert.equal(await page.title(), '▶ Your turn · Alerts · Spades');
      assert.equal(await page.evaluate(() => window.tones), 2, 'two beeps');
      const notes = await page.evaluate(() => window.notes);
      assert.equal(notes.length, 1, 'one notification');
      assert.match(notes[0].body, /Alerts: your turn to bid\./);
      // Back to the page: the title is the table's again.
      await page.evaluate(() => window.setHiddenForTest(false));
      assert.equal(await page.title(), 'Alerts · Spades');
      await bid(page, 3);

      // Mute, and the switch is remembered across a reload.
      await page.click('#btn-alerts');
      await page.uncheck('#alert-sound');
      assert.equal(await page.evaluate(() => localStorage.getItem('spades.v1.muted')), 'true');
      await page.keyboard.press('Escape');
      await page.reload();
      await page.waitForSelector('.table-screen .seat.me');
      await page.click('#btn-alerts');
      assert.equal(await page.isChecked('#alert-sound'), false, 'still muted after a reload');
      assert.equal(await page.isChecked('#alert-notify'), true, 'still notifying after a reload');
      await page.keyboard.press('Escape');
      await page.waitForSelector('dialog#alerts', { state: 'detached' });

      // Hidden again, the next turn (a card): the title and the notification, no tone.
      // Play until a bot is on turn (a trick won leaves the player on turn).
      for (let i = 0; i < 13 && (await page.$('#hand .card.legal')); i++) {
        const card = await page.$eval('#hand .card.legal', (e) => e.dataset.card);
        await page.click(`#hand .card[data-card="${card}"]`);
        await page.waitForSelector(`#hand .card[data-card="${card}"]`, { state: 'detached', timeout: 10000 });
      }
      await page.evaluate(() => window.setHiddenForTest(true));
      await page.waitForFunction(() => document.title.startsWith('▶ Your turn'), null, { timeout: 20000 });
      assert.equal(await page.evaluate(() => window.tones), 0, 'muted: no tone');
      const after = await page.evaluate(() => window.notes);
      assert.equal(after.length, 1);
      assert.match(after[0].body, /your turn to (play a card|bid)\./);
      p.assertClean();
    } finally {
      await p.close();
    }
  });
}
