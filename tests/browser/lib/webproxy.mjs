// Development aid: serves web/ from disk in front of a running server, so
// client changes can be tested without rebuilding the server binary
// (SPADES_TEST_WEB_DIR=web node tests/browser/run.mjs). Everything else
// (REST, /ws, /healthz) goes to the server unchanged.

import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { freePort } from './server.mjs';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

export async function startWebProxy(webDir, upstreamPort) {
  const root = path.resolve(webDir);
  const srv = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://proxy');
    if (u.pathname.startsWith('/api/') || u.pathname === '/healthz') {
      const up = http.request({ host: '127.0.0.1', port: upstreamPort, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
      up.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      req.pipe(up);
      return;
    }
    let rel = u.pathname === '/' ? 'index.html' : decodeURIComponent(u.pathname.slice(1));
    // A page without its `.html` (`/admin`), as the server answers it.
    if (!path.extname(rel) && !rel.includes('/')) rel += '.html';
    const file = path.resolve(root, rel);
    if (!file.startsWith(root + path.sep)) {
      res.writeHead(404);
      res.end('not found');
      return;
    }
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404);
        res.end('not found');
        return;
      }
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream', 'cache-control': 'no-cache' });
      res.end(data);
    });
  });
  // The WebSocket tunnels: each end goes with the other, and stop() ends
  // those still open (the server's close waits for them otherwise).
  const tunnels = new Set();
  srv.on('upgrade', (req, socket, head) => {
    const up = net.connect(upstreamPort, '127.0.0.1', () => {
      let s = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (let i = 0; i < req.rawHeaders.length; i += 2) s += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
      up.write(`${s}\r\n`);
      up.write(head);
      socket.pipe(up);
      up.pipe(socket);
    });
    const tunnel = { socket, up };
    tunnels.add(tunnel);
    const drop = () => {
      tunnels.delete(tunnel);
      socket.destroy();
      up.destroy();
    };
    for (const end of [socket, up]) {
      end.on('error', drop);
      end.on('close', drop);
    }
  });
  const port = await freePort();
  await new Promise((r) => srv.listen(port, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise((r) => {
      srv.closeAllConnections?.();
      for (const t of [...tunnels]) {
        t.socket.destroy();
        t.up.destroy();
      }
      srv.close(() => r());
    }),
  };
}
