// Table looks: the settings dialog, opened from the top bar in the lobby and
// at the table and driven with the keyboard (arrow keys in each radio group,
// Escape closes, focus goes back to the button); the large-print four-colour
// deck, the table backgrounds and the player's avatar applied at a table with
// bots and remembered over a reload; axe on the table with every card design
// and every background; the dialog on a phone; a picture one seat's alone
// (never the player's choice at another seat, never two seats alike) for a
// player and for a spectator.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { axeViolations } from '../lib/axe.mjs';
import { bid, createFromLobby, fillBotsAndStart, openPage, shot, waitTurnOrScoring } from '../lib/harness.mjs';

// The four-colour deck's inks (looks.css): spades black, hearts red,
// diamonds blue, clubs green.
const FOUR_COLOURS = { S: 'rgb(0, 0, 0)', H: 'rgb(176, 0, 30)', D: 'rgb(0, 57, 166)', C: 'rgb(0, 90, 36)' };
// The middle of each table background.
const FELT_MIDDLE = { green: 'rgb(27, 122, 76)', blue: 'rgb(23, 74, 126)', red: 'rgb(138, 28, 43)', wood: 'rgb(90, 56, 32)' };
const PICTURES = ['fox', 'owl', 'cat', 'crown', 'star', 'spade'];

const looksOf = (page) => page.evaluate(() => ({ ...document.documentElement.dataset }));
const focusedId = (page) => page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);

/** Opens the dialog from the top bar, picks the given choices with the mouse and closes it with Done. */
async function choose(page, { cards, felt, avatar }) {
  await page.click('#btn-looks');
  await page.waitForSelector('dialog#looks[open]');
  if (cards) await page.check(`#looks-cards-${cards}`);
  if (felt) await page.check(`#looks-felt-${felt}`);
  if (avatar) await page.check(`#looks-avatar-${avatar}`);
  await page.click('dialog#looks .dialog-actions .btn');
  await page.waitForSelector('dialog#looks', { state: 'detached' });
  // Back on the button; or, closed on the player's turn at a table (the
  // bots may have brought it meanwhile), on the turn's control, as every
  // dialog that closes then does (docs/web-client.md, "Dialogs").
  const focus = await page.evaluate(() => {
    const a = document.activeElement;
    return { id: a?.id || a?.tagName, turn: !!a?.closest?.('#bid-picker, #hand') };
  });
  assert.ok(focus.id === 'btn-looks' || focus.turn, `focus back on the Table looks button, or the turn's control (${focus.id})`);
}

/** Every card in the hand and on the table: its suit, ink and the shape of its face. */
function cardFaces(page) {
  return page.$$eval('#hand .card, .trick-box .card', (els) => els.map((e) => {
    const cs = getComputedStyle(e);
    const corner = getComputedStyle(e.querySelector('.corner'));
    return {
      card: e.dataset.card,
      color: cs.color,
      fill: getComputedStyle(e.querySelector('.center-pip')).fill,
      rankRatio: parseFloat(corner.fontSize) / e.getBoundingClientRect().width,
      endShown: getComputedStyle(e.querySelector('.corner-end')).display !== 'none',
    };
  }));
}

async function assertFourColourDeck(page, what) {
  const faces = await cardFaces(page);
  assert.ok(faces.length >= 13, `${what}: the hand is there (${faces.length})`);
  for (const f of faces) {
    const want = FOUR_COLOURS[f.card[1]];
    assert.equal(f.color, want, `${what}: ${f.card} is inked ${want}`);
    assert.equal(f.fill, want, `${what}: ${f.card}'s pip is ${want}`);
    assert.ok(f.rankRatio >= 0.45, `${what}: ${f.card}'s rank is large print (${f.rankRatio.toFixed(2)} of the card's width)`);
    assert.equal(f.endShown, false, `${what}: one big corner on ${f.card}`);
  }
  // Four suits, four inks: a 13-card hand has at least two suits.
  const suits = new Set(faces.map((f) => f.card[1]));
  const inks = new Set(faces.map((f) => f.color));
  assert.ok(suits.size >= 2);
  assert.equal(inks.size, suits.size, `${what}: one ink a suit`);
}

async function assertFelt(page, felt, what) {
  const bg = await page.$eval('.felt', (e) => getComputedStyle(e).backgroundImage);
  assert.ok(bg.includes(FELT_MIDDLE[felt]), `${what}: the table is ${felt} (${bg})`);
}

