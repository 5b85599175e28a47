// The tutorial hand (#/tutorial): from the lobby's "Learn to play", the
// whole scripted hand with the keyboard only at 1366×768 (a wrong-suit card
// and a spade lead before spades are broken are refused with the lesson and
// change nothing; the nil and bags lessons and the end's scoring show), then
// on a 390×844 phone, where the step panel and every card of the hand stay
// in view without overlapping; axe-core at the steps that matter.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { assertAccessible } from '../lib/axe.mjs';
import { openPage, shot } from '../lib/harness.mjs';

/** The step on screen: its number, kind, lesson, what it asks for, and the hand. */
const stepInfo = (page) => page.evaluate(() => {
  const p = document.getElementById('tut-panel');
  const refusal = document.getElementById('tut-refusal');
  const trick = [...document.querySelectorAll('.tut-felt .trick-box .card')].map((e) => e.dataset.card);
  return {
    step: Number(p.dataset.step),
    kind: p.dataset.kind,
    lesson: p.dataset.lesson,
    want: p.dataset.want ?? null,
    title: document.getElementById('tut-title').textContent,
    text: document.getElementById('tut-text').textContent,
    refusal: refusal.hidden ? null : refusal.textContent,
    hand: [...document.querySelectorAll('#hand .card')].map((e) => e.dataset.card),
    trick,
  };
});

const focused = (page) => page.evaluate(() => {
  const a = document.activeElement;
  return { id: a?.id || null, card: a?.closest?.('#hand') ? a.dataset.card : null, bid: a?.dataset?.bid ?? null, body: !a || a === document.body };
});

/** Presses Tab until `selector` has the focus; returns the number of presses. */
async function tabTo(page, selector, max = 40) {
  for (let n = 1; n <= max; n++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((sel) => document.activeElement?.matches(sel), selector)) return n;
  }
  throw new Error(`${selector} not reached in ${max} Tabs`);
}

/** Moves the focus along the hand with the arrow keys to `card`. */
async function arrowToCard(page, card) {
  const { hand } = await stepInfo(page);
  const from = hand.indexOf((await focused(page)).card);
  const to = hand.indexOf(card);
  assert.ok(from >= 0 && to >= 0, `focus in the hand (${from}) and ${card} held (${to})`);
  if (to === 0 && from > 1) await page.keyboard.press('Home');
  else if (to === hand.length - 1 && from < to - 1) await page.keyboard.press('End');
  else for (let i = 0; i < Math.abs(to - from); i++) await page.keyboard.press(to > from ? 'ArrowRight' : 'ArrowLeft');
  assert.equal((await focused(page)).card, card, `the arrow keys reached ${card}`);
}

/** The cards of the hand in the Tab order (tabindex 0): one, with a roving tab index. */
const handStops = (page) => page.$$eval('#hand .card', (els) => els.filter((e) => e.tabIndex === 0).map((e) => e.dataset.card));

/** The refusals of the rules, in the words the table uses too (play.test.mjs). */
const FOLLOW_CLUBS = 'You must follow suit: clubs were led and you hold clubs. Only a player with no clubs may play another suit.';
const SPADES_NOT_BROKEN = 'Spades are not broken yet: no spade may be led until one has been played on another suit (unless you hold only spades).';

const waitStep = (page, n) => page.waitForFunction((n) => document.getElementById('tut-panel')?.dataset.step === String(n), n, { timeout: 5000 });

/** A card refused with the lesson: the step, the hand and the trick unchanged. */
async function assertRefused(page, before, card, words) {
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => !document.getElementById('tut-refusal').hidden);
  const after = await stepInfo(page);
  assert.ok(after.refusal.includes(words), `${card} refused with "${words}": ${after.refusal}`);
  assert.equal(after.step, before.step, `${card}: still the same step`);
  assert.deepEqual(after.hand, before.hand, `${card}: the hand is unchanged`);
  assert.deepEqual(after.trick, before.trick, `${card}: the trick is unchanged`);
  assert.equal((await focused(page)).card, card, `${card}: the focus stays on the card`);
}

/**
 * Layout problems on screen: the step panel and every card of the hand
 * inside the viewport, none overlapping another (`cardsApart`: the cards of
 * the hand may not overlap each other either), the panel's words not cut.
 */
