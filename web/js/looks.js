// Table looks: the card design, the table's background and the player's
// avatar, chosen in a dialog and remembered in this browser.
//
// The choices are data attributes on <html> (data-cards, data-felt,
// data-avatar) and looks.css does the rest; a preview in the dialog carries
// its own attribute, and the nearest one wins. Avatars are drawn here as SVG:
// the player's own choice at their seat, and at every other seat a picture
// chosen from the player's name, so that the table looks of a piece; no two
// seats at a table show the same picture. They are decorative (the seat's
// label names the player) and stay in this browser.

import { cardView } from './cards.js';
import { showDialog } from './dialogs.js';
import { h, replace, s } from './dom.js';
import { store } from './store.js';

export const CARD_DESIGNS = [
  { value: 'classic', label: 'Classic', hint: 'Red and black, a pip in the middle.' },
  { value: 'large', label: 'Large print, four colours', hint: 'Big rank and suit. Spades black, hearts red, diamonds blue, clubs green.' },
  { value: 'simple', label: 'Simple', hint: 'Flat, one corner and a big suit.' },
];

export const FELTS = [
  { value: 'green', label: 'Green felt' },
  { value: 'blue', label: 'Blue felt' },
  { value: 'red', label: 'Red felt' },
  { value: 'wood', label: 'Dark wood' },
];

const S = (tag, attrs) => s(tag, attrs);

/** Five-pointed star points round (cx, cy). */
function starPoints(cx, cy, r, inner) {
  const pts = [];
  for (let i = 0; i < 10; i++) {
    const a = -Math.PI / 2 + (i * Math.PI) / 5;
    const rr = i % 2 ? inner : r;
    pts.push(`${(cx + rr * Math.cos(a)).toFixed(1)},${(cy + rr * Math.sin(a)).toFixed(1)}`);
  }
  return pts.join(' ');
}

/** The pictures: each draws on a 48×48 square over its background colour. */
const PICTURES = {
  fox: {
    label: 'Fox',
    bgs: ['#1e4f8a', '#2f6b3a', '#5e3a8c'],
    draw: () => [
      S('polygon', { points: '9,6 21,17 11,23', fill: '#e8731a' }),
      S('polygon', { points: '39,6 27,17 37,23', fill: '#e8731a' }),
      S('polygon', { points: '11.5,10.5 18,17 12.5,20', fill: '#3b1e08' }),
      S('polygon', { points: '36.5,10.5 30,17 35.5,20', fill: '#3b1e08' }),
      S('path', { d: 'M7 19Q24 9 41 19L24 42Z', fill: '#f28c28' }),
      S('path', { d: 'M7 19L24 42 17 27Z', fill: '#fff' }),
      S('path', { d: 'M41 19L24 42 31 27Z', fill: '#fff' }),
      S('circle', { cx: 18, cy: 23, r: 2.2, fill: '#1a1a1a' }),
      S('circle', { cx: 30, cy: 23, r: 2.2, fill: '#1a1a1a' }),
      S('circle', { cx: 24, cy: 40, r: 2.6, fill: '#1a1a1a' }),
    ],
  },
  owl: {
    label: 'Owl',
    bgs: ['#2f6b3a', '#123d7a', '#7a1f3d'],
    draw: () => [
      S('polygon', { points: '10,9 18,16 11,20', fill: '#8d5a2b' }),
      S('polygon', { points: '38,9 30,16 37,20', fill: '#8d5a2b' }),
      S('ellipse', { cx: 24, cy: 29, rx: 15, ry: 17, fill: '#8d5a2b' }),
      S('ellipse', { cx: 24, cy: 36, rx: 9, ry: 9, fill: '#e3c39d' }),
      S('circle', { cx: 18, cy: 23, r: 6, fill: '#fff' }),
      S('circle', { cx: 30, cy: 23, r: 6, fill: '#fff' }),
      S('circle', { cx: 18, cy: 23, r: 3, fill: '#1a1a1a' }),
      S('circle', { cx: 30, cy: 23, r: 3, fill: '#1a1a1a' }),
      S('polygon', { points: '21.5,28 26.5,28 24,32.5', fill: '#f2a900' }),
    ],
  },
  cat: {
    label: 'Cat',
    bgs: ['#5e3a8c', '#1e4f8a', '#8a4b0f'],
    draw: () => [
      S('polygon', { points: '10,7 21,16 10,23', fill: '#b0b0b0' }),
      S('polygon', { points: '38,7 27,16 38,23', fill: '#b0b0b0' }),
      S('polygon', { points: '12,11 18,16 12,19', fill: '#f48fb1' }),
      S('polygon', { points: '36,11 30,16 36,19', fill: '#f48fb1' }),
      S('circle', { cx: 24, cy: 27, r: 14, fill: '#b0b0b0' }),
      S('ellipse', { cx: 19, cy: 25, rx: 2.2, ry: 3.2, fill: '#1a1a1a' }),
      S('ellipse', { cx: 29, cy: 25, rx: 2.2, ry: 3.2, fill: '#1a1a1a' }),
      S('polygon', { points: '21.8,30 26.2,30 24,32.6', fill: '#d81b60' }),
      S('path', { d: 'M7 29l11 2M7 34l11-1.5M41 29l-11 2M41 34l-11-1.5', stroke: '#fff', 'stroke-width': 1.2, 'stroke-linecap': 'round' }),
    ],
  },
  crown: {
    label: 'Crown',
    bgs: ['#7a1f3d', '#123d7a', '#2f6b3a'],
    draw: () => [
      S('polygon', { points: '9,33 7,15 16,24 24,10 32,24 41,15 39,33', fill: '#ffc83d' }),
      S('rect', { x: 9, y: 33, width: 30, height: 5, rx: 1, fill: '#e0a100' }),
      S('circle', { cx: 24, cy: 28, r: 2.6, fill: '#4fc3f7' }),
      S('circle', { cx: 16, cy: 29.5, r: 1.8, fill: '#ef5350' }),
      S('circle', { cx: 32, cy: 29.5, r: 1.8, fill: '#ef5350' }),
    ],
  },
  star: {
    label: 'Star',
    bgs: ['#123d7a', '#5e3a8c', '#0f5e5e'],
    draw: () => [
      S('polygon', { points: starPoints(24, 25.5, 17, 7.2), fill: '#ffd54f', stroke: '#e0a100', 'stroke-width': 1.2, 'stroke-linejoin': 'round' }),
    ],
  },
  spade: {
    label: 'Spade',
    bgs: ['#f4c542', '#7ec8e3', '#f08a8a'],
    draw: () => [
      S('use', { href: '#suit-S', x: 10, y: 9, width: 28, height: 28, fill: '#111' }),
    ],
  },
};

