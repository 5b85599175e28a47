// One WebSocket connection to one table, kept alive: it reconnects with
// exponential backoff and re-attaches (join, resume or watch, chosen by the
// caller each time) whenever the socket drops. It keeps the table's view
// from the server's snapshots and change frames (protocol 2, lean.js) and
// hands the page the complete view after each.

import { PROTOCOL, ViewKeeper } from './lean.js';

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 5000;
/** The page pings every 2 s (a browser cannot see the server's WebSocket pings)… */
const PING_EVERY_MS = 2000;
/** …so 5 s without a frame means the network stalled: start over. */
const SILENT_AFTER_MS = 5000;
const WATCH_EVERY_MS = 500;

/** Close codes after which reconnecting is pointless. */
const FINAL_CLOSE = new Map([
  [4003, 'the table closed'],
  [4006, 'an operator suspended or banned your account'],
]);

export class Connection {
  /**
   * @param {object} hooks
   * @param {() => object} hooks.attach   the attach message to send after `hello`
   * @param {(reply: object) => void} hooks.onAttached  `joined`, `resumed` or `watching`
   * @param {(err: object, msg: object) => (object|null)} hooks.onAttachError
   *        returns another attach message to try, or null to give up
   * @param {(msg: object) => void} hooks.onView  `{type: 'view', seq, view}`, the complete
   *        view, after every snapshot and every change applied
   * @param {(msg: object) => void} [hooks.onUnsolicitedError]
   * @param {(state: object) => void} hooks.onState
   * @param {() => Promise} [hooks.prepare]  awaited before each socket opens
   *        (the session the upgrade will carry); its failure does not stop it
   * @param {(code: number) => void} [hooks.onClose]  the socket closed with this code
   */
  constructor(hooks) {
    this.hooks = hooks;
    this.ws = null;
    this.req = 0;
    this.pending = new Map();
    this.attempt = 0;
    this.retryTimer = null;
    this.pingTimer = null;
    this.lastHeard = 0;
    this.stopped = false;
    this.attached = false;
    /** Counts the opens: a `prepare` still running for an older one is dropped. */
    this.opens = 0;
    this.preparing = false;
    this.closingSent = false;
    this.keeper = new ViewKeeper(() => this.sendSync());
    this.onOnline = () => this.reconnectNow();
    // The browser knows the network is gone: do not wait for the silence.
    this.onOffline = () => {
      if (this.ws) this.dropStalled();
    };
    this.lostAt = null;
    this.onVisible = () => {
      if (document.visibilityState === 'visible') this.reconnectNow();
    };
    window.addEventListener('online', this.onOnline);
    window.addEventListener('offline', this.onOffline);
    document.addEventListener('visibilitychange', this.onVisible);
  }

  start() {
    this.stopped = false;
    this.open();
  }

