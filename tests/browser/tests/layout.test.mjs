// Layout at 1366×768 and on a 390×844 phone: the toolbar in sight while
// bidding, seat text on one line, refusals that name the player and clear
// when the turn moves on, and a lost connection that cannot be missed. On the
// phone: the invitation clear of West and East before the start, every
// control a finger's size (44 px, and axe's target-size rule), and a bid in
// focus that does not look chosen.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { bid, createFromLobby, fillBotsAndStart, openPage, shot, waitTurnOrScoring } from '../lib/harness.mjs';

/** Every toolbar button shown lies wholly inside the viewport. */
async function assertToolbarInView(page, what) {
  const vp = page.viewportSize();
  const boxes = await page.$$eval('.toolbar .btn', (els) => els.filter((e) => !e.hidden && e.offsetParent).map((e) => {
    const r = e.getBoundingClientRect();
    return { id: e.id, x: r.x, y: r.y, right: r.right, bottom: r.bottom };
  }));
  const ids = boxes.map((b) => b.id);
  for (const id of ['btn-last-trick', 'btn-sheet', 'btn-rules', 'btn-leave']) assert.ok(ids.includes(id), `${what}: ${id} shown`);
  for (const b of boxes) {
    assert.ok(b.x >= 0 && b.y >= 0 && b.right <= vp.width && b.bottom <= vp.height, `${what}: ${b.id} in view ${JSON.stringify(b)} of ${JSON.stringify(vp)}`);
  }
  // Nothing is scrolled to get there.
  assert.equal(await page.evaluate(() => window.scrollY), 0);
}

/** Each seat's name and bid line take one line each. */
async function assertSeatTextOneLine(page, what) {
  const lines = await page.$$eval('.seat', (seats) => seats.map((s) => {
    const one = (el) => {
      if (!el || !el.textContent.trim()) return true;
      const lh = parseFloat(getComputedStyle(el).lineHeight) || parseFloat(getComputedStyle(el).fontSize) * 1.4;
      return el.getBoundingClientRect().height < lh * 1.6;
    };
    return { seat: s.dataset.seat, name: one(s.querySelector('.seat-name')), bid: one(s.querySelector('.seat-bid')) };
  }));
  for (const l of lines) assert.ok(l.name && l.bid, `${what}: ${l.seat}'s text wraps: ${JSON.stringify(l)}`);
}

const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** Before the start: the invitation and the owner's buttons cover neither West's nor East's name or avatar. */
async function assertSidesClear(page, what) {
  const boxes = await page.evaluate(() => {
    const box = (e) => {
      const r = e.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    };
    const centre = [...document.querySelectorAll('#invite, .owner-controls')].map((e) => ({ what: e.id || e.className, box: box(e) }));
    const sides = [];
    for (const seat of ['west', 'east']) {
      for (const part of ['.seat-name', '.avatar-wrap']) {
        sides.push({ what: `${seat} ${part}`, box: box(document.querySelector(`.seat[data-seat="${seat}"] ${part}`)) });
      }
    }
    return { centre, sides };
  });
  assert.ok(boxes.centre.some((c) => c.what === 'invite'), `${what}: the invitation is shown`);
  for (const c of boxes.centre) {
    for (const s of boxes.sides) {
      assert.ok(!overlap(c.box, s.box), `${what}: ${c.what} ${JSON.stringify(c.box)} covers ${s.what} ${JSON.stringify(s.box)}`);
    }
  }
}

/** Every control shown that `selectors` name is at least 44 px high and wide (a finger's size). */
async function assertTouchTargets(page, selectors, what) {
  const boxes = await page.$$eval(selectors.join(', '), (els) => els.filter((e) => e.offsetParent && !e.closest('[hidden]')).map((e) => {
    const r = e.getBoundingClientRect();
    return { id: e.id || e.dataset.bid || e.textContent.trim().slice(0, 20), width: r.width, height: r.height };
  }));
  assert.ok(boxes.length >= selectors.length, `${what}: the controls are shown (${boxes.map((b) => b.id)})`);
  const small = boxes.filter((b) => b.width < 44 || b.height < 44);
  assert.deepEqual(small, [], `${what}: controls smaller than 44 px`);
}

