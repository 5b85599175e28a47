//! What nodes say to each other over NATS: typed, versioned JSON requests
//! and replies, and a small binary header on the frames sent back to
//! relayed connections (the frames themselves are the owner's own, already
//! redacted for the connection's seat).
//!
//! Subjects, under the configured prefix `p`:
//! - `p.node.<id>.req`: requests to a node (attach, act, detach, status,
//!   create), answered on the request's reply subject where an answer is
//!   needed;
//! - `p.node.<id>.<incarnation>.frames`: frames for the connections that
//!   process of a node relays;
//! - `p.lobby`: every node but the asking one answers with its tables' lobby
//!   lines (the question is the asking node's id);
//! - `p.moved`: a node handed tables over (a drain): claim them now;
//! - `p.claimed`: a node runs a table it claimed ([`Claimed`]): the relays
//!   of that table on every node attach their connections to it now,
//!   rather than at their next lease round.
//!
//! These messages carry seat and owner tokens between nodes: NATS must be
//! reachable by the cluster's nodes only (docs/cluster.md).

use serde::{Deserialize, Serialize};
use spades_protocol::{ErrorCode, TableOptions, TableStatus, TableSummary};
use uuid::Uuid;

use crate::table::{Act, Attach, Frame, Order, Role};

/// The version of every message; a node refuses others.
pub const WIRE_VERSION: u8 = 2;

/// The subjects of one cluster.
#[derive(Debug, Clone)]
pub struct Subjects {
    prefix: String,
}

impl Subjects {
    /// The subjects under `prefix`.
    pub fn new(prefix: &str) -> Subjects {
        Subjects { prefix: prefix.to_owned() }
    }

    /// Requests to `node`.
    pub fn requests(&self, node: &str) -> String {
        format!("{}.node.{node}.req", self.prefix)
    }

    /// Frames for the connections relayed by `origin` (`<node>.<incarnation>`).
    pub fn frames(&self, origin: &str) -> String {
        format!("{}.node.{origin}.frames", self.prefix)
    }

    /// The lobby question every node answers.
    pub fn lobby(&self) -> String {
        format!("{}.lobby", self.prefix)
    }

    /// Tables were handed over.
    pub fn moved(&self) -> String {
        format!("{}.moved", self.prefix)
    }

    /// A claimed table runs on its new owner.
    pub fn claimed(&self) -> String {
        format!("{}.claimed", self.prefix)
    }

    /// Sessions were signed out: every node closes its connections of them.
    pub fn sessions_ended(&self) -> String {
        format!("{}.sessions.ended", self.prefix)
    }

    /// Accounts were suspended or banned: every node closes its
    /// connections of them.
    pub fn accounts_barred(&self) -> String {
        format!("{}.accounts.barred", self.prefix)
    }
}

/// Sessions signed out on one node (their ids, never their tokens).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionsEnded {
    pub sessions: Vec<Uuid>,
}

/// Accounts suspended or banned on one node (their ids).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct AccountsBarred {
    pub accounts: Vec<Uuid>,
}

/// A node runs a table it claimed, under this epoch. Only a hint: a relay
/// that hears it reads the lease row before it moves anything.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct Claimed {
    pub node: String,
    pub table: Uuid,
    pub epoch: u64,
}

/// A request to a node. `origin` is the process holding the client's socket
/// (`<node>.<incarnation>`), `conn` the connection's id there.
#[derive(Serialize, Deserialize, Debug)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Request {
    Attach {
        table: Uuid,
        origin: String,
        conn: u64,
        how: Attach,
        req: Option<u32>,
        quiet: bool,
    },
    Act {
        table: Uuid,
        origin: String,
        conn: u64,
        req: Option<u32>,
        act: Act,
        /// Sent again after the table changed hands.
        #[serde(default)]
        resent: bool,
    },
    Detach {
        table: Uuid,
        origin: String,
        conn: u64,
    },
    Status {
        table: Uuid,
    },
    /// An operator's order (a chat message already removed in the store,
    /// the table closed): the owner hands it to the table.
    Order {
        table: Uuid,
        order: crate::table::OperatorOrder,
    },
    Create {
        name: String,
        options: TableOptions,
        /// The account creating the table signed in: its owner.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_account: Option<Uuid>,
    },
}