  open() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.attached = false;
    this.closingSent = false;
    const turn = ++this.opens;
    if (!this.hooks.prepare) {
      this.connect();
      return;
    }
    this.preparing = true;
    this.state({ status: 'connecting', lostAt: this.lostAt });
    Promise.resolve().then(() => this.hooks.prepare()).catch(() => {}).then(() => {
      if (turn !== this.opens || this.stopped) return;
      this.preparing = false;
      this.connect();
    });
  }

  connect() {
    const url = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/ws`;
    this.state({ status: 'connecting', lostAt: this.lostAt });
    let ws;
    try {
      ws = new WebSocket(url);
    } catch {
      this.scheduleRetry();
      return;
    }
    this.ws = ws;
    // From the first byte on, silence counts: a connection that cannot
    // even say hello within the limit is a stalled one.
    this.startWatch();
    ws.onmessage = (e) => {
      if (ws !== this.ws) return;
      this.lastHeard = Date.now();
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      this.receive(msg);
    };
    ws.onclose = (e) => {
      if (ws !== this.ws) return;
      this.hooks.onClose?.(e.code);
      this.ws = null;
      this.attached = false;
      clearInterval(this.pingTimer);
      this.failPending({ code: 'disconnected', message: 'the connection was lost' });
      if (this.stopped) return;
      this.markLost();
      const final = FINAL_CLOSE.get(e.code);
      if (final) {
        this.stopped = true;
        this.state({ status: 'closed', reason: final });
        return;
      }
      this.scheduleRetry();
    };
    ws.onerror = () => {
      // onclose follows and schedules the retry.
    };
  }

  receive(msg) {
    switch (msg.type) {
      case 'hello':
        if (msg.protocol !== PROTOCOL) {
          this.stop();
          this.state({ status: 'closed', reason: `the server speaks protocol ${msg.protocol}, this page ${PROTOCOL}: reload` });
          return;
        }
        this.keeper.expectSnapshot();
        this.sendAttach(this.hooks.attach());
        return;
      case 'view':
      case 'change': {
        const view = this.keeper.receive(msg);
        if (view) this.hooks.onView(view);
        return;
      }
      case 'chat':
      case 'chat_removed':
        this.hooks.onChat?.(msg);
        return;
      case 'error':
      case 'ack':
      case 'joined':
      case 'resumed':
      case 'watching':
      case 'invited':
      case 'pong': {
        const p = msg.req != null ? this.pending.get(msg.req) : null;
        if (p) {
          this.pending.delete(msg.req);
          if (msg.type === 'error') p.reject(msg);
          else p.resolve(msg);
        } else if (msg.type === 'error') {
          this.hooks.onUnsolicitedError?.(msg);
        }
        return;
      }
      default:
    }
  }

  /** Asks for a snapshot (the view missed a change). */
  sendSync() {
    this.request({ type: 'sync' }).catch((err) => {
      // A lost connection attaches again and gets a snapshot anyway.
      if (err.code !== 'disconnected') this.keeper.syncFailed();
    });
  }

  /** `msg` is `join`, `resume` or `watch`; the protocol number is added here. */
  sendAttach(msg) {
    this.request({ ...msg, protocol: PROTOCOL }).then(
      (reply) => {
        this.attached = true;
        this.attempt = 0;
        this.lostAt = null;
        this.state({ status: 'open' });
        this.hooks.onAttached(reply);
      },
      (err) => {
        if (err.code === 'disconnected') return;
        if (err.code === 'unsupported_protocol') {
          this.stop();
          this.state({ status: 'closed', reason: `${err.message} (this page speaks protocol ${PROTOCOL}): reload` });
          return;
        }
        const next = this.hooks.onAttachError(err, msg);
        if (next) this.sendAttach(next);
        else {
          this.stop();
          this.state({ status: 'closed', reason: err.message });
        }
      },
    );
  }

  /** Sends a message; resolves with the reply, rejects with the `error`. */
  request(msg) {
    return new Promise((resolve, reject) => {
      const ws = this.ws;
      if (!ws || ws.readyState !== WebSocket.OPEN) {
        reject({ code: 'disconnected', message: 'not connected: reconnecting…' });
        return;
      }
      this.req = (this.req % 1_000_000_000) + 1;
      const req = this.req;
      this.pending.set(req, { resolve, reject });
      ws.send(JSON.stringify({ ...msg, req }));
    });
  }

  failPending(err) {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(err);
  }

  /**
   * Watches the socket: a ping every PING_EVERY_MS once the server said
   * hello, and SILENT_AFTER_MS without any frame drops it (a stall).
   */
  startWatch() {
    clearInterval(this.pingTimer);
    this.lastHeard = Date.now();
    let lastPing = 0;
    this.pingTimer = setInterval(() => {
      if (!this.ws) return;
      const now = Date.now();
      if (now - this.lastHeard > SILENT_AFTER_MS) {
        this.dropStalled();
        return;
      }
      if (this.ws.readyState === WebSocket.OPEN && now - lastPing >= PING_EVERY_MS) {
        lastPing = now;
        this.request({ type: 'ping' }).catch(() => {});
      }
    }, WATCH_EVERY_MS);
  }

  /**
   * The socket looks open but nothing arrives (or the browser went
   * offline): forget it, fail what waits on it, and start over. Nothing
   * queued is sent again: the page decides anew from the next view.
   */
  dropStalled() {
    const ws = this.ws;
    this.ws = null;
    this.attached = false;
    clearInterval(this.pingTimer);
    try {
      ws?.close();
    } catch {
      // ignore
    }
    this.failPending({ code: 'disconnected', message: 'the connection stalled' });
    this.markLost();
    this.scheduleRetry();
  }

  /** The time the table was last reachable, kept until attached again. */
  markLost() {
    if (this.lostAt == null) this.lostAt = Date.now();
  }

  scheduleRetry() {
    if (this.stopped || this.retryTimer) return;
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.attempt);
    const delay = Math.round(base * (0.75 + Math.random() * 0.5));
    this.attempt += 1;
    this.state({ status: 'reconnecting', retryAt: Date.now() + delay, attempt: this.attempt, lostAt: this.lostAt ?? Date.now() });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.open();
    }, delay);
  }

  /** Reconnects at once if the connection is down (back online, tab shown). */
  reconnectNow() {
    if (this.stopped || this.ws || this.preparing) return;
    this.attempt = 0;
    this.open();
  }

  /** Drops the socket and attaches again at once (e.g. to sit after watching). */
  restart() {
    const ws = this.ws;
    this.ws = null;
    clearInterval(this.pingTimer);
    this.failPending({ code: 'disconnected', message: 'reconnecting' });
    if (ws) {
      try {
        ws.close(1000);
      } catch {
        // ignore
      }
    }
    this.attempt = 0;
    this.stopped = false;
    this.open();
  }

  /** Tells the server the page is closing on purpose (short grace). */
  sendClosing() {
    if (this.closingSent || !this.ws || this.ws.readyState !== WebSocket.OPEN || !this.attached) return;
    this.closingSent = true;
    try {
      this.ws.send(JSON.stringify({ type: 'closing' }));
    } catch {
      // ignore
    }
  }

  /** Stops for good (leaving the table screen). */
  stop() {
    this.stopped = true;
    this.opens += 1;
    this.preparing = false;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    clearInterval(this.pingTimer);
    const ws = this.ws;
    this.ws = null;
    this.failPending({ code: 'disconnected', message: 'closed' });
    if (ws) {
      try {
        ws.close(1000);
      } catch {
        // ignore
      }
    }
  }

  dispose() {
    this.stop();
    window.removeEventListener('online', this.onOnline);
    window.removeEventListener('offline', this.onOffline);
    document.removeEventListener('visibilitychange', this.onVisible);
  }

  state(s) {
    this.hooks.onState(s);
  }
}
