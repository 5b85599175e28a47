// What the browser remembers: the device secret of its guest account, the
// player's name, the table looks and, per table, the seat (with its token
// when the player sat without an account), the owner token and the last
// hand whose scoring was shown.

const PREFIX = 'spades.v1.';

function read(key) {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    return raw == null ? null : JSON.parse(raw);
  } catch {
    return null;
  }
}

function write(key, value) {
  try {
    if (value == null) localStorage.removeItem(PREFIX + key);
    else localStorage.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    // Private mode or a full store: the client still works, without memory.
  }
}

export const store = {
  /** The secret that signs this browser's guest account in (session.js); null before the first game. */
  device: () => read('device'),
  setDevice: (secret) => write('device', secret),

  /** This browser had a session when last seen (a cookie the page cannot read). */
  signedIn: () => read('signedin') === true,
  setSignedIn: (on) => write('signedin', on ? true : null),

  name: () => read('name') || '',
  setName: (name) => write('name', name),

  /** Table looks (web/js/looks.js): the card design, the table's background, the avatar; null: the default. */
  cardDesign: () => read('looks.cards'),
  setCardDesign: (v) => write('looks.cards', v),
  felt: () => read('looks.felt'),
  setFelt: (v) => write('looks.felt', v),
  avatar: () => read('looks.avatar'),
  setAvatar: (v) => write('looks.avatar', v),

  /**
   * `{token, seat}` of the seat this browser holds at a table, or null.
   * `token` is null for a seat taken as the account: the session finds it.
   */
  seat: (table) => read(`seat.${table}`),
  setSeat: (table, token, seat) => write(`seat.${table}`, { token: token || null, seat, at: Date.now() }),
  dropSeat: (table) => write(`seat.${table}`, null),

  /** The owner token of a table this browser created, or null. */
  owner: (table) => read(`owner.${table}`),
  setOwner: (table, token) => write(`owner.${table}`, token),

  /** The highest hand number whose scoring this browser has shown. */
  seenHand: (table) => read(`seen.${table}`) || 0,
  setSeenHand: (table, n) => write(`seen.${table}`, n),
  /** Turn alerts: the tone is muted; desktop notifications are wanted. */
  muted: () => read('muted') === true,
  setMuted: (on) => write('muted', on ? true : null),
  notify: () => read('notify') === true,
  setNotify: (on) => write('notify', on ? true : null),

  /** Seats whose chat this browser hides at a table. */
  mutedSeats: (table) => read(`mute.${table}`) || [],
  setMutedSeats: (table, seats) => write(`mute.${table}`, seats.length ? seats : null),
  /** This browser asked for a rematch that is to start at `table`. */
  pendingStart: (table) => read(`start.${table}`) === true,
  setPendingStart: (table, on) => write(`start.${table}`, on ? true : null),

  /** The highest chat message id this browser has read at a table. */
  chatRead: (table) => read(`chatread.${table}`) || 0,
  setChatRead: (table, id) => write(`chatread.${table}`, id),

  seenResult: (table) => !!read(`result.${table}`),
  setSeenResult: (table) => write(`result.${table}`, true),
};
