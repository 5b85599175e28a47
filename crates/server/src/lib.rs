//! The Spades table server: REST and WebSocket front, one task per table.
//!
//! [`app::serve`] runs the server on a bound listener until a shutdown token
//! is cancelled; the `spades-server` binary wraps it with configuration,
//! logging and signal handling. See `docs/protocol.md` for the wire protocol.
//!
//! The modules stand on floors; each uses only the floors below it (the few
//! uses within a floor are listed in `crates/server/README.md`, and
//! `tests/floors.rs` fails on any other).
#![forbid(unsafe_code)]

// The ground: settings, errors, metrics, secrets, text and time.
pub mod admission;
pub mod config;
pub mod error;
pub mod metrics;
pub mod text;
pub mod time;
pub mod token;
pub mod validators;

// Storage: the event log and leases, and reading matches back from it.
pub mod record;
pub mod storage;

// The table actor.
pub mod table;

// Services over the tables.
pub mod accounts;
pub mod blocks;
pub mod chat;
pub mod cluster;
pub mod directory;
pub mod hosting;
pub mod identities;
pub mod moderation;
pub mod oidc;
pub mod passkeys;
pub mod passwords;
pub mod reports;
pub mod state;

// Transports.
pub mod admin;
pub mod boundary;
pub mod headers;
pub mod openapi;
pub mod people;
pub mod rest;
pub mod web;
pub mod ws;

// Wiring.
pub mod app;

pub use app::{serve, serve_with};
pub use config::Config;
