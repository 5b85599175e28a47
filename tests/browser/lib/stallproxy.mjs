// A TCP proxy in front of a test stack that can stall the network (nothing
// crosses either way, as on a train in a tunnel: the sockets stay open and
// what is sent waits) and let it flow again, or drop every connection. The
// page is opened at `url`; everything it does (the page, REST, /ws) goes
// through the proxy.

import net from 'node:net';
import { freePort } from './server.mjs';

export async function startStallProxy(upstreamUrl) {
  const up = new URL(upstreamUrl);
  const pairs = new Set();
  let stalled = false;

  /** Forwards `from` to `to`, holding chunks while stalled. */
  function forward(pair, from, to, held) {
    from.on('data', (chunk) => {
      if (stalled) held.push(chunk);
      else to.write(chunk);
    });
    from.on('end', () => to.end());
  }

  const srv = net.createServer((client) => {
    const server = net.connect(Number(up.port), up.hostname);
    const pair = { client, server, up: [], down: [] };
    pairs.add(pair);
    forward(pair, client, server, pair.up);
    forward(pair, server, client, pair.down);
    const done = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('error', done);
    server.on('error', done);
    client.on('close', done);
    server.on('close', done);
  });
  const port = await freePort();
  await new Promise((r) => srv.listen(port, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${port}`,
    /** From now on nothing crosses, on open connections and new ones. */
    stall() {
      stalled = true;
    },
    /** What waited crosses, in order, and the network flows again. */
    resume() {
      stalled = false;
      for (const p of pairs) {
        for (const c of p.up.splice(0)) p.server.write(c);
        for (const c of p.down.splice(0)) p.client.write(c);
      }
    },
    /** Every connection dies at once (no close frame). */
    drop() {
      for (const p of [...pairs]) {
        p.client.destroy();
        p.server.destroy();
      }
    },
    stop() {
      stalled = false;
      for (const p of [...pairs]) {
        p.client.destroy();
        p.server.destroy();
      }
      return new Promise((r) => srv.close(() => r()));
    },
  };
}