export const AVATARS = [
  { value: 'initials', label: 'Initials' },
  ...Object.entries(PICTURES).map(([value, p]) => ({ value, label: p.label })),
];

const pick = (list, value, fallback) => (list.some((o) => o.value === value) ? value : fallback);

function readLooks() {
  return {
    cards: pick(CARD_DESIGNS, store.cardDesign(), 'classic'),
    felt: pick(FELTS, store.felt(), 'green'),
    avatar: pick(AVATARS, store.avatar(), 'initials'),
  };
}

let inForce = null;

/** The choices in force (anything unknown in the store falls back to the default). */
export function currentLooks() {
  inForce ||= readLooks();
  return inForce;
}

/** A 32-bit FNV-1a hash (the generated avatars). */
function hash(text) {
  let x = 0x811c9dc5;
  for (const ch of String(text)) {
    x ^= ch.codePointAt(0);
    x = Math.imul(x, 0x01000193) >>> 0;
  }
  return x;
}

/** The SVG of picture `design` over `bg` (or the picture's own colour). */
export function avatarSvg(design, bg) {
  const p = PICTURES[design];
  return s('svg', {
    class: 'avatar-pic', viewBox: '0 0 48 48', 'aria-hidden': 'true', focusable: 'false', dataset: { avatar: design },
  }, S('rect', { width: 48, height: 48, fill: bg || p.bgs[0] }), p.draw());
}

/**
 * The picture a seat gets when it is not the player's. A player's picture is
 * theirs alone at a table: never the design the player chose, and never one
 * another seat has. Each seat takes the picture its name (else its seat)
 * picks; where the player's design or a seat before it (North, East, South,
 * West) has that one, the next free picture in the list. `who.table` names
 * the table's four seats (`{seat, name, mine, empty}`); without it the seat
 * is taken alone.
 */
function generated(who, mine) {
  const names = Object.keys(PICTURES);
  const taken = new Set(mine && PICTURES[mine] ? [mine] : []);
  const others = (who.table || [who]).filter((x) => !x.mine && !x.empty);
  if (!others.some((x) => x.seat === who.seat)) others.push(who);
  for (const x of others) {
    const h = hash(x.name || x.seat);
    let i = h % names.length;
    while (taken.has(names[i])) i = (i + 1) % names.length;
    taken.add(names[i]);
    if (x.seat === who.seat) {
      const bgs = PICTURES[names[i]].bgs;
      return { design: names[i], bg: bgs[Math.floor(h / names.length) % bgs.length] };
    }
  }
  return null;
}

/**
 * Fills a seat's avatar element. `who` is `{seat, name, initials, mine, empty,
 * table}`: the player's own seat shows their choice; the others show initials
 * while the player keeps initials, else a picture generated from the name,
 * one no other seat at the table shows.
 */
