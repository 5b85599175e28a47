// Entry point: a hash router between the lobby (#/), a table
// (#/table/<id>), a replay (#/replay/<id>), the tutorial hand
// (#/tutorial) and the player's account (#/me), so a reload or a shared
// link lands on the same screen.
// An invitation is a link to a table that seats its visitor:
// #/table/<id>/join (an empty seat, before the start) or
// #/table/<id>/invite/<seat>/<code> (the seat of a player who left,
// handed over by the owner during the match).

import { mountLobby } from './lobby.js';
import { session } from './session.js';

// The lobby's modules come with the page (index.html names each of them in
// a modulepreload link, so they are fetched at once rather than one import
// at a time). Each other screen's code is fetched the first time the
// screen opens: its modules all at once (a modulepreload each), with the
// stylesheets only it uses. The Table looks button and the stored looks
// (looks.js) come just after the first screen: the lobby shows no card,
// felt or avatar, and the other screens wait for them. The verifier
// (verify.js) waits for a seed to commit or a match to check (fair.js).
// tests/browser/tests/firstload.test.mjs checks that these lists cover
// what each screen imports.
const LOOKS = ['looks.js', 'cards.js', 'dialogs.js'];
const SCREENS = {
  table: {
    load: () => import('./table.js'),
    modules: ['table.js', 'hand.js', 'alert.js', 'chat.js', 'clock.js', 'conn.js', 'lean.js', 'fair.js', 'howto.js', 'scoring.js'],
  },
  replay: { load: () => import('./replay.js'), modules: ['replay.js', 'scoring.js'] },
  tutorial: { load: () => import('./tutorial.js'), modules: ['tutorial.js', 'hand.js', 'scoring.js'], styles: ['../tutorial.css'] },
  me: { load: () => import('./me.js'), modules: ['me.js', 'passkey.js', 'dialogs.js'], styles: ['../account.css'] },
};
const loading = new Map();
/** The screens whose code is in. */
const ready = new Set();

/** Adds `<link rel=modulepreload>` for a module (once). */
function preloadModule(file) {
  const href = new URL(file, import.meta.url).href;
  if ([...document.querySelectorAll('link[rel="modulepreload"]')].some((l) => l.href === href)) return;
  document.head.append(Object.assign(document.createElement('link'), { rel: 'modulepreload', href }));
}

/** Adds a stylesheet; settles when it is in (or failed: the screen is then plain, not missing). */
function addStylesheet(file) {
  const link = Object.assign(document.createElement('link'), { rel: 'stylesheet', href: new URL(file, import.meta.url).href });
  const done = new Promise((resolve) => {
    link.addEventListener('load', resolve);
    link.addEventListener('error', resolve);
  });
  document.head.append(link);
  return done;
}

let looksDone = null;
/** The stored card design, table and avatar in force, and the Table looks button. */
function looks() {
  if (!looksDone) {
    for (const m of LOOKS) preloadModule(m);
    looksDone = import('./looks.js').then((m) => m.initLooks());
  }
  return looksDone;
}

/** The screen's module, once its code and styles are in (and the looks in force). */
function loadScreen(name) {
  if (!loading.has(name)) {
    const screen = SCREENS[name];
    for (const m of screen.modules) preloadModule(m);
    const styles = (screen.styles || []).map(addStylesheet);
    const p = Promise.all([screen.load(), looks(), ...styles]).then(([mod]) => {
      ready.add(name);
      return mod;
    });
    loading.set(name, p);
  }
  return loading.get(name);
}

/** A paragraph for `main` while a screen loads, or when it could not. */
function note(text, className, role) {
  const p = Object.assign(document.createElement('p'), { className: `panel ${className}`, textContent: text });
  p.setAttribute('role', role);
  return p;
}

const main = document.getElementById('main');
const title = document.getElementById('topbar-title');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let unmount = null;
let current = null;
/** Counts the routes taken: a screen still loading mounts only if no other was opened since. */
let routed = 0;
/** How the next table screen should attach (set by the lobby before navigating). */
let nextIntent = null;

function setTitle(text) {
  title.textContent = text || '';
  document.title = text ? `${text} · Spades` : 'Spades';
}

function goTable(id, intent) {
  nextIntent = intent;
  const hash = `#/table/${id}`;
  if (location.hash === hash) route();
  else location.hash = hash;
}

function route() {
  const m = location.hash.match(/^#\/(table|replay)\/([^/?#]+)/);
  const id = m && UUID.test(m[2]) ? m[2].toLowerCase() : null;
  const replay = !!(id && m[1] === 'replay');
  const tutorial = !id && /^#\/tutorial\/?$/.test(location.hash);
  const account = !id && /^#\/me\/?$/.test(location.hash);
  const key = id ? `${m[1]}:${id}` : tutorial ? 'tutorial' : account ? 'me' : 'lobby';
  let intent = nextIntent;
  nextIntent = null;
  if (id && !replay) {
    const rest = location.hash.slice(`#/table/${m[2]}`.length);
    const invite = rest.match(/^\/invite\/(north|east|south|west)\/([0-9a-f]{64})$/);
    if (invite) intent = { link: { seat: invite[1], invite: invite[2] } };
    else if (rest === '/join') intent = { link: {} };
    // The address keeps only the table: a reload resumes the seat.
    if (rest) history.replaceState(null, '', `#/table/${id}`);
  }
  if (key === current && !intent) return;
  unmount?.();
  unmount = null;
  current = key;
  const turn = ++routed;
  document.body.dataset.screen = replay ? 'replay' : id ? 'table' : tutorial ? 'tutorial' : account ? 'me' : 'lobby';
  // A screen whose code is still on its way: "Loading…" until it is in,
  // then mounted unless another screen was opened meanwhile.
  const open = (name, mount) => {
    if (!ready.has(name)) main.replaceChildren(note('Loading…', 'muted', 'status'));
    loadScreen(name).then((mod) => {
      if (turn !== routed) return;
      unmount = mount(mod);
      main.focus({ preventScroll: true });
    }, (err) => {
      if (turn !== routed) return;
      // A module that failed stays failed in this page: a reload tries again.
      const again = Object.assign(document.createElement('button'), { type: 'button', className: 'btn btn-primary', id: 'screen-retry', textContent: 'Try again' });
      again.addEventListener('click', () => location.reload());
      main.replaceChildren(note(`Could not load this screen (${err.message}).`, 'field-error', 'alert'), again);
    });
  };
  if (account) {
    setTitle('Your account');
    open('me', (m) => m.mountMe(main, { setTitle }));
  } else if (tutorial) {
    setTitle('Learn to play');
    open('tutorial', (m) => m.mountTutorial(main, goTable));
  } else if (replay) {
    setTitle('');
    open('replay', (m) => m.mountReplay(main, id, { setTitle }));
  } else if (id) {
    setTitle('');
    open('table', (m) => m.mountTable(main, id, intent, { setTitle }));
  } else {
    if (location.hash && location.hash !== '#/' && location.hash !== '#') history.replaceState(null, '', '#/');
    setTitle('');
    title.textContent = 'Lobby';
    unmount = mountLobby(main, goTable);
    main.focus({ preventScroll: true });
  }
}

window.addEventListener('hashchange', route);
route();

// The top bar names the signed-in player, a link to their account page.
const meLink = document.getElementById('topbar-me');
const showMe = (acc) => {
  meLink.hidden = !acc;
  meLink.textContent = acc ? acc.name : '';
  meLink.setAttribute('aria-label', acc ? `Your account: ${acc.name}` : 'Your account');
};
session.subscribe(showMe);
session.ready().then(showMe);
looks().catch(() => {});
