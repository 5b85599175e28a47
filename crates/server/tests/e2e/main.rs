//! End-to-end tests: the real server on an ephemeral port, real WebSocket
//! and HTTP clients.

/// Guest accounts and sessions: device secrets, unique names, renames, signing out, expiry, refusals.
mod accounts;
/// REST errors as JSON, refusals echoing `req` in plain English, bids out of range, spoofing names.
mod api_edges;
/// A silent heartbeating client shown away; matches nobody is at any more end; chat message ids.
mod away;
/// Turn clocks, timeouts and leaving at short test tempos; close frames at shutdown; silent connections.
mod clocks;
/// Three real server binaries on PostgreSQL and NATS: failover, draining, moved tables, a partition.
mod cluster;
/// What a stranger cannot exhaust: timeouts, per-address caps, rate limits, close codes, trusted proxies.
mod connections;
/// The real binary killed mid-hand and restarted, on SQLite and PostgreSQL: no move lost, matches replay.
mod crash;
/// Browser defences on every answer: Content-Security-Policy, Referrer-Policy, nosniff, HSTS.
mod defences;
/// Playing with friends: taking a bot's seat, removing bots, moving seats, inviting to a left seat.
mod friends;
/// Storms: REST floods and failing storage never freeze a table or lose an acknowledged move.
mod hardening;
/// Shared by every module: the test server, the recording WebSocket client, `/metrics` and error helpers.
mod helpers;
/// Whole matches: four clients play one that replays exactly; resuming with a token; bots fill seats.
mod match_play;
/// Moderation: the first operator made on the command line, operator routes refused to others, suspensions, mutes, bans, the audit log.
mod moderation;
/// OpenID Connect against a real provider (npm oidc-provider): accounts made, identities linked, refusals.
mod oidc;
/// Operations: `/metrics`, health and readiness, rate limits, origins and CORS, request ids, caps.
mod ops;
/// Passwords (switched on): set, changed (signing the other sessions out), signing in by name, limits.
mod passwords;
/// WebSocket refusals: typed errors for bad frames, nobody acts out of place, old protocol versions, `sync`.
mod refusals;
/// Players' reports of a message or a player, with their context; the operators' queue and its resolution.
mod reports;
/// The REST API: invalid tables refused, table list and status, caching and compression, the web client.
mod rest;
/// PostgreSQL and NATS for the tests that need them: skipped without, failing under CI (shared file).
#[path = "../services/mod.rs"]
mod services;
/// A move is for one turn: one chosen before the table moved on is refused `stale`.
mod turns;