/** The looks of a bid button that tell choice and focus. */
const bidLooks = (page, n) => page.$eval(`.bid-btn[data-bid="${n}"]`, (e) => {
  const cs = getComputedStyle(e);
  const after = getComputedStyle(e, '::after');
  return {
    checked: e.getAttribute('aria-checked'),
    focused: e === document.activeElement,
    focusVisible: e.matches(':focus-visible'),
    background: cs.backgroundColor,
    outlineStyle: cs.outlineStyle,
    outlineColor: cs.outlineColor,
    mark: after.content,
  };
});

/** The distance between two `rgb(…)` colours. */
function colourDistance(a, b) {
  const [p, q] = [a, b].map((c) => c.match(/[\d.]+/g).slice(0, 3).map(Number));
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

export function layoutTests(suite) {
  it('keeps the toolbar in view while bidding at 1366×768, names the player in a refusal and keeps it until the player acts again', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 1366, height: 768 } });
    const { page } = p;
    try {
      await createFromLobby(page, { player: 'Lou', table: 'Wide' });
      await fillBotsAndStart(page);
      await page.waitForSelector('#bid-picker:not([hidden])', { timeout: 20000 });
      await assertToolbarInView(page, '1366×768 while bidding');
      const picker = await page.locator('#bid-picker').boundingBox();
      assert.ok(picker.y + picker.height <= 768, `the bid picker is in view (${JSON.stringify(picker)})`);
      await assertSeatTextOneLine(page, '1366×768');
      await shot(page, 'bidding-1366.png');
      await bid(page, 3);

      // A card tapped while a bot is on turn: refused, naming the player.
      assert.equal(await waitTurnOrScoring(page), 'turn');
      const legal = await page.$$eval('#hand .card.legal', (els) => els.map((e) => e.dataset.card));
      await page.click(`#hand .card[data-card="${legal[0]}"]`);
      await page.waitForSelector(`#hand .card[data-card="${legal[0]}"]`, { state: 'detached' });
      // Record every refusal shown (the bots play fast: it may not stay long).
      await page.evaluate(() => {
        window.refusals = [];
        const el = document.getElementById('refusal');
        new MutationObserver(() => {
          if (!el.hidden) window.refusals.push({ text: el.textContent, at: performance.now() });
        }).observe(el, { attributes: true, childList: true, characterData: true, subtree: true });
      });
      // Tap a card while a bot is on turn: the moment a frame passes the
      // turn from Lou to a bot, the page taps a card (in the same task that
      // drew the frame, so the tap is not late however busy the machine is:
      // the bot moves only after its delay). Lou plays each own turn.
      await page.evaluate(() => {
        const hand = document.getElementById('hand');
        let wasMine = hand.classList.contains('my-turn');
        new MutationObserver(() => {
          const mine = hand.classList.contains('my-turn');
          const done = window.refusals.some((r) => r.text.startsWith('Not your turn'));
          if (wasMine && !mine && !done) hand.querySelector('.card')?.click();
          wasMine = mine;
        }).observe(hand, { attributes: true, attributeFilter: ['class'] });
      });
      const refused = () => page.evaluate(() => window.refusals.some((r) => r.text.startsWith('Not your turn')));
      for (let i = 0; i < 12 && !(await refused()); i++) {
        const mine = await page.waitForSelector('#hand.my-turn .card.legal', { timeout: 20000 });
        const card = await mine.evaluate((e) => e.dataset.card);
        await mine.click();
        await page.waitForSelector(`#hand .card[data-card="${card}"]`, { state: 'detached' });
        await page.waitForFunction(() => window.refusals.some((r) => r.text.startsWith('Not your turn')) || document.querySelector('#hand.my-turn'), null, { timeout: 5000 });
      }
      await page.waitForFunction(() => window.refusals.some((r) => r.text.startsWith('Not your turn')), null, { timeout: 5000 })
        .catch((e) => { throw new Error(`${e.message}; refusals: ${JSON.stringify(p.rec.received.filter((m) => m.type === 'error'))}`); });
      const [shown] = await page.evaluate(() => window.refusals.filter((r) => r.text.startsWith('Not your turn')));
      assert.match(shown.text, /^Not your turn: it is .+ \((North|East|South|West)\)'s turn\.$/, shown.text);
      assert.match(shown.text, /bot \(/, `the player's name, not only the seat: ${shown.text}`);
      assert.ok(p.rec.received.some((m) => m.type === 'error' && m.code === 'not_your_turn'));
      // The turn moves on (a bot plays): the refusal stays, so that it can
      // be read; it goes when the player acts again.
      await page.waitForTimeout(2500);
      assert.equal(await page.isVisible('#refusal'), true, 'the refusal stays until the player acts');
      assert.match(await page.textContent('#refusal'), /^Not your turn/);
      const el = await page.waitForSelector('#hand.my-turn .card.legal, #bid-picker:not([hidden])', { timeout: 20000 });
      if (await el.evaluate((e) => e.id === 'bid-picker')) {
        await page.click('.bid-btn[data-bid="2"]');
        await page.click('.bid-confirm');
      } else {
        await el.click();
      }
      await page.waitForSelector('#refusal', { state: 'hidden', timeout: 5000 });
      p.assertClean();
    } finally {
      await p.close();
    }
  });

  it('fits a 390×844 phone while bidding, and makes a lost connection obvious with the controls disabled', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 390, height: 844 }, hasTouch: true });
    const { page } = p;
    let block = false;
    const routes = [];
    await page.routeWebSocket(/\/ws$/, (ws) => {
      if (block) {
        ws.close({ code: 4000, reason: 'test: offline' });
        return;
      }
      routes.push({ ws, server: ws.connectToServer() });
    });
    try {
      await createFromLobby(page, { player: 'Pia', table: 'Phone' });
      await fillBotsAndStart(page);
      await page.waitForSelector('#bid-picker:not([hidden])', { timeout: 20000 });
      await assertToolbarInView(page, '390×844 while bidding');
      await assertSeatTextOneLine(page, '390×844');
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal scroll');
      await shot(page, 'bidding-phone.png');

      // The connection drops and stays down.
      block = true;
      await routes[0].ws.close({ code: 4000, reason: 'test drop' });
      await routes[0].server.close();
      const banner = await page.waitForSelector('#offline-banner:not([hidden])', { timeout: 5000 });
      assert.match(await banner.textContent(), /Connection lost/);
      const box = await banner.boundingBox();
      assert.ok(box.y >= 0 && box.y + box.height <= 844 && box.width > 200, `the banner is in view and wide (${JSON.stringify(box)})`);
      assert.equal(await page.locator('#hand .card:not([disabled])').count(), 0, 'every card disabled');
      assert.equal(await page.locator('#bid-picker .bid-btn:not([disabled])').count(), 0, 'every bid disabled');
      assert.equal(await page.isDisabled('.bid-confirm'), true);
      await shot(page, 'offline-phone.png');

      // Back: the banner goes and the controls work again.
      block = false;
      await page.waitForSelector('#offline-banner', { state: 'hidden', timeout: 15000 });
      assert.ok(await page.locator('#bid-picker .bid-btn:not([disabled])').count() > 0, 'bids enabled again');
      await bid(page, 2);
      p.assertClean();
    } finally {
      await p.close();
    }
  });

  it('on a 390×844 phone: the invitation clears West and East, every control is a finger\'s size, a bid in focus does not look chosen', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 390, height: 844 }, hasTouch: true });
    const { page } = p;
    const toolbar = ['.toolbar .btn', '#btn-looks'];
    let friend = null;
    try {
      await createFromLobby(page, { player: 'Tam', table: 'Touch', options: { seat: 'south' } });
      await page.waitForSelector('#invite');
      await assertSidesClear(page, 'the owner, empty seats');
      await assertTouchTargets(page, [...toolbar, '.owner-controls .btn', '#invite .copy-btn'], 'the owner before the start');
      await assertAccessible(assert, page, 'the phone table before the start');
      await page.click('#btn-add-bots');
      await page.waitForSelector('#btn-start:not([disabled])');
      await assertSidesClear(page, 'the owner, with bots');
      await shot(page, 'lobby-phone.png');

      // A friend with the link takes a bot's seat: the invitation is theirs
      // to pass on too, without the owner's buttons above it.
      friend = await openPage(browser, stack.url, { viewport: { width: 390, height: 844 }, hasTouch: true });
      await friend.page.goto((await page.inputValue('#invite-link')).replace(new URL(stack.url).origin, ''));
      await friend.page.waitForSelector('dialog#name-dialog[open]');
      await friend.page.fill('#sit-name', 'Bette');
      await friend.page.click('dialog#name-dialog [data-action="ok"]');
      await friend.page.waitForSelector('.table-screen .seat.me');
      await friend.page.waitForSelector('#invite');
      await assertSidesClear(friend.page, 'a friend seated');
      await assertTouchTargets(friend.page, [...toolbar, '#invite .copy-btn'], 'a friend before the start');
      await assertAccessible(assert, friend.page, 'the phone table before the start, a friend seated');
      await shot(friend.page, 'lobby-phone-friend.png');
      // The friend gets up: watching, with Sit here at the free seats.
      await friend.page.click('#btn-leave');
      await friend.page.locator('dialog#leave-confirm [data-action="true"]').click();
      await friend.page.waitForSelector('.sit-btn:not([hidden])');
      await assertTouchTargets(friend.page, [...toolbar, '.sit-btn'], 'watching before the start');
      await assertAccessible(assert, friend.page, 'the phone table before the start, watching');
      await friend.close();
      friend = null;

      await page.click('#btn-add-bots');
      await page.waitForSelector('#btn-start:not([disabled])');
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal scroll');
      await page.click('#btn-start');

      await page.waitForSelector('#bid-picker:not([hidden])', { timeout: 20000 });
      await assertToolbarInView(page, '390×844 with 44 px buttons');
      await assertTouchTargets(page, [...toolbar, '.bid-btn', '.bid-confirm'], 'while bidding');
      await assertAccessible(assert, page, 'the phone table while bidding');

      // A bid in focus is not a chosen bid. Space chooses the bid in focus;
      // then the focus moves to another bid without choosing it.
      const bids = await page.$$eval('.bid-btn', (els) => els.map((e) => Number(e.dataset.bid)));
      const [chosen, other] = [bids[2], bids[4]];
      await page.focus(`.bid-btn[data-bid="${chosen}"]`);
      await page.keyboard.press('Space');
      await page.waitForSelector(`.bid-btn[data-bid="${chosen}"][aria-checked="true"]`);
      await page.focus(`.bid-btn[data-bid="${other}"]`);
      const focused = await bidLooks(page, other);
      const picked = await bidLooks(page, chosen);
      assert.deepEqual([focused.checked, focused.focused, focused.focusVisible], ['false', true, true], `the focused bid: ${JSON.stringify(focused)}`);
      assert.deepEqual([picked.checked, picked.focused], ['true', false], `the chosen bid: ${JSON.stringify(picked)}`);
      assert.notEqual(focused.background, picked.background, 'the chosen bid is filled, the focused one is not');
      assert.notEqual(focused.outlineStyle, 'none', 'the focused bid has a ring');
      assert.ok(colourDistance(focused.outlineColor, picked.background) > 100,
        `the focus ring (${focused.outlineColor}) is not the colour of a chosen bid (${picked.background})`);
      assert.match(picked.mark, /\u2713/, `the chosen bid is ticked (${picked.mark}): not told by colour alone`);
      assert.ok(!/\u2713/.test(focused.mark), `the focused bid is not ticked (${focused.mark})`);
      await shot(page, 'bid-focus-phone.png');
      // Under the pointer (a phone keeps the hover after a tap) the chosen bid stays filled.
      await page.hover(`.bid-btn[data-bid="${chosen}"]`);
      assert.equal((await bidLooks(page, chosen)).background, picked.background, 'the chosen bid under the pointer');

      await page.keyboard.press('Enter');
      await page.waitForSelector('#bid-picker', { state: 'hidden' });
      assert.equal(await waitTurnOrScoring(page), 'turn');
      await assertTouchTargets(page, [...toolbar, '#hand .card'], 'while playing');
      await assertAccessible(assert, page, 'the phone table while playing');
      p.assertClean();
    } finally {
      await friend?.close();
      await p.close();
    }
  });
}