export function paintAvatar(el, who) {
  el._who = who;
  const { avatar } = currentLooks();
  let look = null;
  if (!who.empty && avatar !== 'initials') look = who.mine ? { design: avatar, bg: null } : generated(who, avatar);
  const key = look ? `${look.design}:${look.bg}` : `text:${who.empty ? '' : who.initials}`;
  if (el.dataset.look === key) return;
  el.dataset.look = key;
  el.classList.toggle('pictured', !!look);
  if (look) replace(el, avatarSvg(look.design, look.bg));
  else replace(el, who.empty ? '' : who.initials);
}

function repaintAvatars() {
  for (const el of document.querySelectorAll('.avatar')) if (el._who) paintAvatar(el, el._who);
}

/** Puts the choices in force on the page (at start-up and on every change). */
export function applyLooks() {
  inForce = readLooks();
  const looks = inForce;
  const root = document.documentElement;
  root.dataset.cards = looks.cards;
  root.dataset.felt = looks.felt;
  root.dataset.avatar = looks.avatar;
  repaintAvatars();
}

const SAVE = {
  cards: (v) => store.setCardDesign(v),
  felt: (v) => store.setFelt(v),
  avatar: (v) => store.setAvatar(v),
};

function initialsOf(name) {
  const parts = String(name || '').trim().split(/\s+/).filter(Boolean);
  if (!parts.length) return 'YOU';
  return (parts.length > 1 ? parts[0][0] + parts[1][0] : parts[0].slice(0, 2)).toUpperCase();
}

/** One radio group of the dialog: a fieldset of tiles, each a preview and a name. */
function group(kind, legend, options, chosen, preview, { autofocus = false } = {}) {
  const tiles = options.map((o) => {
    const id = `looks-${kind}-${o.value}`;
    const hintId = o.hint ? `${id}-hint` : null;
    const input = h('input', {
      type: 'radio', name: `looks-${kind}`, id, value: o.value, checked: o.value === chosen,
      autofocus: autofocus && o.value === chosen, 'aria-describedby': hintId,
    });
    input.addEventListener('change', () => {
      if (!input.checked) return;
      SAVE[kind](o.value);
      applyLooks();
    });
    return h('div', { class: 'looks-option' },
      h('label', { for: id },
        h('span', { class: 'looks-preview', 'aria-hidden': 'true' }, preview(o.value)),
        h('span', { class: 'looks-name' }, input, h('span', {}, o.label))),
      hintId ? h('small', { class: 'hint', id: hintId }, o.hint) : null);
  });
  return h('fieldset', { class: `looks-group looks-group-${kind}` },
    h('legend', {}, legend),
    h('div', { class: 'looks-options' }, tiles));
}

/** Opens the Table looks dialog; focus goes back where it was on closing. */
export async function openLooks() {
  const back = document.activeElement;
  const looks = currentLooks();
  const body = [
    h('p', { class: 'muted small looks-note' }, 'Changes show at once and are remembered in this browser. Only you see them.'),
    group('cards', 'Cards', CARD_DESIGNS, looks.cards,
      (v) => h('span', { class: 'looks-cards-preview', dataset: { cards: v } },
        ['AS', 'QH', 'TD', '7C'].map((c) => cardView(c))),
      { autofocus: true }),
    group('felt', 'Table', FELTS, looks.felt,
      (v) => h('span', { class: 'looks-swatch', dataset: { felt: v } })),
    group('avatar', 'Your avatar', AVATARS, looks.avatar,
      (v) => h('span', { class: `looks-avatar ${v === 'initials' ? 'looks-initials' : ''}` },
        v === 'initials' ? initialsOf(store.name()) : avatarSvg(v))),
  ];
  await showDialog({
    id: 'looks',
    className: 'dialog-looks',
    title: 'Table looks',
    body,
    actions: [{ label: 'Done', value: null, kind: 'primary' }],
  });
  if (back instanceof HTMLElement && back.isConnected && back !== document.body) back.focus();
}

/** Start-up: the stored choices, and the Table looks button in the top bar. */
export function initLooks() {
  applyLooks();
  // Chosen in another tab: this one follows.
  window.addEventListener('storage', (e) => {
    if (e.key == null || e.key.startsWith('spades.v1.looks.')) applyLooks();
  });
  const bar = document.querySelector('.topbar');
  if (!bar || document.getElementById('btn-looks')) return;
  const btn = h('button', { type: 'button', class: 'btn btn-plain btn-small looks-btn', id: 'btn-looks', onclick: () => openLooks() },
    s('svg', { class: 'icon looks-icon', viewBox: '0 0 24 24', 'aria-hidden': 'true', focusable: 'false' },
      s('rect', { x: 3, y: 5, width: 11, height: 15, rx: 2, transform: 'rotate(-12 8.5 12.5)' }),
      s('rect', { x: 10, y: 4, width: 11, height: 15, rx: 2, transform: 'rotate(10 15.5 11.5)' })),
    'Table looks');
  bar.querySelector('.brand')?.after(btn);
}
