// Starts the real Spades server on a free port with test settings.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const REPO_ROOT = path.resolve(new URL('../../..', import.meta.url).pathname);

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The server binary: $SPADES_SERVER_BIN, else target/debug/spades-server. */
export function serverBinary() {
  const bin = path.resolve(REPO_ROOT, process.env.SPADES_SERVER_BIN || 'target/debug/spades-server');
  if (!existsSync(bin)) {
    throw new Error(`no server binary at ${bin}: run \`cargo build -p spades-server\` first, or set SPADES_SERVER_BIN`);
  }
  return bin;
}

async function waitHealthy(url, child, ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (child.exitCode != null) throw new Error(`the server exited with ${child.exitCode}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the server did not answer ${url}/healthz within ${ms} ms`);
}

/**
 * The runner's environment for the server's binary: the server refuses
 * every SPADES_* variable that is not a setting (SPADES_<SECTION>__<KEY>),
 * so the runner's own variables stay out.
 */
export function settingsEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SPADES_') || k.includes('__')));
}

/**
 * Spawns the server on `port` with the test defaults under `env` and waits
 * until it answers /healthz. Returns `{child, lines}`.
 */
async function spawnServer(port, env) {
  const bin = serverBinary();
  const lines = [];
  const child = spawn(bin, [], {
    cwd: REPO_ROOT,
    env: {
      ...settingsEnv(),
      SPADES_SERVER__BIND: `127.0.0.1:${port}`,
      SPADES_TABLES__BOT: 'rule',
      SPADES_TABLES__BOT_DELAY_MS: '120',
      SPADES_STORAGE__IN_MEMORY: 'true',
      SPADES_LOG__FILTER: 'warn,spades_server=info',
      // Every page of the suite signs in as a guest account from 127.0.0.1:
      // more than the per-address limit of a real server allows in an hour.
      SPADES_LIMITS__ACCOUNTS_PER_HOUR_PER_IP: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk) => {
    for (const l of String(chunk).split('\n')) if (l) lines.push(l);
    if (lines.length > 2000) lines.splice(0, lines.length - 2000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  try {
    await waitHealthy(`http://127.0.0.1:${port}`, child, 15000);
  } catch (e) {
    child.kill('SIGKILL');
    throw new Error(`${e.message}\n${lines.slice(-20).join('\n')}`);
  }
  return { child, lines };
}

/** Sends `signal` to a child and waits for it to exit (SIGKILL after `ms`). */
async function stopChild(child, signal = 'SIGTERM', ms = 5000) {
  if (child.exitCode != null || child.signalCode != null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const t = setTimeout(() => child.kill('SIGKILL'), ms);
  await exited;
  clearTimeout(t);
}

/**
 * Starts a server. `env` adds SPADES_* settings on top of the test defaults
 * (rule bots, a short bot delay, in-memory storage); `port`, when given, is
 * the one it listens on (else a free one).
 * Returns `{url, port, stop(), log()}`.
 */
export async function startServer(env = {}, port = null) {
  port ??= await freePort();
  const { child, lines } = await spawnServer(port, env);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    log: () => lines.join('\n'),
    stop: () => stopChild(child),
  };
}

/**
 * Starts a server that keeps its event log in SQLite in a fresh temporary
 * data directory, and can be stopped (`kill('SIGKILL')`, `kill('SIGTERM')`)
 * and started again (`start()`) on the same port and data directory, as an
 * operator restarts it. `stop()` ends it and removes the directory.
 * Returns `{url, port, dataDir, pid(), kill(signal), start(), stop(), log()}`.
 */
export async function startDurableServer(env = {}) {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'spades-browser-'));
  const settings = { SPADES_STORAGE__IN_MEMORY: 'false', SPADES_STORAGE__DATA_DIR: dataDir, ...env };
  const lines = [];
  let child = null;
  const start = async () => {
    if (child && child.exitCode == null && child.signalCode == null) throw new Error('the server is already running');
    const spawned = await spawnServer(port, settings);
    child = spawned.child;
    lines.push(`--- started (pid ${child.pid}) ---`);
    // Keep one log across restarts.
    const own = spawned.lines;
    const flush = () => {
      lines.push(...own.splice(0));
      if (lines.length > 4000) lines.splice(0, lines.length - 4000);
    };
    child.stdout.on('data', flush);
    child.stderr.on('data', flush);
    child.once('exit', flush);
    flush();
  };
  await start();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    pid: () => child?.pid,
    log: () => lines.join('\n'),
    start,
    async kill(signal) {
      if (child) await stopChild(child, signal);
      lines.push(`--- stopped with ${signal} ---`);
    },
    async stop() {
      if (child) await stopChild(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
