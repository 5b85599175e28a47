//! Chat at the table: who may write, telling everybody, and keeping it.
//! The text was checked and rate-limited by the writer's connection before
//! it was queued (`chat.rs`); the table keeps the last few messages in
//! memory for connections that attach later, and hands each one to its
//! journal to keep for moderation without waiting for the write. An
//! operator's removal drops a message here too and tells everybody; so
//! does an operator's closing of the table, with why.

use std::collections::VecDeque;

use spades_protocol::{ErrorCode, ServerMessage};
use tracing::warn;

use crate::storage::ChatRow;

use super::{ConnId, Frame, Role, Table};

/// Messages kept for connections that attach later.
pub(super) const HISTORY: usize = 30;

/// The last messages said at the table, as frames by id, and the next
/// message's id.
#[derive(Debug)]
pub(super) struct ChatLog {
    frames: VecDeque<(u64, Frame)>,
    /// Ids grow like view `seq`: from `epoch << 32` after a restore, so a
    /// client that keeps messages by id never takes a new one for an old.
    next_id: u64,
}

impl ChatLog {
    /// An empty log whose first message gets the id after `base`.
    pub(super) fn new(base: u64) -> ChatLog {
        ChatLog { frames: VecDeque::new(), next_id: base + 1 }
    }
}

impl Table {
    /// Says `text` at the table for `conn`: every connection gets it, the
    /// writer after its `ack`.
    pub(super) fn chat(&mut self, conn: ConnId, req: Option<u32>, role: Role, text: String) {
        let (from, name) = match role {
            Role::Seat(seat) => {
                (Some(seat), self.seats[seat].as_ref().map_or_else(|| seat.to_string(), |o| o.name.clone()))
            }
            Role::Spectator | Role::Left(_) => {
                if !self.options.spectator_chat {
                    return self.error_to(
                        conn,
                        req,
                        ErrorCode::ChatNotAllowed,
                        "spectators only read the chat at this table",
                    );
                }
                (None, "Spectator".to_owned())
            }
        };
        let id = self.chat_log.next_id;
        let at = crate::time::now_ms();
        // The seat's account, else (a spectator) the connection's.
        let account = match role {
            Role::Seat(seat) => self.seats[seat].as_ref().and_then(|o| o.account),
            Role::Spectator | Role::Left(_) => {
                self.conns.iter().find(|c| c.id == conn).and_then(|c| c.account)
            }
        };
        let msg = ServerMessage::Chat { id, from, name, text, at, account };
        let frame = match Frame::of(&msg) {
            Ok(frame) => frame,
            Err(e) => return warn!(error = %e, "could not serialise a chat message"),
        };
        // The name and text go on to the store, not copied.
        let ServerMessage::Chat { name, text, .. } = msg else { return };
        self.chat_log.next_id += 1;
        self.send_to(conn, &ServerMessage::Ack { req });
        if self.chat_log.frames.len() >= HISTORY {
            self.chat_log.frames.pop_front();
        }
        self.queue_all(&frame);
        self.chat_log.frames.push_back((id, frame));
        // Kept off the table's task: a slow store never holds the table.
        let row =
            ChatRow { table: self.id, id, account, seat: from, name, text, at_ms: at, removed_at_ms: None };
        let (journal, table) = (self.journal.clone(), self.id);
        tokio::spawn(async move {
            if let Err(e) = journal.chat(row).await {
                warn!(%table, message = id, error = %e, "could not keep a chat message");
            }
        });
    }

    /// An operator removed message `id`: it is no longer sent to
    /// connections that attach, and everybody is told to stop showing it.
    pub(super) fn remove_chat(&mut self, id: u64) {
        self.chat_log.frames.retain(|(kept, _)| *kept != id);
        self.tell_all(&ServerMessage::ChatRemoved { id });
    }

    /// An operator closed the table: every connection is told why (a
    /// `table_closed` error, then close code 4003 once the task ends).
    pub(super) fn close_by_operator(&mut self, reason: &str) {
        self.tell_all(&ServerMessage::Error {
            req: None,
            code: ErrorCode::TableClosed,
            message: format!("an operator closed this table: {reason}"),
        });
        self.closed_by_operator = true;
    }

    /// `msg` to every connection.
    fn tell_all(&mut self, msg: &ServerMessage) {
        match Frame::of(msg) {
            Ok(frame) => self.queue_all(&frame),
            Err(e) => warn!(error = %e, "could not serialise a message for everybody"),
        }
    }

    /// The recent messages, to a connection that has just attached.
    pub(super) fn send_chat_log(&mut self, conn: ConnId) {
        let Some(i) = self.conns.iter().position(|c| c.id == conn) else { return };
        let frames: Vec<Frame> = self.chat_log.frames.iter().map(|(_, f)| f.clone()).collect();
        for frame in frames {
            self.queue(conn, i, frame);
        }
    }
}
