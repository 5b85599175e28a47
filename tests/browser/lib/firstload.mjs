// The lobby's first load: when it is interactive (for the measurement,
// firstload.mjs, and the test, tests/firstload.test.mjs) and the client's
// static module graph.

import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Runs in the page before its own scripts (`context.addInitScript`): sets
 * `window.__lobbyInteractive` to `{at, requests, bytes, files}` the first
 * time the lobby is interactive: "Play now against bots" and "Create table"
 * exist and are enabled, the table list has been rendered from the server's
 * answer (`aria-busy` "false", at least `tables` rows) and the stylesheet is
 * applied. `at` is performance.now() (from the start of the navigation);
 * `requests`, `bytes` and `files` are what had arrived by then (the page
 * itself included, bytes as on the wire, headers included); `network`
 * counts the requests not answered from the browser's cache.
 */
export function watchLobby(tables = 0) {
  const ready = () => {
    const play = document.getElementById('play-now');
    const create = document.getElementById('create-table');
    const list = document.getElementById('table-list');
    if (!play || play.disabled || !create || create.disabled || !list) return false;
    if (list.getAttribute('aria-busy') !== 'false') return false;
    if (list.querySelectorAll(':scope > .table-item').length < tables) return false;
    // The stylesheet is applied (the lobby's grid is laid out).
    return getComputedStyle(document.querySelector('.lobby-grid')).display === 'grid';
  };
  const check = () => {
    if (window.__lobbyInteractive || !ready()) return;
    const at = performance.now();
    const entries = performance.getEntriesByType('resource').filter((e) => e.responseEnd <= at);
    const nav = performance.getEntriesByType('navigation')[0];
    window.__lobbyInteractive = {
      at,
      requests: entries.length + 1,
      network: entries.filter((e) => e.transferSize > 0).length + 1,
      bytes: entries.reduce((n, e) => n + e.transferSize, nav ? nav.transferSize : 0),
      files: entries.map((e) => new URL(e.name).pathname + new URL(e.name).search),
    };
    observer.disconnect();
  };
  const observer = new MutationObserver(check);
  observer.observe(document, { subtree: true, childList: true, attributes: true });
  // Styles arrive without a mutation: check each frame as well.
  const frame = () => {
    check();
    if (!window.__lobbyInteractive) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

/**
 * The modules `entry` (a file of `<webDir>/js`) imports statically, itself
 * included, as file names: the code the browser must have before `entry`
 * runs. Dynamic `import()` is not followed.
 */
export function staticGraph(webDir, entry) {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = readFileSync(path.join(webDir, 'js', file), 'utf8');
    for (const m of src.matchAll(/^import\s(?:[^'"]*?\sfrom\s*)?['"]\.\/([\w.-]+)['"]/gm)) visit(m[1]);
  };
  visit(entry);
  return seen;
}
