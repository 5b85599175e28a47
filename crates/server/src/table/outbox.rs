//! What a connection's outbox carries: a frame's text, and what the
//! connection (or the node relaying it) must know of the frame without
//! reading its JSON back: where it stands in the connection's `seq` order,
//! and which request it answers. Both are set where the frame is made.

use axum::extract::ws::Utf8Bytes;
use spades_protocol::ServerMessage;
use tokio::sync::mpsc;

/// A connection's bounded queue of outgoing frames.
pub type Outbox = mpsc::Sender<Frame>;

/// Where a frame stands among a connection's frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// A `view` of this `seq`: it may repeat the last `seq` (a fresh
    /// snapshot of the same state), never go below it.
    Snapshot(u64),
    /// A `change` to this `seq`: always above the last.
    Change(u64),
    /// The `ack` or `error` answering the request of this id.
    Answer(u32),
    /// Anything else (`joined`, `chat`, an `error` without a request id…):
    /// written whenever it comes.
    Other,
}

impl Order {
    /// The order of `msg`.
    pub fn of(msg: &ServerMessage) -> Order {
        match msg {
            ServerMessage::View { seq, .. } => Order::Snapshot(*seq),
            ServerMessage::Change { seq, .. } => Order::Change(*seq),
            ServerMessage::Ack { req: Some(req) } | ServerMessage::Error { req: Some(req), .. } => {
                Order::Answer(*req)
            }
            _ => Order::Other,
        }
    }

    /// True unless the frame would take a connection whose last written
    /// `seq` is `*last` back (a frame of an owner the table has moved on
    /// from, arriving late); moves `*last` on when it is a view or change.
    pub fn follows(self, last: &mut u64) -> bool {
        let (fresh, seq) = match self {
            Order::Snapshot(seq) => (seq >= *last, seq),
            Order::Change(seq) => (seq > *last, seq),
            Order::Answer(_) | Order::Other => return true,
        };
        if fresh {
            *last = seq;
        }
        fresh
    }

    /// The order as a tag and a number, for the cluster's frame messages.
    pub fn to_wire(self) -> (u8, u64) {
        match self {
            Order::Other => (0, 0),
            Order::Snapshot(seq) => (1, seq),
            Order::Change(seq) => (2, seq),
            Order::Answer(req) => (3, u64::from(req)),
        }
    }

    /// The order from its tag and number; `None` for an unknown tag or a
    /// request id beyond `u32`.
    pub fn from_wire(tag: u8, n: u64) -> Option<Order> {
        match tag {
            0 => Some(Order::Other),
            1 => Some(Order::Snapshot(n)),
            2 => Some(Order::Change(n)),
            3 => u32::try_from(n).ok().map(Order::Answer),
            _ => None,
        }
    }
}

/// One frame for one connection.
#[derive(Clone, PartialEq, Eq)]
pub struct Frame {
    /// The JSON text, as written to the socket.
    pub text: Utf8Bytes,
    /// Where it stands.
    pub order: Order,
}

/// The text may hold a seat's hand: only its order and length are printed.
impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame").field("order", &self.order).field("bytes", &self.text.len()).finish()
    }
}

impl Frame {
    /// `msg`, encoded, with its order.
    ///
    /// # Errors
    /// When `msg` cannot be encoded.
    pub fn of(msg: &ServerMessage) -> Result<Frame, serde_json::Error> {
        Ok(Frame { text: Utf8Bytes::from(serde_json::to_string(msg)?), order: Order::of(msg) })
    }

    /// Text already encoded, of the given order.
    pub fn new(text: impl Into<Utf8Bytes>, order: Order) -> Frame {
        Frame { text: text.into(), order }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spades_protocol::ErrorCode;

    #[test]
    fn a_frame_knows_its_order_from_the_message_it_was_made_of() {
        let ack = Frame::of(&ServerMessage::Ack { req: Some(4) }).unwrap();
        assert_eq!(ack.order, Order::Answer(4));
        let unasked = ServerMessage::Error { req: None, code: ErrorCode::BadMessage, message: "x".into() };
        assert_eq!(Frame::of(&unasked).unwrap().order, Order::Other);
        let refused = ServerMessage::Error { req: Some(9), code: ErrorCode::Stale, message: "x".into() };
        assert_eq!(Frame::of(&refused).unwrap().order, Order::Answer(9));
        assert_eq!(Frame::of(&ServerMessage::Pong { req: Some(1) }).unwrap().order, Order::Other);
        assert!(!format!("{ack:?}").contains("ack"), "the text is not printed");
    }

    #[test]
    fn seq_never_goes_back() {
        let mut last = 0;
        assert!(Order::Snapshot(1 << 32).follows(&mut last));
        assert_eq!(last, 1 << 32);
        assert!(Order::Snapshot(1 << 32).follows(&mut last), "a snapshot may repeat the last seq");
        assert!(!Order::Change(1 << 32).follows(&mut last), "a change may not");
        assert!(Order::Change((1 << 32) + 1).follows(&mut last));
        assert!(!Order::Snapshot(7).follows(&mut last), "an earlier owner's frame");
        assert!(!Order::Change(8).follows(&mut last));
        assert!(Order::Answer(3).follows(&mut last) && Order::Other.follows(&mut last));
        assert_eq!(last, (1 << 32) + 1);
    }

    #[test]
    fn orders_survive_the_wire() {
        for order in [Order::Other, Order::Snapshot(u64::MAX), Order::Change(5), Order::Answer(u32::MAX)] {
            let (tag, n) = order.to_wire();
            assert_eq!(Order::from_wire(tag, n), Some(order));
        }
        assert_eq!(Order::from_wire(3, u64::from(u32::MAX) + 1), None);
        assert_eq!(Order::from_wire(4, 0), None);
    }
}