/** The player's seat shows `design`; every other seat a generated picture; labels and names intact. */
async function assertAvatars(page, design, player, what) {
  const seats = await page.$$eval('.seat', (els) => els.map((s) => ({
    me: s.classList.contains('me'),
    label: s.getAttribute('aria-label'),
    name: s.querySelector('.seat-name').textContent,
    hidden: s.querySelector('.avatar').getAttribute('aria-hidden'),
    pic: s.querySelector('.avatar svg.avatar-pic')?.dataset.avatar ?? null,
    text: s.querySelector('.avatar').textContent,
  })));
  const me = seats.filter((s) => s.me);
  assert.equal(me.length, 1, `${what}: one seat is the player's`);
  assert.equal(me[0].pic, design, `${what}: the player's seat shows the ${design}`);
  assert.match(me[0].label, new RegExp(`^(North|East|South|West): ${player}, \\(you\\)`), `${what}: the seat's label is kept: ${me[0].label}`);
  assert.match(me[0].name, new RegExp(`^${player}`), `${what}: the seat's name is kept`);
  assert.equal(new Set(seats.map((s) => s.pic)).size, 4, `${what}: each seat's picture is its own: ${seats.map((s) => s.pic)}`);
  for (const s of seats) {
    assert.equal(s.hidden, 'true', `${what}: the avatar is decorative`);
    assert.ok(PICTURES.includes(s.pic), `${what}: ${s.label} has a picture (${s.pic})`);
    assert.equal(s.text, '', `${what}: no initials under the picture`);
    assert.match(s.label, /^(North|East|South|West): \S/, `${what}: seat label ${s.label}`);
  }
}

/** axe on the whole page: no contrast problem at all, nothing serious or critical. */
async function assertAxeClean(page, what) {
  const violations = await axeViolations(page);
  const contrast = violations.filter((v) => v.id === 'color-contrast' || v.id === 'color-contrast-enhanced');
  assert.deepEqual(contrast, [], `${what}: contrast violations:\n${JSON.stringify(contrast, null, 2)}`);
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad, [], `${what}: serious or critical violations:\n${JSON.stringify(bad, null, 2)}`);
}

const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

