// Entry point: a hash router between the lobby (#/), a table
// (#/table/<id>), a replay (#/replay/<id>) and the tutorial hand
// (#/tutorial), so a reload or a shared link lands on the same screen.
// An invitation is a link to a table that seats its visitor:
// #/table/<id>/join (an empty seat, before the start) or
// #/table/<id>/invite/<seat>/<code> (the seat of a player who left,
// handed over by the owner during the match).

import { mountLobby } from './lobby.js';
import { initLooks } from './looks.js';
import { mountReplay } from './replay.js';
import { mountTable } from './table.js';
import { mountTutorial } from './tutorial.js';

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
  const tutorial = !id && /^#\/tutorial\/?$/.test(location.hash);
  const key = id ? `${m[1]}:${id}` : tutorial ? 'tutorial' : 'lobby';
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
  current = key;
  document.body.dataset.screen = replay ? 'replay' : id ? 'table' : tutorial ? 'tutorial' : 'lobby';
  if (tutorial) {
    setTitle('Learn to play');
    unmount = mountTutorial(main, goTable);
  } else if (replay) {
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

// The stored card design, table and avatar, and the Table looks button.
initLooks();
window.addEventListener('hashchange', route);
route();
