// Tiny DOM helpers: element creation, keyed reconciliation, announcements.

const SVG_NS = 'http://www.w3.org/2000/svg';

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Creates an HTML element: h('button', {class: 'x', onclick}, 'text', child…). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/** Creates an SVG element. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

/** An inline SVG that shows one symbol of the page's sprite (e.g. 'suit-H'). */
export function icon(id, cls = 'icon') {
  return s('svg', { class: cls, 'aria-hidden': 'true', focusable: 'false' }, s('use', { href: `#${id}` }));
}

/** Replaces every child of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * Makes `container`'s children match `items`, reusing the element of each
 * key so that focus, hover and running transitions survive an update.
 * `create(item)` makes a new element; `update(el, item)` refreshes one.
 */
export function reconcile(container, items, key, create, update) {
  const old = new Map();
  for (const el of container.children) {
    if (el.dataset.key != null) old.set(el.dataset.key, el);
  }
  // The elements that go, first: the ones that stay are then already in
  // place and are not moved (moving a focused element loses its focus).
  const keep = new Set(items.map((item) => String(key(item))));
  for (const [k, el] of old) {
    if (!keep.has(k)) {
      el.remove();
      old.delete(k);
    }
  }
  let prev = null;
  for (const item of items) {
    const k = String(key(item));
    let el = old.get(k);
    if (el) old.delete(k);
    else {
      el = create(item);
      el.dataset.key = k;
    }
    update(el, item);
    const want = prev ? prev.nextSibling : container.firstChild;
    if (want !== el) container.insertBefore(el, want);
    prev = el;
  }
  for (const el of old.values()) el.remove();
}

/** Sets text only when it changed (avoids needless layout and re-announcement). */
export function setText(el, text) {
  const t = text == null ? '' : String(text);
  if (el.textContent !== t) el.textContent = t;
}

/** Toggles a set of classes on an element. */
export function classes(el, map) {
  for (const [c, on] of Object.entries(map)) el.classList.toggle(c, !!on);
}

let announceSeq = 0;
/** Says something to screen readers; `urgent` uses the assertive region. */
export function announce(text, urgent = false) {
  const region = document.getElementById(urgent ? 'alert' : 'announce');
  if (!region) return;
  // Alternate a zero-width space so repeating a message is announced again.
  announceSeq += 1;
  region.textContent = text + (announceSeq % 2 ? '' : '\u200b');
}