const layoutProblems = (page, { cardsApart, wholeText }) => page.evaluate(({ cardsApart, wholeText }) => {
  const vw = window.innerWidth;
  const vh = window.innerHeight;
  const out = [];
  const r = (e) => e.getBoundingClientRect();
  const inView = (b, what) => {
    if (b.left < -0.5 || b.top < -0.5 || b.right > vw + 0.5 || b.bottom > vh + 0.5) out.push(`${what} is out of view: ${JSON.stringify(b)}`);
  };
  const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const panelEl = document.getElementById('tut-panel');
  const panel = r(panelEl);
  inView(panel, 'the step panel');
  const felt = r(document.querySelector('.tut-felt'));
  if (overlap(felt, panel)) out.push('the table overlaps the step panel');
  const picker = document.getElementById('bid-picker');
  if (!picker.hidden) {
    inView(r(picker), 'the bid picker');
    if (overlap(r(picker), panel)) out.push('the bid picker overlaps the step panel');
  }
  const cards = [...document.querySelectorAll('#hand .card')].map((e) => ({ card: e.dataset.card, b: r(e) }));
  for (const c of cards) {
    inView(c.b, c.card);
    if (overlap(c.b, panel)) out.push(`${c.card} overlaps the step panel`);
    if (!picker.hidden && overlap(c.b, r(picker))) out.push(`${c.card} overlaps the bid picker`);
  }
  if (cardsApart) {
    for (let i = 0; i < cards.length; i++) {
      for (let j = i + 1; j < cards.length; j++) if (overlap(cards[i].b, cards[j].b)) out.push(`${cards[i].card} overlaps ${cards[j].card}`);
    }
  }
  // The step's words whole, or (the end's summary) at least begun, in view.
  const text = r(document.getElementById('tut-text'));
  if (wholeText) {
    inView(text, 'the step text');
    if (panelEl.scrollHeight > panelEl.clientHeight + 1) out.push(`the step panel scrolls (${panelEl.scrollHeight} > ${panelEl.clientHeight})`);
  } else if (text.top < panel.top - 0.5 || text.top > panel.bottom - 40) {
    out.push(`the step text does not start in the panel: ${JSON.stringify(text)}`);
  }
  if (document.documentElement.scrollWidth > vw) out.push('the page scrolls sideways');
  if (window.scrollY !== 0) out.push('the page is scrolled');
  return out;
}, { cardsApart, wholeText });

