// Entry point: a hash router between the lobby (#/) and a table
// (#/table/<id>), so a reload or a shared link lands on the same screen.

import { mountLobby } from './lobby.js';
import { mountReplay } from './replay.js';
import { mountTable } from './table.js';

const main = document.getElementById('main');
const title = document.getElementById('topbar-title');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let unmount = null;
let current = null;
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
  const key = id ? `${m[1]}:${id}` : 'lobby';
  const intent = nextIntent;
  nextIntent = null;
  if (key === current && !intent) return;
  unmount?.();
  current = key;
  document.body.dataset.screen = replay ? 'replay' : id ? 'table' : 'lobby';
  if (replay) {
    setTitle('');
    unmount = mountReplay(main, id, { setTitle });
  } else if (id) {
    setTitle('');
    unmount = mountTable(main, id, intent, { setTitle });
  } else {
    if (location.hash && location.hash !== '#/' && location.hash !== '#') history.replaceState(null, '', '#/');
    setTitle('');
    title.textContent = 'Lobby';
    unmount = mountLobby(main, goTable);
  }
  main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', route);
route();
