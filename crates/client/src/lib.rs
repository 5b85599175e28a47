//! A Rust client for the Spades table server.
//!
//! - [`Client`]: the REST API (create and list tables) and the factory for
//!   connections and sessions.
//! - [`Connection`]: one WebSocket; typed requests with request ids
//!   ([`Connection::join`], [`Connection::resume`], [`Connection::watch`],
//!   [`Connection::act`], …) whose refusals come back as
//!   [`Error::Refused`] with the server's plain-English reason, and the
//!   server's frames as typed [`ServerMessage`]s.
//! - [`Session`]: a seat (or a spectator's place) kept across dropped
//!   connections: [`Command`]s in, [`Event`]s out, automatic reconnection
//!   with exponential backoff and jitter that resumes the seat with its
//!   token.
//!
//! The message types are the protocol crate's, re-exported as
//! [`protocol`]; the wire protocol is described in `docs/protocol.md`.
//!
//! ```no_run
//! use spades_client::{Client, Event};
//! use spades_client::protocol::{CreateTable, TablePhase};
//!
//! # async fn demo() -> Result<(), spades_client::Error> {
//! let client = Client::new("http://127.0.0.1:8080")?;
//! let created = client.create_table(&CreateTable::default()).await?;
//!
//! // One connection, request by request.
//! let mut conn = client.connect().await?;
//! let joined = conn.join(created.table, "Ann", None).await?;
//! conn.add_bots(&created.owner_token).await?;
//! conn.start(&created.owner_token).await?;
//! loop {
//!     let spades_client::ServerMessage::View { view, .. } = conn.recv().await? else { continue };
//!     if view.phase == TablePhase::Finished {
//!         break;
//!     }
//!     if let Some(action) = spades_client::first_legal_action(&view) {
//!         match conn.act(action).await {
//!             Ok(()) => {}
//!             Err(e) => eprintln!("refused: {e}"), // e.g. "you must follow the led suit (hearts)"
//!         }
//!     }
//! }
//! println!("{} played {} with token {}", joined.seat, created.table, joined.token);
//! # Ok(())
//! # }
//! ```
//!
//! With the `load` feature (on by default) the crate also holds the load
//! generator behind `spades-load` ([`load`]); with `tui` (on by default) the
//! terminal client's state machine behind `spades-tui` ([`tui`]). A program
//! that only needs the library can turn both off with
//! `default-features = false`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod account;
mod conn;
mod error;
mod keeper;
pub mod peek;
mod rest;
pub mod rng;
mod session;
mod tls;
pub mod verify;

#[cfg(feature = "load")]
pub mod load;
#[cfg(feature = "tui")]
pub mod tui;

pub use conn::{ConnectOptions, Connection, Endpoint, Joined, action_message};
pub use error::{Error, Result};
pub use keeper::{Kept, ViewKeeper};
pub use rest::{Client, TableQuery};
pub use session::{Attach, Backoff, Command, Event, Session, SessionOptions};
pub use spades_protocol as protocol;
pub use spades_protocol::{ClientFrame, ClientMessage, ErrorCode, ServerMessage, TableView};
pub use tls::Tls;

use spades_engine::{Action, Legal};

/// Close code: the connection could not keep up with its table (resume).
pub const CLOSE_TOO_SLOW: u16 = 4001;
/// Close code: the connection stopped answering pings.
pub const CLOSE_SILENT: u16 = 4002;
/// Close code: the table closed (nothing to resume).
pub const CLOSE_TABLE_CLOSED: u16 = 4003;
/// Close code: the account was suspended or banned (the `error` frame
/// before it says until when and why; nothing to resume).
pub const CLOSE_BARRED: u16 = 4006;
/// Close code: the server is shutting down.
pub const CLOSE_GOING_AWAY: u16 = 1001;

/// A simple legal move for the viewer of `view` when it is on turn: bid 2
/// (within the table's range), or play the lowest legal card. `None` when
/// the viewer has nothing to do.
pub fn first_legal_action(view: &TableView) -> Option<Action> {
    let game = view.game.as_ref()?;
    match game.legal {
        Legal::Bid { min, max } => Some(Action::Bid(2u8.clamp(min, max))),
        Legal::Play { cards } => cards.first().map(Action::Play),
        Legal::None => None,
    }
}
