// The server's clock as seen from the page, and the turn clock ring.
//
// Every view carries `server_time`; the client never compares a deadline
// with its own wall clock (which may be off by minutes). It remembers when
// (on its monotonic clock) the last view arrived and counts from there.

import { s } from './dom.js';

let base = { server: Date.now(), perf: performance.now() };

/** Records the server time of a view that has just arrived. */
export function syncServerTime(serverTime) {
  if (typeof serverTime === 'number') base = { server: serverTime, perf: performance.now() };
}

/** The server's current time, estimated (Unix milliseconds). */
export function serverNow() {
  return base.server + (performance.now() - base.perf);
}

/** Milliseconds left until a deadline given in server time (never negative). */
export function remaining(deadline) {
  return Math.max(0, deadline - serverNow());
}

const R = 28;
const CIRC = 2 * Math.PI * R;

/** An SVG ring (track + progress) to wrap an avatar. */
export function clockRing() {
  return s('svg', { class: 'ring', viewBox: '0 0 64 64', 'aria-hidden': 'true', focusable: 'false' },
    s('circle', { class: 'ring-track', cx: 32, cy: 32, r: R }),
    s('circle', {
      class: 'ring-progress', cx: 32, cy: 32, r: R,
      'stroke-dasharray': CIRC.toFixed(2), 'stroke-dashoffset': '0',
      transform: 'rotate(-90 32 32)',
    }),
  );
}

/** Sets a ring to a fraction of time left (1 = full, 0 = out of time). */
export function setRing(svg, fraction) {
  const f = Math.max(0, Math.min(1, fraction));
  const p = svg.querySelector('.ring-progress');
  if (!p) return;
  p.setAttribute('stroke-dashoffset', (CIRC * (1 - f)).toFixed(2));
  svg.classList.toggle('low', f <= 0.33 && f > 0.15);
  svg.classList.toggle('critical', f <= 0.15);
}

/** "0:42" */
export function mmss(ms) {
  const total = Math.ceil(ms / 1000);
  const m = Math.floor(total / 60);
  const sec = total % 60;
  return `${m}:${String(sec).padStart(2, '0')}`;
}
