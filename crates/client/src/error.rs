//! The library's error type.

use spades_protocol::ErrorCode;

/// What can go wrong talking to the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The address is not one this library can connect to.
    #[error("bad server address {url:?}: {why}")]
    Url {
        /// The address given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// The TLS settings could not be used (an unreadable root
    /// certificate file, …).
    #[error("TLS: {0}")]
    Tls(String),
    /// The TCP connection, the TLS or the WebSocket handshake failed.
    #[error("could not connect to {url}: {why}")]
    Connect {
        /// The address.
        url: String,
        /// Why.
        why: String,
    },
    /// The server speaks a protocol version this library does not know.
    #[error("the server speaks protocol {got}; this client speaks {expected}")]
    Version {
        /// The server's version.
        got: u32,
        /// Ours.
        expected: u32,
    },
    /// The server sent something the protocol does not describe.
    #[error("unexpected frame from the server: {0}")]
    Protocol(String),
    /// The connection ended (a close frame from the server, or the stream
    /// ended or failed).
    #[error("connection closed{}: {reason}", code.map(|c| format!(" ({c})")).unwrap_or_default())]
    Closed {
        /// The close code, when the server sent a close frame.
        code: Option<u16>,
        /// The close reason, or what failed.
        reason: String,
    },
    /// The server refused a request; nothing changed. `message` is plain
    /// English, meant for the player.
    #[error("{message} ({code})")]
    Refused {
        /// The stable machine code.
        code: ErrorCode,
        /// The server's explanation.
        message: String,
    },
    /// A REST request failed (transport, or an answer that was not JSON).
    #[error("HTTP request failed: {0}")]
    Http(#[from] reqwest::Error),
    /// A REST request was refused with an error status.
    #[error("HTTP {status}: {message}")]
    Api {
        /// The HTTP status.
        status: u16,
        /// The error code, when the body carried one.
        code: Option<ErrorCode>,
        /// The error message (or the body).
        message: String,
    },
    /// No answer within the time allowed.
    #[error("timed out: {0}")]
    Timeout(&'static str),
    /// The session has ended and takes no more commands.
    #[error("the session has ended")]
    SessionEnded,
}

impl Error {
    /// The refusal code, if the server refused a request.
    pub fn refusal(&self) -> Option<ErrorCode> {
        match self {
            Error::Refused { code, .. } => Some(*code),
            Error::Api { code, .. } => *code,
            _ => None,
        }
    }

    /// True when reconnecting cannot help (bad address, protocol mismatch,
    /// a refused token or table).
    pub fn is_permanent(&self) -> bool {
        match self {
            Error::Url { .. } | Error::Tls(_) | Error::Version { .. } | Error::SessionEnded => true,
            Error::Refused { code, .. } => !matches!(
                code,
                ErrorCode::RateLimited
                    | ErrorCode::Capacity
                    | ErrorCode::ShuttingDown
                    | ErrorCode::StorageUnavailable
                    | ErrorCode::Internal
            ),
            Error::Closed { code, .. } => {
                matches!(*code, Some(crate::CLOSE_TABLE_CLOSED | crate::CLOSE_BARRED))
            }
            _ => false,
        }
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_table_or_a_barred_account_is_not_reconnected() {
        let closed = |code| Error::Closed { code: Some(code), reason: String::new() };
        assert!(closed(crate::CLOSE_TABLE_CLOSED).is_permanent());
        assert!(closed(crate::CLOSE_BARRED).is_permanent());
        assert!(!closed(crate::CLOSE_TOO_SLOW).is_permanent());
        let refused = |code| Error::Refused { code, message: String::new() };
        assert!(refused(ErrorCode::Suspended).is_permanent());
        assert!(!refused(ErrorCode::StorageUnavailable).is_permanent());
    }
}
