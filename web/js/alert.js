// Turn alerts for a player whose page is hidden (another tab, a minimised
// window): the tab's title changes, a short tone plays (made in the page
// with WebAudio, no sound file) unless muted, and, when the player opted in
// and the browser allows it, a desktop notification shows. The choices are
// remembered in the browser.

import { store } from './store.js';

const TITLE_PREFIX = '▶ Your turn · ';

let audio = null;

/** The page's audio context, made (or resumed) during a user gesture. */
function audioContext() {
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return null;
  if (!audio) {
    try {
      audio = new Ctx();
    } catch {
      return null;
    }
  }
  if (audio.state === 'suspended') audio.resume().catch(() => {});
  return audio;
}

// Browsers only let a page make sound after the player has touched it:
// unlock the audio context on the first gesture.
for (const type of ['pointerdown', 'keydown']) {
  window.addEventListener(type, () => audioContext(), { once: true, capture: true });
}

/** Two short rising beeps, about a third of a second in all. */
export function playTone() {
  const ctx = audioContext();
  if (!ctx) return false;
  const t0 = ctx.currentTime + 0.01;
  [[660, 0], [880, 0.16]].forEach(([freq, at]) => {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = 'sine';
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, t0 + at);
    gain.gain.exponentialRampToValueAtTime(0.25, t0 + at + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, t0 + at + 0.14);
    osc.connect(gain).connect(ctx.destination);
    osc.start(t0 + at);
    osc.stop(t0 + at + 0.15);
  });
  return true;
}

/** True when the browser can show desktop notifications at all. */
export const notificationsSupported = () => typeof window.Notification === 'function';

/**
 * Turns desktop notifications on (asking the browser's permission) or off.
 * Resolves with whether they are on now.
 */
export async function setNotify(on) {
  if (!on || !notificationsSupported()) {
    store.setNotify(false);
    return false;
  }
  let permission = Notification.permission;
  if (permission === 'default') {
    try {
      permission = await Notification.requestPermission();
    } catch {
      permission = 'denied';
    }
  }
  store.setNotify(permission === 'granted');
  return permission === 'granted';
}

/**
 * The alert of one table screen. `turnStarted(text)` is called when the
 * player's turn begins, `turnEnded()` when it is over; `dispose()` when the
 * screen goes away.
 */
export function turnAlert({ tableId }) {
  let pending = null;
  let note = null;

  const clear = () => {
    if (pending) {
      if (document.title.startsWith(TITLE_PREFIX)) document.title = document.title.slice(TITLE_PREFIX.length);
      pending = null;
    }
    note?.close?.();
    note = null;
  };
  const onVisible = () => {
    if (!document.hidden) clear();
  };
  document.addEventListener('visibilitychange', onVisible);

  return {
    turnStarted(text) {
      if (!document.hidden || pending) return;
      pending = text;
      this.refresh();
      if (!store.muted()) playTone();
      if (store.notify() && notificationsSupported() && Notification.permission === 'granted') {
        try {
          note = new Notification('Spades: your turn', { body: text, tag: `spades-turn-${tableId}` });
          note.onclick = () => {
            window.focus();
            note?.close?.();
          };
        } catch {
          note = null;
        }
      }
    },
    turnEnded: clear,
    /** Puts the mark back in the title after the screen set its own. */
    refresh() {
      if (pending && !document.title.startsWith(TITLE_PREFIX)) document.title = TITLE_PREFIX + document.title;
    },
    dispose() {
      clear();
      document.removeEventListener('visibilitychange', onVisible);
    },
  };
}
