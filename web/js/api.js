// The REST API (/api/v1), same origin.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function call(method, path, body) {
  let resp;
  try {
    resp = await fetch(`/api/v1${path}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
      cache: 'no-store',
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
 * the matches that are over (`true`) or only the others (`false`).
 */
export const listMatches = (limit = 10, { finished } = {}) =>
  call('GET', `/matches?limit=${limit}${finished === undefined ? '' : `&finished=${finished}`}`);

/** A match's record, every card of every finished hand (`MatchRecord`). */
export const matchRecord = (id) => call('GET', `/matches/${encodeURIComponent(id)}`);
