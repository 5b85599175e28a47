// First load of the lobby on a slow phone link, measured in headless
// Chromium with the DevTools network throttling (400 ms latency,
// 400 kbit/s down and up = 50 000 bytes/s), against the real server binary
// and the client embedded in it (compression and caching as in production).
//
//   cargo build -p spades-server
//   node tests/browser/firstload.mjs [runs]        (default 7 runs)
//
// SPADES_SERVER_BIN  the server binary (default target/debug/spades-server)
// FIRSTLOAD_BASE_BIN another build to measure in the same rounds (before/after)
// CHROMIUM_PATH      the browser (default /usr/bin/chromium)
// FIRSTLOAD_JSON=1   print the figures as JSON as well
//
// "Lobby interactive" (lib/firstload.mjs): the time from the start of the
// navigation (performance.now() in the page) to the first moment the
// lobby's "Play now against bots" and "Create table" buttons exist and are
// enabled, the table list has been rendered from the server's answer
// (aria-busy "false", one row per table: the script creates three tables
// first) and the page's stylesheet is applied. A cold load is a fresh
// browser context (empty cache); a reload is page.reload() in that context
// once the first load has settled.
// The script reports the median (and min/max) of each, and the requests and
// bytes on the wire before the lobby was interactive.

import { watchLobby } from './lib/firstload.mjs';
import { launchBrowser } from './lib/harness.mjs';
import { startServer } from './lib/server.mjs';

const RUNS = Number(process.argv[2] || process.env.FIRSTLOAD_RUNS || 7);
const LINK = { offline: false, latency: 400, downloadThroughput: 50_000, uploadThroughput: 50_000 };
const TABLES = 3;

async function once(page) {
  const got = await page.waitForFunction(() => window.__lobbyInteractive, null, { timeout: 60_000, polling: 50 });
  return got.jsonValue();
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** A server of `bin` with the tables the lobby lists. */
async function serverOf(bin) {
  const saved = process.env.SPADES_SERVER_BIN;
  if (bin) process.env.SPADES_SERVER_BIN = bin;
  try {
    const server = await startServer();
    for (let i = 0; i < TABLES; i += 1) {
      const r = await fetch(`${server.url}/api/v1/tables`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Table ${i + 1}`, options: {} }),
      });
      if (!r.ok) throw new Error(`creating a table: HTTP ${r.status}`);
    }
    // The server prepares its files (their gzip forms) at the first
    // request: not the link's time.
    await (await fetch(`${server.url}/`, { headers: { 'accept-encoding': 'gzip' } })).arrayBuffer();
    return server;
  } finally {
    if (saved === undefined) delete process.env.SPADES_SERVER_BIN;
    else process.env.SPADES_SERVER_BIN = saved;
  }
}

/** One cold load in a fresh context, then a reload in it. */
async function measure(browser, server) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, baseURL: server.url });
  try {
    await context.addInitScript(watchLobby, TABLES);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', LINK);
    await page.goto('/', { waitUntil: 'commit' });
    const cold = await once(page);
    // Let the page settle (late requests) before the reload.
    await page.waitForLoadState('networkidle');
    await page.reload({ waitUntil: 'commit' });
    const warm = await once(page);
    return { cold, warm };
  } finally {
    await context.close();
  }
}

async function main() {
  // FIRSTLOAD_BASE_BIN: another build measured in the same rounds, each
  // round taking the two in turn (the first alternating), so that both
  // meet the same load of a shared machine.
  const builds = [{ name: 'this build', bin: null }];
  if (process.env.FIRSTLOAD_BASE_BIN) builds.unshift({ name: 'base build', bin: process.env.FIRSTLOAD_BASE_BIN });
  const browser = await launchBrowser();
  for (const b of builds) {
    b.server = await serverOf(b.bin);
    b.cold = [];
    b.warm = [];
  }
  try {
    for (let run = 0; run < RUNS; run += 1) {
      const order = run % 2 ? [...builds].reverse() : builds;
      for (const b of order) {
        const { cold: c, warm: w } = await measure(browser, b.server);
        b.cold.push(c);
        b.warm.push(w);
        console.log(`run ${run + 1}, ${b.name}: cold ${c.at.toFixed(0)} ms (${c.requests} requests, ${c.bytes} bytes), `
          + `reload ${w.at.toFixed(0)} ms (${w.requests} requests, ${w.network} over the network, ${w.bytes} bytes)`);
      }
    }
    const report = (name, xs) => {
      const ms = xs.map((x) => x.at);
      console.log(`  ${name}: median ${median(ms).toFixed(0)} ms (min ${Math.min(...ms).toFixed(0)}, max ${Math.max(...ms).toFixed(0)}), `
        + `${median(xs.map((x) => x.requests))} requests (${median(xs.map((x) => x.network))} over the network), `
        + `${median(xs.map((x) => x.bytes))} bytes before interactive`);
    };
    console.log(`\nlink: ${LINK.latency} ms latency, ${LINK.downloadThroughput} bytes/s down, ${LINK.uploadThroughput} up; ${RUNS} runs`);
    for (const b of builds) {
      console.log(`${b.name}${b.bin ? ` (${b.bin})` : ''}:`);
      report('cold load', b.cold);
      report('reload', b.warm);
      console.log(`  files before a cold lobby was interactive: ${b.cold.at(-1).files.join(' ')}`);
    }
    if (process.env.FIRSTLOAD_JSON) console.log(JSON.stringify(builds.map(({ name, cold, warm }) => ({ name, cold, warm }))));
  } finally {
    await browser.close();
    for (const b of builds) await b.server?.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
