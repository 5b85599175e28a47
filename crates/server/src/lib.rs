//! The Spades table server: REST and WebSocket front, one task per table.
//!
//! [`app::serve`] runs the server on a bound listener until a shutdown token
//! is cancelled; the `spades-server` binary wraps it with configuration,
//! logging and signal handling. See `docs/protocol.md` for the wire protocol.
#![forbid(unsafe_code)]

pub mod app;
pub mod chat;
pub mod cluster;
pub mod config;
pub mod error;
pub mod metrics;
pub mod openapi;
pub mod record;
pub mod rematch;
pub mod rest;
pub mod restore;
pub mod storage;
pub mod table;
pub mod token;
pub mod web;
pub mod ws;

pub use app::{serve, serve_with};
pub use config::Config;
