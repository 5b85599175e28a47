// The REST API (/api/v1), same origin.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function call(method, path, body, { timeoutMs } = {}) {
  let resp;
  try {
    resp = await fetch(`/api/v1${path}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
      cache: 'no-store',
      signal: timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined,
    });
  } catch {
    throw new ApiError(0, 'network', 'the server cannot be reached');
  }
  const text = await resp.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!resp.ok) {
    throw new ApiError(resp.status, data?.code || 'http', data?.message || `HTTP ${resp.status}`);
  }
  return data;
}

/** Tables, newest first (`TableSummary[]`). */
export const listTables = () => call('GET', '/tables?limit=100');

/** One table's public status, with every finished hand (`TableStatus`). */
export const tableStatus = (id) => call('GET', `/tables/${encodeURIComponent(id)}`);

/** Creates a table: `{table, owner_token}`. */
export const createTable = (name, options) => call('POST', '/tables', { name, options });

/**
 * Recent matches, newest first (`MatchSummary[]`): with `finished`, only
 * the matches that are over (`true`) or only the others (`false`); with
 * `mine`, only those in which the signed-in account held a seat.
 */
export const listMatches = (limit = 10, { finished, mine } = {}) =>
  call('GET', `/matches?limit=${limit}${finished === undefined ? '' : `&finished=${finished}`}${mine ? '&mine=true' : ''}`);

/** A match's record, every card of every finished hand (`MatchRecord`). */
export const matchRecord = (id) => call('GET', `/matches/${encodeURIComponent(id)}`);

// Accounts (docs/accounts.md). The session is an HttpOnly cookie: the
// page never sees its token, the browser sends it with every call and
// with the WebSocket's upgrade.

/** The signed-in account and this session (`Me`); `ApiError` 401 when signed out. */
export const getMe = (opts) => call('GET', '/me', undefined, opts);

/** Signs this device's guest account in, making it (named `name`) on first use (`SignedIn`). */
export const signInGuest = (deviceSecret, name, opts) =>
  call('POST', '/accounts/guest', name ? { device_secret: deviceSecret, name } : { device_secret: deviceSecret }, opts);

/** Renames the account (`Account`). */
export const renameMe = (name) => call('PATCH', '/me', { name });

/** A generated name nobody holds (`NameSuggestion`). */
export const nameSuggestion = () => call('GET', '/names/suggestion');