/// A node's answer.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Reply {
    /// The connection is attached; `again` attaches it to a later owner.
    Attached {
        role: Role,
        again: Attach,
        epoch: u64,
        /// The account that holds the seat (absent from older nodes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        account: Option<Uuid>,
    },
    /// Refused: the frames to deliver (the error).
    Refused {
        frames: Vec<String>,
    },
    /// The table is not (or no longer) on this node.
    NotHere,
    /// The table took the command.
    Done,
    Status {
        status: Box<TableStatus>,
    },
    Created {
        table: Uuid,
        owner_token: String,
    },
    Error {
        code: ErrorCode,
        message: String,
    },
    Lobby {
        tables: Vec<TableSummary>,
    },
}

/// The envelope of every JSON message.
#[derive(Serialize, Deserialize)]
pub(crate) struct Envelope<T> {
    pub v: u8,
    pub msg: T,
}

/// Encodes a message with the current version.
pub(crate) fn encode<T: Serialize>(msg: T) -> Vec<u8> {
    serde_json::to_vec(&Envelope { v: WIRE_VERSION, msg }).unwrap_or_default()
}

/// Why a message from another node was not read.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// Not JSON of the expected shape.
    #[error("unreadable cluster message: {0}")]
    Unreadable(String),
    /// Another version.
    #[error("cluster message of version {0}, this node speaks {WIRE_VERSION}: run one version per cluster")]
    Version(u8),
    /// A frame message too short for its header.
    #[error("frame message shorter than its header")]
    Short,
}

/// Decodes a message, checking its version.
pub(crate) fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, WireError> {
    #[derive(Deserialize)]
    struct Version {
        v: u8,
    }
    let v: Version = serde_json::from_slice(bytes).map_err(|e| WireError::Unreadable(e.to_string()))?;
    if v.v != WIRE_VERSION {
        return Err(WireError::Version(v.v));
    }
    let e: Envelope<T> = serde_json::from_slice(bytes).map_err(|e| WireError::Unreadable(e.to_string()))?;
    Ok(e.msg)
}

/// What a message on a frames subject is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A frame for the connection.
    Frame,
    /// The owner's table let go of the connection.
    Released,
    /// The owner's table stopped to move to another node: attach again.
    Moved,
    /// The owner's table ended (closed: over, deserted, idle, or by an
    /// operator): every connection of it goes, told so (close code 4003).
    Closed,
}

/// The header of a frames message: kind, version, connection id, epoch,
/// the frame's order (a tag and a number: [`Order::to_wire`]).
const HEADER: usize = 1 + 1 + 8 + 8 + 1 + 8;

/// What the header of a frames message says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// What the message is.
    pub kind: FrameKind,
    /// The connection, as its relay numbers it.
    pub conn: u64,
    /// The epoch of the owner that sent it.
    pub epoch: u64,
    /// Where the frame stands among the connection's frames.
    pub order: Order,
}

/// A frames message: header, then the frame's text.
pub fn frame_message(kind: FrameKind, conn: u64, epoch: u64, frame: Option<&Frame>) -> Vec<u8> {
    let text = frame.map_or(&b""[..], |f| f.text.as_bytes());
    let (tag, n) = frame.map_or(Order::Other, |f| f.order).to_wire();
    let mut out = Vec::with_capacity(HEADER + text.len());
    out.push(match kind {
        FrameKind::Frame => 0,
        FrameKind::Released => 1,
        FrameKind::Moved => 2,
        FrameKind::Closed => 3,
    });
    out.push(WIRE_VERSION);
    out.extend_from_slice(&conn.to_be_bytes());
    out.extend_from_slice(&epoch.to_be_bytes());
    out.push(tag);
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(text);
    out
}

