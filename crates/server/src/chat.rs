//! Table chat at the connection: a message is checked and rate-limited by
//! the connection's own task before anything reaches the table, so chat can
//! neither fill a table's queue nor hold it up. The table only checks who
//! may write and tells everybody (`table/chat.rs`). Nothing of the chat is
//! stored.

use std::collections::VecDeque;
use std::time::Duration;

use spades_protocol::{ErrorCode, MAX_CHAT_CHARS};
use tokio::time::Instant;

use crate::text::is_spoofing;

/// Messages one connection may send within [`CHAT_WINDOW`].
pub const CHAT_BURST: usize = 5;

/// The window of [`CHAT_BURST`].
pub const CHAT_WINDOW: Duration = Duration::from_secs(10);

/// Why a chat message is refused: a stable code and a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatRefusal {
    /// The code.
    pub code: ErrorCode,
    /// The reason, for the player.
    pub message: String,
}

/// The chat text as everybody will see it (trimmed), or why not.
///
/// # Errors
/// [`ErrorCode::InvalidChat`] for an empty message, one over
/// [`MAX_CHAT_CHARS`] characters, or one with control or invisible
/// characters (line breaks included).
pub fn clean_text(raw: &str) -> Result<String, ChatRefusal> {
    let text = raw.trim();
    let refuse = |message: String| ChatRefusal { code: ErrorCode::InvalidChat, message };
    if text.is_empty() {
        return Err(refuse("say something: the message is empty".to_owned()));
    }
    let n = text.chars().count();
    if n > MAX_CHAT_CHARS {
        return Err(refuse(format!("messages are at most {MAX_CHAT_CHARS} characters (this one has {n})")));
    }
    if text.chars().any(|c| c.is_control() || is_spoofing(c)) {
        return Err(refuse("messages are one line, without control or invisible characters".to_owned()));
    }
    Ok(text.to_owned())
}

/// One connection's chat rate: at most [`CHAT_BURST`] messages in any
/// [`CHAT_WINDOW`].
#[derive(Debug, Default)]
pub struct ChatLimiter {
    sent: VecDeque<Instant>,
}

impl ChatLimiter {
    /// Checks `raw` and counts it against the rate; the cleaned text when
    /// it may go to the table.
    ///
    /// # Errors
    /// [`ErrorCode::InvalidChat`] (see [`clean_text`]) or
    /// [`ErrorCode::ChatRateLimited`]. A refused message is not counted.
    pub fn admit(&mut self, raw: &str, now: Instant) -> Result<String, ChatRefusal> {
        let text = clean_text(raw)?;
        while self.sent.front().is_some_and(|&t| now.duration_since(t) >= CHAT_WINDOW) {
            self.sent.pop_front();
        }
        if self.sent.len() >= CHAT_BURST {
            let wait = self.sent.front().map_or(CHAT_WINDOW, |&t| CHAT_WINDOW.saturating_sub(now - t));
            return Err(ChatRefusal {
                code: ErrorCode::ChatRateLimited,
                message: format!(
                    "at most {CHAT_BURST} messages in {} s: wait {} s",
                    CHAT_WINDOW.as_secs(),
                    wait.as_secs().max(1)
                ),
            });
        }
        self.sent.push_back(now);
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_trimmed_capped_and_one_line() {
        assert_eq!(clean_text("  Nice nil!  ").unwrap(), "Nice nil!");
        assert_eq!(clean_text(&"é".repeat(MAX_CHAT_CHARS)).unwrap().chars().count(), MAX_CHAT_CHARS);
        for bad in ["", "   ", "two\nlines", "bell\u{7}", "hidden\u{200B}space", "flip\u{202E}ped"] {
            assert_eq!(clean_text(bad).unwrap_err().code, ErrorCode::InvalidChat, "{bad:?}");
        }
        let long = clean_text(&"x".repeat(MAX_CHAT_CHARS + 1)).unwrap_err();
        assert_eq!(long.code, ErrorCode::InvalidChat);
        assert!(long.message.contains("at most 200 characters"), "{}", long.message);
        // Markup is text like any other: the clients show it as text.
        assert_eq!(clean_text("<b>gg</b>").unwrap(), "<b>gg</b>");
    }

    #[test]
    fn the_rate_is_a_sliding_window() {
        let mut limiter = ChatLimiter::default();
        let t0 = Instant::now();
        for i in 0..CHAT_BURST {
            assert!(limiter.admit("gg", t0 + Duration::from_millis(i as u64)).is_ok(), "{i}");
        }
        let refused = limiter.admit("gg", t0 + Duration::from_secs(1)).unwrap_err();
        assert_eq!(refused.code, ErrorCode::ChatRateLimited);
        assert!(refused.message.contains("wait 9 s"), "{}", refused.message);
        // A refused message, valid or not, is not counted.
        assert_eq!(limiter.admit("", t0 + Duration::from_secs(2)).unwrap_err().code, ErrorCode::InvalidChat);
        // Once the first message is out of the window, one more may go.
        assert!(limiter.admit("gg", t0 + CHAT_WINDOW).is_ok());
        assert!(limiter.admit("gg", t0 + CHAT_WINDOW).is_err());
    }
}
