// Entry point: a hash router between the lobby (#/) and a table
// (#/table/<id>), so a reload or a shared link lands on the same screen.

import { mountLobby } from './lobby.js';
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
  const m = location.hash.match(/^#\/table\/([^/?#]+)/);
  const id = m && UUID.test(m[1]) ? m[1].toLowerCase() : null;
  const key = id ? `table:${id}` : 'lobby';
  const intent = nextIntent;
  nextIntent = null;
  if (key === current && !intent) return;
  unmount?.();
  current = key;
  document.body.dataset.screen = id ? 'table' : 'lobby';
  if (id) {
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