/// Reads a frames message: its header, and the offset of the frame's text.
pub fn read_frame_message(bytes: &[u8]) -> Result<(FrameHeader, usize), WireError> {
    // The version first: another version's header may have another length.
    if bytes.len() >= 2 && bytes[1] != WIRE_VERSION {
        return Err(WireError::Version(bytes[1]));
    }
    if bytes.len() < HEADER {
        return Err(WireError::Short);
    }
    let kind = match bytes[0] {
        0 => FrameKind::Frame,
        1 => FrameKind::Released,
        2 => FrameKind::Moved,
        3 => FrameKind::Closed,
        k => return Err(WireError::Unreadable(format!("frame kind {k}"))),
    };
    let number =
        |at: usize| bytes[at..at + 8].try_into().map(u64::from_be_bytes).map_err(|_| WireError::Short);
    let (conn, epoch) = (number(2)?, number(10)?);
    let order = Order::from_wire(bytes[18], number(19)?)
        .ok_or_else(|| WireError::Unreadable(format!("frame order {}", bytes[18])))?;
    Ok((FrameHeader { kind, conn, epoch, order }, HEADER))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_messages_round_trip_and_short_ones_are_refused() {
        let view = Frame::new("{\"type\":\"view\"}", Order::Snapshot(9 << 32));
        let m = frame_message(FrameKind::Frame, 7, 1 << 40, Some(&view));
        let (h, at) = read_frame_message(&m).unwrap();
        let header =
            FrameHeader { kind: FrameKind::Frame, conn: 7, epoch: 1 << 40, order: Order::Snapshot(9 << 32) };
        assert_eq!(h, header);
        assert_eq!(&m[at..], b"{\"type\":\"view\"}");
        let r = frame_message(FrameKind::Released, 9, 3, None);
        assert_eq!(read_frame_message(&r).unwrap().0.kind, FrameKind::Released);
        let c = frame_message(FrameKind::Closed, 9, 3, None);
        assert_eq!(read_frame_message(&c).unwrap().0.kind, FrameKind::Closed);
        assert_eq!(read_frame_message(&r).unwrap().0.order, Order::Other);
        assert!(matches!(read_frame_message(&m[..5]), Err(WireError::Short)));
        let mut bad = m.clone();
        bad[18] = 9;
        assert!(matches!(read_frame_message(&bad), Err(WireError::Unreadable(_))), "an unknown order");
        bad[1] = 99;
        assert!(matches!(read_frame_message(&bad), Err(WireError::Version(99))));
        bad[0] = 5;
        bad[1] = WIRE_VERSION;
        assert!(read_frame_message(&bad).is_err());
    }

    #[test]
    fn a_frame_message_of_the_first_wire_version_is_refused_as_such() {
        // Version 1: kind, version, conn, epoch, then the text at once.
        let mut old = vec![0, 1];
        old.extend_from_slice(&7u64.to_be_bytes());
        old.extend_from_slice(&3u64.to_be_bytes());
        old.extend_from_slice(b"{\"type\":\"ack\",\"req\":1}");
        assert!(matches!(read_frame_message(&old), Err(WireError::Version(1))));
        assert!(matches!(read_frame_message(&[0, 1]), Err(WireError::Version(1))));
    }

    #[test]
    fn claim_notices_round_trip() {
        let c = Claimed { node: "n2".into(), table: Uuid::nil(), epoch: 7 };
        assert_eq!(decode::<Claimed>(&encode(&c)).unwrap(), c);
        assert!(decode::<Claimed>(b"{\"v\":2,\"msg\":{\"node\":\"n2\"}}").is_err());
        let old = String::from_utf8(encode(&c)).unwrap().replace("\"v\":2", "\"v\":1");
        assert!(matches!(decode::<Claimed>(old.as_bytes()), Err(WireError::Version(1))));
    }

    #[test]
    fn sign_out_notices_keep_their_wire_form() {
        let n = SessionsEnded { sessions: vec![Uuid::nil()] };
        let text = String::from_utf8(encode(&n)).unwrap();
        assert_eq!(text, "{\"v\":2,\"msg\":{\"sessions\":[\"00000000-0000-0000-0000-000000000000\"]}}");
        assert_eq!(decode::<SessionsEnded>(text.as_bytes()).unwrap(), n);
        assert!(decode::<SessionsEnded>(b"{\"v\":2,\"msg\":{\"sessions\":[\"not a uuid\"]}}").is_err());
        let n = AccountsBarred { accounts: vec![Uuid::nil()] };
        assert_eq!(decode::<AccountsBarred>(&encode(&n)).unwrap(), n);
        assert!(decode::<AccountsBarred>(b"{\"v\":2,\"msg\":{\"accounts\":[1]}}").is_err());
    }

    #[test]
    fn requests_round_trip_and_other_versions_are_refused() {
        let r = Request::Act {
            table: Uuid::nil(),
            origin: "b".into(),
            conn: 3,
            req: Some(4),
            act: Act::Play { card: "QH".parse().unwrap(), seq: Some(9) },
            resent: false,
        };
        let bytes = encode(&r);
        let back: Request = decode(&bytes).unwrap();
        match back {
            Request::Act { conn, req, act: Act::Play { card, seq }, .. } => {
                assert_eq!((conn, req, card.to_string(), seq), (3, Some(4), "QH".to_owned(), Some(9)));
            }
            _ => panic!("another request"),
        }
        let text = String::from_utf8(bytes).unwrap().replace("\"v\":2", "\"v\":3");
        assert!(matches!(decode::<Request>(text.as_bytes()), Err(WireError::Version(3))));
        assert!(matches!(
            decode::<Request>(b"{\"v\":2,\"msg\":{\"type\":\"nope\"}}"),
            Err(WireError::Unreadable(_))
        ));
        assert!(decode::<Request>(b"garbage").is_err());
    }

    /// The table's own types are the wire's: their JSON is pinned here,
    /// so that a change of form is seen (and [`WIRE_VERSION`] moves with it).
    #[test]
    fn acts_attaches_and_roles_keep_their_wire_form() {
        use spades_engine::Seat;
        let seed = "ab".repeat(32);
        for (act, json) in [
            (Act::Bid { bid: 0, seq: Some(7) }, r#"{"kind":"bid","bid":0,"seq":7}"#.to_owned()),
            (
                Act::Play { card: "QH".parse().unwrap(), seq: None },
                r#"{"kind":"play","card":"QH"}"#.to_owned(),
            ),
            (Act::TakeOver, r#"{"kind":"take_over"}"#.to_owned()),
            (Act::Leave, r#"{"kind":"leave"}"#.to_owned()),
            (Act::Closing, r#"{"kind":"closing"}"#.to_owned()),
            (Act::Sync, r#"{"kind":"sync"}"#.to_owned()),
            (
                Act::Start { owner_token: Some("t".into()) },
                r#"{"kind":"start","owner_token":"t"}"#.to_owned(),
            ),
            (Act::Start { owner_token: None }, r#"{"kind":"start"}"#.to_owned()),
            (
                Act::AddBots { owner_token: Some("u".into()) },
                r#"{"kind":"add_bots","owner_token":"u"}"#.to_owned(),
            ),
            (
                Act::RemoveBot { owner_token: Some("v".into()), seat: Seat::East },
                r#"{"kind":"remove_bot","owner_token":"v","seat":"east"}"#.to_owned(),
            ),
            (
                Act::MoveSeat { owner_token: Some("w".into()), from: Seat::North, to: Seat::West },
                r#"{"kind":"move_seat","owner_token":"w","from":"north","to":"west"}"#.to_owned(),
            ),
            (
                Act::Invite { owner_token: Some("x".into()), seat: Seat::South },
                r#"{"kind":"invite","owner_token":"x","seat":"south"}"#.to_owned(),
            ),
            (Act::Seed { seed: seed.parse().unwrap() }, format!(r#"{{"kind":"seed","seed":"{seed}"}}"#)),
            (
                Act::CommitSeed { commitment: seed.parse().unwrap() },
                format!(r#"{{"kind":"commit_seed","commitment":"{seed}"}}"#),
            ),
            (Act::Chat { text: "gg".into() }, r#"{"kind":"chat","text":"gg"}"#.to_owned()),
            (Act::Rematch { ready: false }, r#"{"kind":"rematch","ready":false}"#.to_owned()),
        ] {
            assert_eq!(serde_json::to_string(&act).unwrap(), json);
            assert!(serde_json::from_str::<Act>(&json).unwrap() == act, "{json}");
        }
        for (how, json) in [
            (
                Attach::Join { name: "Ann".into(), seat: Some(Seat::East), invite: None, account: None },
                r#"{"kind":"join","name":"Ann","seat":"east"}"#,
            ),
            (
                Attach::Join { name: "Dee".into(), seat: None, invite: Some("code".into()), account: None },
                r#"{"kind":"join","name":"Dee","seat":null,"invite":"code"}"#,
            ),
            (Attach::Resume { token: "tok".into(), account: None }, r#"{"kind":"resume","token":"tok"}"#),
            (
                Attach::Join { name: "Ann".into(), seat: None, invite: None, account: Some(Uuid::nil()) },
                r#"{"kind":"join","name":"Ann","seat":null,"account":"00000000-0000-0000-0000-000000000000"}"#,
            ),
            (
                Attach::Reclaim { account: Uuid::nil() },
                r#"{"kind":"reclaim","account":"00000000-0000-0000-0000-000000000000"}"#,
            ),
            (Attach::Watch { account: None }, r#"{"kind":"watch"}"#),
            (
                Attach::Watch { account: Some(Uuid::nil()) },
                r#"{"kind":"watch","account":"00000000-0000-0000-0000-000000000000"}"#,
            ),
            (
                Attach::Resume { token: "tok".into(), account: Some(Uuid::nil()) },
                r#"{"kind":"resume","token":"tok","account":"00000000-0000-0000-0000-000000000000"}"#,
            ),
        ] {
            assert_eq!(serde_json::to_string(&how).unwrap(), json);
            assert!(serde_json::from_str::<Attach>(json).unwrap() == how, "{json}");
        }
        for (role, json) in [
            (Role::Seat(Seat::North), r#"{"kind":"seat","seat":"north"}"#),
            (Role::Spectator, r#"{"kind":"spectator"}"#),
            (Role::Left(Seat::West), r#"{"kind":"left","seat":"west"}"#),
        ] {
            assert_eq!(serde_json::to_string(&role).unwrap(), json);
            assert_eq!(serde_json::from_str::<Role>(json).unwrap(), role);
        }
    }

    #[test]
    fn secrets_on_the_wire_never_reach_a_debug_string() {
        let seed = "cd".repeat(32);
        let r = Request::Act {
            table: Uuid::nil(),
            origin: "b".into(),
            conn: 3,
            req: None,
            act: Act::Start { owner_token: Some("owner-secret".into()) },
            resent: false,
        };
        let seeded = Act::Seed { seed: seed.parse().unwrap() };
        let joined = Attach::Join {
            name: "Ann".into(),
            seat: None,
            invite: Some("invite-secret".into()),
            account: None,
        };
        let resumed = Attach::Resume { token: "seat-secret".into(), account: None };
        let shown = format!("{r:?} {seeded:?} {joined:?} {resumed:?}");
        for secret in ["owner-secret", seed.as_str(), "invite-secret", "seat-secret"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
}