export function looksTests(suite) {
  it('Table looks: chosen with the keyboard in the lobby, applied at a table with bots, remembered over a reload, accessible with every design and table', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 1366, height: 768 } });
    const { page } = p;
    try {
      await page.goto('/');
      await page.waitForSelector('#play-now');
      assert.deepEqual(await looksOf(page), { cards: 'classic', felt: 'green', avatar: 'initials' }, 'the defaults');

      // The keyboard: Enter opens, focus lands on the chosen card design,
      // arrows choose (at once), Tab goes to the next group, Escape closes.
      await page.focus('#btn-looks');
      await page.keyboard.press('Enter');
      await page.waitForSelector('dialog#looks[open]');
      assert.equal(await focusedId(page), 'looks-cards-classic', 'focus on the chosen card design');
      assert.equal(await page.locator('dialog#looks fieldset').count(), 3, 'three radio groups');
      assert.equal(await page.locator('dialog#looks input[type="radio"][name="looks-cards"]').count(), 3);
      assert.equal(await page.locator('dialog#looks input[type="radio"][name="looks-felt"]').count(), 4);
      assert.equal(await page.locator('dialog#looks input[type="radio"][name="looks-avatar"]').count(), 7);
      // Named by the label's words, not by the preview's cards.
      assert.equal(await page.getByRole('radio', { name: 'Large print, four colours', exact: true }).getAttribute('id'), 'looks-cards-large');
      assert.equal(await page.getByRole('radio', { name: 'Dark wood', exact: true }).getAttribute('id'), 'looks-felt-wood');
      await page.keyboard.press('ArrowRight');
      assert.equal(await focusedId(page), 'looks-cards-large');
      assert.equal((await looksOf(page)).cards, 'large', 'the four-colour deck applies at once');
      await page.keyboard.press('Tab');
      assert.equal(await focusedId(page), 'looks-felt-green', 'Tab goes to the table backgrounds');
      await page.keyboard.press('ArrowRight');
      assert.equal((await looksOf(page)).felt, 'blue');
      await page.keyboard.press('Tab');
      assert.equal(await focusedId(page), 'looks-avatar-initials', 'then to the avatars');
      await page.keyboard.press('ArrowRight');
      assert.equal((await looksOf(page)).avatar, 'fox');
      await assertAxeClean(page, 'the Table looks dialog');
      await shot(page, 'looks-dialog.png');
      await page.keyboard.press('Escape');
      await page.waitForSelector('dialog#looks', { state: 'detached' });
      assert.equal(await focusedId(page), 'btn-looks', 'Escape closes and focus goes back to the button');
      // Remembered in the browser, through store.js.
      assert.deepEqual(await page.evaluate(() => ['cards', 'felt', 'avatar'].map((k) => JSON.parse(localStorage.getItem(`spades.v1.looks.${k}`)))),
        ['large', 'blue', 'fox']);

      // A table with bots: the deck, the table and the avatar apply there.
      await createFromLobby(page, { player: 'Anouk', table: 'Looks', options: { tempo: 'relaxed' } });
      assert.deepEqual(await looksOf(page), { cards: 'large', felt: 'blue', avatar: 'fox' }, 'kept on the way to the table');
      await fillBotsAndStart(page);
      await page.waitForFunction(() => document.querySelectorAll('#hand .card').length === 13, null, { timeout: 20000 });
      await assertFourColourDeck(page, 'at the table');
      await assertFelt(page, 'blue', 'at the table');
      assert.equal(await page.$eval('.felt', (e) => getComputedStyle(e).borderTopColor), 'rgb(38, 50, 65)', 'the blue table has its own rim');
      await assertAvatars(page, 'fox', 'Anouk', 'at the table');
      // The other seats' pictures come from their names: the same on every draw.
      const seatLooks = () => page.$$eval('.seat:not(.me) .avatar', (els) => els.map((e) => e.dataset.look));
      // At 1366×768 the button sits clear of the table's toolbar.
      const looksBox = await page.locator('#btn-looks').boundingBox();
      assert.ok(looksBox.x >= 0 && looksBox.y >= 0 && looksBox.y + looksBox.height <= 768, 'the button is in view');
      for (const b of await page.locator('.toolbar .btn:visible').all()) {
        assert.ok(!overlap(looksBox, await b.boundingBox()), `the Table looks button clears ${await b.textContent()}`);
      }

      // Changed at the table with the mouse: the seats repaint at once.
      await choose(page, { felt: 'wood', avatar: 'owl' });
      await assertFelt(page, 'wood', 'dark wood');
      await assertAvatars(page, 'owl', 'Anouk', 'after choosing the owl');
      const others = await seatLooks();
      await shot(page, 'looks-table.png');

      // A reload keeps every choice.
      await page.reload();
      await page.waitForSelector('.table-screen .seat.me');
      await page.waitForFunction(() => document.querySelectorAll('#hand .card').length === 13, null, { timeout: 20000 });
      assert.deepEqual(await looksOf(page), { cards: 'large', felt: 'wood', avatar: 'owl' }, 'remembered over a reload');
      await assertFourColourDeck(page, 'after the reload');
      await assertFelt(page, 'wood', 'after the reload');
      await assertAvatars(page, 'owl', 'Anouk', 'after the reload');
      assert.deepEqual(await seatLooks(), others, 'the other seats keep their pictures over a reload');

      // Bid and wait for the turn to play: the bots' cards lie on the table.
      await bid(page, 3);
      assert.equal(await waitTurnOrScoring(page), 'turn');

      // Back to initials: every seat shows initials again.
      await choose(page, { avatar: 'initials' });
      const texts = await page.$$eval('.seat .avatar', (els) => els.map((e) => ({ text: e.textContent, pic: !!e.querySelector('svg') })));
      assert.ok(texts.every((t) => !t.pic && t.text.length >= 1 && t.text.length <= 2), `initials at every seat: ${JSON.stringify(texts)}`);
      assert.ok(texts.some((t) => t.text === 'AN'), "Anouk's initials");

      // axe with every card design on every table.
      for (const cards of ['classic', 'large', 'simple']) {
        for (const felt of ['green', 'blue', 'red', 'wood']) {
          await choose(page, { cards, felt, avatar: cards === 'simple' ? 'star' : 'crown' });
          assert.deepEqual(await looksOf(page), { cards, felt, avatar: cards === 'simple' ? 'star' : 'crown' });
          await assertFelt(page, felt, `${cards} on ${felt}`);
          await assertAxeClean(page, `the table, ${cards} cards on ${felt}`);
          if (['classic:green', 'large:blue', 'simple:red'].includes(`${cards}:${felt}`)) await shot(page, `looks-${cards}-${felt}.png`);
        }
      }
      // The classic design is today's: two inks, a centre pip, two corners.
      await choose(page, { cards: 'classic' });
      const classic = await cardFaces(page);
      for (const f of classic) {
        const red = f.card[1] === 'H' || f.card[1] === 'D';
        assert.equal(f.color, red ? 'rgb(200, 16, 46)' : 'rgb(21, 21, 21)', `classic ${f.card}`);
        assert.ok(f.endShown && f.rankRatio < 0.32, `classic ${f.card}'s corners`);
      }
      p.assertClean();
    } finally {
      await p.close();
    }
  });

  it('Table looks: the dialog fits a 390×844 phone and the large print fits the hand', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 390, height: 844 }, hasTouch: true });
    const { page } = p;
    try {
      await createFromLobby(page, { player: 'Pim', table: 'Looks phone', options: { tempo: 'relaxed' } });
      await fillBotsAndStart(page);
      await page.waitForFunction(() => document.querySelectorAll('#hand .card').length === 13, null, { timeout: 20000 });
      const btn = await page.locator('#btn-looks').boundingBox();
      assert.ok(btn.x >= 0 && btn.x + btn.width <= 390 && btn.y >= 0, `the button is in view (${JSON.stringify(btn)})`);
      await page.tap('#btn-looks');
      await page.waitForSelector('dialog#looks[open]');
      const dlg = await page.locator('dialog#looks').boundingBox();
      assert.ok(dlg.x >= 0 && dlg.x + dlg.width <= 390 && dlg.y >= 0 && dlg.y + dlg.height <= 844, `the dialog is in view (${JSON.stringify(dlg)})`);
      assert.ok(await page.$eval('dialog#looks .dialog-body', (e) => e.scrollWidth <= e.clientWidth + 1), 'no sideways scroll in the dialog');
      for (const id of ['looks-cards-large', 'looks-felt-red', 'looks-avatar-cat']) {
        const box = await page.locator(`label[for="${id}"]`).boundingBox();
        assert.ok(box.width >= 44 && box.height >= 44, `${id}'s tile is a touch target (${JSON.stringify(box)})`);
        await page.tap(`label[for="${id}"]`);
      }
      assert.deepEqual(await looksOf(page), { cards: 'large', felt: 'red', avatar: 'cat' });
      await shot(page, 'looks-dialog-phone.png');
      await page.tap('dialog#looks .dialog-actions .btn');
      await page.waitForSelector('dialog#looks', { state: 'detached' });
      await assertFourColourDeck(page, 'on the phone');
      await assertFelt(page, 'red', 'on the phone');
      await assertAvatars(page, 'cat', 'Pim', 'on the phone');
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal scroll');
      // Every card of the hand is inside the screen.
      const boxes = await page.$$eval('#hand .card', (els) => els.map((e) => e.getBoundingClientRect().toJSON()));
      for (const b of boxes) assert.ok(b.left >= 0 && b.right <= 390, `a card off screen: ${JSON.stringify(b)}`);
      await assertAxeClean(page, 'the phone table, large print on red');
      await shot(page, 'looks-phone.png');
      p.assertClean();
    } finally {
      await p.close();
    }
  });

  it('Table looks: a picture is one seat\'s alone: never the player\'s choice at another seat, never two seats alike, for a player and a spectator', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 1366, height: 768 } });
    const { page } = p;
    let watcher = null;
    /** The four seats' pictures, by seat. */
    const pictures = (pg) => pg.$$eval('.seat', (els) => Object.fromEntries(els.map((s) => [s.dataset.seat, {
      me: s.classList.contains('me'),
      pic: s.querySelector('.avatar svg.avatar-pic')?.dataset.avatar ?? null,
    }])));
    try {
      const id = await createFromLobby(page, { player: 'Annika', table: 'Own pictures', options: { seat: 'south' } });
      await page.click('#btn-add-bots');
      await page.waitForSelector('#btn-start:not([disabled])');
      watcher = await openPage(browser, stack.url, { viewport: { width: 1366, height: 768 } });
      await watcher.page.goto(`/#/table/${id}`);
      await watcher.page.waitForSelector('.table-screen[data-role="spectator"] .seat .seat-name');
      for (const design of PICTURES) {
        await choose(page, { avatar: design });
        await assertAvatars(page, design, 'Annika', `Annika with the ${design}`);
        const seen = await pictures(page);
        assert.equal(seen.south.pic, design);
        for (const seat of ['north', 'east', 'west']) {
          assert.notEqual(seen[seat].pic, design, `Annika with the ${design}: ${seat} does not show it too (${JSON.stringify(seen)})`);
        }
        // A spectator's choice is at no seat; the four seats differ.
        await choose(watcher.page, { avatar: design });
        const watched = await pictures(watcher.page);
        const pics = Object.values(watched).map((x) => x.pic);
        assert.ok(pics.every((x) => PICTURES.includes(x) && x !== design), `watching with the ${design}: ${pics}`);
        assert.equal(new Set(pics).size, 4, `watching with the ${design}: four pictures: ${pics}`);
      }
      await shot(page, 'looks-own-pictures.png');
      p.assertClean();
      watcher.assertClean();
    } finally {
      await watcher?.close();
      await p.close();
    }
  });
}