export function tutorialTests(suite) {
  it('tutorial: the whole hand from the lobby with the keyboard only at 1366×768, wrong cards refused with the lesson', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 1366, height: 768 } });
    const { page } = p;
    try {
      await page.goto('/');
      await page.waitForSelector('#learn-to-play');
      await tabTo(page, '#learn-to-play');
      await page.keyboard.press('Enter');
      await page.waitForSelector('#tut-panel');
      assert.match(page.url(), /#\/tutorial$/);
      assert.equal(await page.getAttribute('#tut-live', 'aria-live'), 'polite', 'the step is a polite live region');
      await page.waitForFunction(() => document.activeElement?.id === 'tut-next');
      assert.equal((await stepInfo(page)).step, 0);
      await assertAccessible(assert, page, 'the tutorial, first step');
      await shot(page, 'tutorial-start.png');

      // Next and Back with the keyboard; the focus follows the step's control.
      await page.keyboard.press('Enter');
      await waitStep(page, 1);
      assert.equal((await focused(page)).id, 'tut-next');
      await page.keyboard.press('Shift+Tab');
      assert.equal((await focused(page)).id, 'tut-back');
      await page.keyboard.press('Enter');
      await waitStep(page, 0);
      assert.equal((await focused(page)).id, 'tut-next', 'Back: the focus is on Next again');

      const lessons = new Set();
      const refused = { bid: false, follow: false, spades: false };
      let plays = 0;
      for (let guard = 0; guard < 60; guard++) {
        const s = await stepInfo(page);
        lessons.add(s.lesson);
        if (s.kind === 'end') break;
        // The panel never covers the hand, and stays in view.
        assert.deepEqual(await layoutProblems(page, { cardsApart: false, wholeText: true }), [], `step ${s.step} (${s.title})`);
        const f = await focused(page);
        if (s.kind === 'read') {
          assert.equal(f.id, 'tut-next', `step ${s.step}: the focus is on Next`);
          await page.keyboard.press('Enter');
        } else if (s.kind === 'bid') {
          assert.notEqual(f.bid, null, `step ${s.step}: the focus is in the bid picker`);
          assert.equal(await page.getAttribute('#bid-picker .bid-grid', 'role'), 'radiogroup');
          assert.equal(await page.locator('#bid-picker [role="radio"][tabindex="0"]').count(), 1, 'the bids are one Tab stop');
          await assertAccessible(assert, page, 'the tutorial while bidding');
          // A bid the lesson does not ask for is refused with the reason.
          if (Number(f.bid) !== Number(s.want)) {
            await page.keyboard.press('Enter');
            await page.waitForFunction(() => !document.getElementById('tut-refusal').hidden);
            const after = await stepInfo(page);
            assert.match(after.refusal, /Bid 4 in this lesson/);
            assert.equal(after.step, s.step, 'the wrong bid changed nothing');
            refused.bid = true;
          }
          const want = Number(s.want);
          for (let i = 0; i < 14 && Number((await focused(page)).bid) !== want; i++) {
            await page.keyboard.press(Number((await focused(page)).bid) < want ? 'ArrowRight' : 'ArrowLeft');
          }
          assert.equal(Number((await focused(page)).bid), want, 'the arrow keys chose the bid');
          assert.equal(await page.textContent('.bid-confirm'), `Bid ${want}`);
          await shot(page, 'tutorial-bid.png');
          await page.keyboard.press('Enter');
        } else if (s.kind === 'play') {
          assert.equal(f.card, s.want, `step ${s.step}: the focus is on the card to play`);
          const led = s.trick.length && s.trick.length < 4 ? s.trick[0][1] : null;
          if (s.lesson === 'follow' && !refused.follow) {
            // A card of another suit while holding the suit led: refused.
            const wrong = s.hand.find((c) => c[1] !== led);
            assert.ok(led && s.hand.some((c) => c[1] === led) && wrong, 'a suit is led, held, and there is another suit to try');
            // The table's hand: one Tab stop (the focused card), which the
            // arrow keys move; Shift+Tab leaves the hand, Tab comes back.
            assert.equal(await page.getAttribute('#hand', 'role'), 'toolbar');
            assert.equal(await page.getAttribute('#hand', 'aria-describedby'), 'hand-keys');
            assert.deepEqual(await handStops(page), [s.want], 'the hand is one Tab stop, on the card to play');
            await page.keyboard.press('Shift+Tab');
            assert.equal((await focused(page)).card, null, 'Shift+Tab leaves the hand');
            await page.keyboard.press('Tab');
            assert.equal((await focused(page)).card, s.want, 'Tab comes back to the card that had the focus');
            await arrowToCard(page, wrong);
            assert.deepEqual(await handStops(page), [wrong], 'the Tab stop follows the arrow keys');
            await assertRefused(page, s, wrong, 'You must follow suit');
            assert.equal((await stepInfo(page)).refusal, FOLLOW_CLUBS);
            refused.follow = true;
            await assertAccessible(assert, page, 'the tutorial after a refusal');
            await shot(page, 'tutorial-follow.png');
          }
          if (s.lesson === 'spades' && !refused.spades) {
            // Leading a spade before spades are broken: refused.
            assert.equal(led, null, 'the player leads');
            const spade = s.hand.find((c) => c[1] === 'S');
            await arrowToCard(page, spade);
            await assertRefused(page, s, spade, 'Spades are not broken yet');
            assert.equal((await stepInfo(page)).refusal, SPADES_NOT_BROKEN);
            refused.spades = true;
          }
          if (s.lesson === 'trump') {
            // Void in the suit led: any card may be played; the lesson asks for the trump.
            const other = s.hand.find((c) => c[1] !== 'S');
            await arrowToCard(page, other);
            await assertRefused(page, s, other, 'this lesson trumps');
          }
          await arrowToCard(page, s.want);
          await page.keyboard.press('Enter');
          plays += 1;
          await page.waitForFunction((card) => !document.querySelector(`#hand .card[data-card="${card}"]`), s.want);
        }
        await waitStep(page, s.step + 1);
        assert.equal((await focused(page)).body, false, 'the focus never falls to the page');
      }
      assert.equal(plays, 13, 'thirteen cards played');
      assert.deepEqual(refused, { bid: true, follow: true, spades: true }, 'each refusal was tried');
      for (const l of ['bidding', 'nil', 'contract', 'follow', 'spades', 'trump', 'broken', 'bags', 'summary']) {
        assert.ok(lessons.has(l), `the ${l} lesson appeared (${[...lessons]})`);
      }

      // The end: the scoring as a table shows it, nil and bags explained.
      const end = await stepInfo(page);
      assert.equal(end.kind, 'end');
      assert.equal(end.hand.length, 0);
      const scoring = await page.textContent('#tut-text .scoring');
      assert.match(scoring, /\+72/);
      assert.match(scoring, /−69/);
      assert.match(scoring, /nil failed/);
      assert.match(await page.textContent('#tut-text [data-lesson="nil"]'), /−100/);
      const bags = await page.textContent('#tut-text [data-lesson="bags"]');
      assert.match(bags, /2 overtricks/);
      assert.match(bags, /Every 10 bags cost 100 points/);
      assert.equal((await focused(page)).id, 'tut-play-now', 'the focus is on Play now');
      assert.equal(await page.textContent('#tut-play-now'), 'Play now against bots');
      await assertAccessible(assert, page, 'the tutorial summary');
      await shot(page, 'tutorial-end.png');
      // Back to the lobby with the keyboard.
      await tabTo(page, '#tut-lobby', 3);
      await page.keyboard.press('Enter');
      await page.waitForSelector('#play-now');
      assert.equal(await page.evaluate(() => document.body.dataset.screen), 'lobby');
      p.assertClean();
    } finally {
      await p.close();
    }
  });

  it('tutorial: on a 390×844 phone the step panel and the hand are both in view and never overlap; Play now from the end', async () => {
    const { browser, stack } = suite;
    const p = await openPage(browser, stack.url, { viewport: { width: 390, height: 844 }, hasTouch: true });
    const { page } = p;
    try {
      await page.emulateMedia({ reducedMotion: 'reduce' });
      await page.goto('/');
      await page.waitForSelector('#learn-to-play');
      const link = await page.locator('#learn-to-play').boundingBox();
      assert.ok(link.x >= 0 && link.x + link.width <= 390 && link.y + link.height <= 844, `Learn to play is in view (${JSON.stringify(link)})`);
      await page.tap('#learn-to-play');
      await page.waitForSelector('#tut-panel');
      const leave = await page.locator('#tut-leave').boundingBox();
      assert.ok(leave.x >= 0 && leave.x + leave.width <= 390 && leave.y >= 0, `the way back is in view (${JSON.stringify(leave)})`);
      let tried = false;
      for (let guard = 0; guard < 60; guard++) {
        const s = await stepInfo(page);
        if (s.kind === 'end') break;
        const problems = await layoutProblems(page, { cardsApart: true, wholeText: true });
        assert.deepEqual(problems, [], `step ${s.step} (${s.title}) at 390×844`);
        if (s.step === 0) await shot(page, 'tutorial-phone-start.png');
        if (s.kind === 'read') {
          await page.tap('#tut-next');
        } else if (s.kind === 'bid') {
          await shot(page, 'tutorial-phone-bid.png');
          await assertAccessible(assert, page, 'the phone tutorial while bidding');
          await page.tap(`.bid-btn[data-bid="${s.want}"]`);
          await page.tap('.bid-confirm');
        } else {
          if (!tried && s.lesson === 'follow') {
            // A refusal makes the panel taller: still nothing overlaps.
            const wrong = s.hand.find((c) => c[1] !== s.trick[0][1]);
            await page.tap(`#hand .card[data-card="${wrong}"]`);
            await page.waitForFunction(() => !document.getElementById('tut-refusal').hidden);
            assert.deepEqual((await stepInfo(page)).hand, s.hand, 'the hand is unchanged');
            assert.deepEqual(await layoutProblems(page, { cardsApart: true, wholeText: true }), [], 'with the refusal shown');
            await shot(page, 'tutorial-phone-refusal.png');
            tried = true;
          }
          await page.tap(`#hand .card[data-card="${s.want}"]`);
        }
        await waitStep(page, s.step + 1);
      }
      assert.ok(tried, 'a refusal was shown on the phone');
      assert.deepEqual(await layoutProblems(page, { cardsApart: true, wholeText: false }), [], 'the end at 390×844');
      // The name and Play now are in sight at the end, without a scroll:
      // inside the viewport and not hidden by anything (a scrolled panel's edge).
      await page.waitForSelector('#tut-play-now');
      const hidden = await page.evaluate(() => ['#tut-name', '#tut-play-now'].flatMap((sel) => {
        const el = document.querySelector(sel);
        const b = el.getBoundingClientRect();
        const inView = b.top >= 0 && b.left >= 0 && b.bottom <= window.innerHeight && b.right <= window.innerWidth && b.height > 0;
        const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
        return inView && (hit === el || el.contains(hit)) ? [] : [`${sel} is not in sight: ${JSON.stringify(b)}`];
      }));
      assert.deepEqual(hidden, [], 'the name field and Play now are in sight at 390×844');
      assert.equal(await page.evaluate(() => window.scrollY), 0, 'the page is not scrolled');
      await assertAccessible(assert, page, 'the phone tutorial summary');
      await shot(page, 'tutorial-phone-end.png');

      // Play now against bots, straight from the end.
      await page.fill('#tut-name', 'Tess');
      await page.tap('#tut-play-now');
      await page.waitForSelector('.table-screen .seat.me', { timeout: 15000 });
      await page.waitForFunction(() => document.querySelectorAll('#hand .card').length === 13, null, { timeout: 20000 });
      p.assertClean();
    } finally {
      await p.close();
    }
  });
}
