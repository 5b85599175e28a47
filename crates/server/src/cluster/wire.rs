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
use spades_engine::{Card, Seat};
use spades_protocol::{ErrorCode, TableOptions, TableStatus, TableSummary};
use uuid::Uuid;

use crate::table::{Act, Attach, Role};

/// The version of every message; a node refuses others.
pub const WIRE_VERSION: u8 = 1;

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
}

/// A node runs a table it claimed, under this epoch. Only a hint: a relay
/// that hears it reads the lease row before it moves anything.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct Claimed {
    pub node: String,
    pub table: Uuid,
    pub epoch: u64,
}

/// How to attach, on the wire.
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum WireAttach {
    Join {
        name: String,
        seat: Option<Seat>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        invite: Option<String>,
    },
    Resume {
        token: String,
    },
    Watch,
}

impl From<Attach> for WireAttach {
    fn from(a: Attach) -> WireAttach {
        match a {
            Attach::Join { name, seat, invite } => WireAttach::Join { name, seat, invite },
            Attach::Resume { token } => WireAttach::Resume { token },
            Attach::Watch => WireAttach::Watch,
        }
    }
}

impl From<WireAttach> for Attach {
    fn from(a: WireAttach) -> Attach {
        match a {
            WireAttach::Join { name, seat, invite } => Attach::Join { name, seat, invite },
            WireAttach::Resume { token } => Attach::Resume { token },
            WireAttach::Watch => Attach::Watch,
        }
    }
}

/// An action, on the wire.
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum WireAct {
    Bid {
        bid: u8,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
    },
    Play {
        card: Card,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
    },
    TakeOver,
    Leave,
    Closing,
    Sync,
    Start {
        owner_token: String,
    },
    AddBots {
        owner_token: String,
    },
    RemoveBot {
        owner_token: String,
        seat: Seat,
    },
    MoveSeat {
        owner_token: String,
        from: Seat,
        to: Seat,
    },
    Invite {
        owner_token: String,
        seat: Seat,
    },
    Seed {
        seed: spades_engine::ClientSeed,
    },
    CommitSeed {
        commitment: spades_engine::Commitment,
    },
    Chat {
        text: String,
    },
    Rematch {
        ready: bool,
    },
}

/// As [`Act`]'s: owner tokens are never printed.
impl std::fmt::Debug for WireAct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&Act::from(self.clone()), f)
    }
}

impl From<Act> for WireAct {
    fn from(a: Act) -> WireAct {
        match a {
            Act::Bid(bid, seq) => WireAct::Bid { bid, seq },
            Act::Play(card, seq) => WireAct::Play { card, seq },
            Act::TakeOver => WireAct::TakeOver,
            Act::Leave => WireAct::Leave,
            Act::Closing => WireAct::Closing,
            Act::Sync => WireAct::Sync,
            Act::Start { owner_token } => WireAct::Start { owner_token },
            Act::AddBots { owner_token } => WireAct::AddBots { owner_token },
            Act::RemoveBot { owner_token, seat } => WireAct::RemoveBot { owner_token, seat },
            Act::MoveSeat { owner_token, from, to } => WireAct::MoveSeat { owner_token, from, to },
            Act::Invite { owner_token, seat } => WireAct::Invite { owner_token, seat },
            Act::Seed(seed) => WireAct::Seed { seed },
            Act::CommitSeed(commitment) => WireAct::CommitSeed { commitment },
            Act::Chat(text) => WireAct::Chat { text },
            Act::Rematch(ready) => WireAct::Rematch { ready },
        }
    }
}

impl From<WireAct> for Act {
    fn from(a: WireAct) -> Act {
        match a {
            WireAct::Bid { bid, seq } => Act::Bid(bid, seq),
            WireAct::Play { card, seq } => Act::Play(card, seq),
            WireAct::TakeOver => Act::TakeOver,
            WireAct::Leave => Act::Leave,
            WireAct::Closing => Act::Closing,
            WireAct::Sync => Act::Sync,
            WireAct::Start { owner_token } => Act::Start { owner_token },
            WireAct::AddBots { owner_token } => Act::AddBots { owner_token },
            WireAct::RemoveBot { owner_token, seat } => Act::RemoveBot { owner_token, seat },
            WireAct::MoveSeat { owner_token, from, to } => Act::MoveSeat { owner_token, from, to },
            WireAct::Invite { owner_token, seat } => Act::Invite { owner_token, seat },
            WireAct::Seed { seed } => Act::Seed(seed),
            WireAct::CommitSeed { commitment } => Act::CommitSeed(commitment),
            WireAct::Chat { text } => Act::Chat(text),
            WireAct::Rematch { ready } => Act::Rematch(ready),
        }
    }
}

/// A connection's role, on the wire.
#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(tag = "kind", content = "seat", rename_all = "snake_case")]
pub(crate) enum WireRole {
    Seat(Seat),
    Spectator,
    Left(Seat),
}

impl From<Role> for WireRole {
    fn from(r: Role) -> WireRole {
        match r {
            Role::Seat(s) => WireRole::Seat(s),
            Role::Spectator => WireRole::Spectator,
            Role::Left(s) => WireRole::Left(s),
        }
    }
}

impl From<WireRole> for Role {
    fn from(r: WireRole) -> Role {
        match r {
            WireRole::Seat(s) => Role::Seat(s),
            WireRole::Spectator => Role::Spectator,
            WireRole::Left(s) => Role::Left(s),
        }
    }
}

/// A request to a node. `origin` is the process holding the client's socket
/// (`<node>.<incarnation>`), `conn` the connection's id there.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Request {
    Attach {
        table: Uuid,
        origin: String,
        conn: u64,
        how: WireAttach,
        req: Option<u32>,
        quiet: bool,
    },
    Act {
        table: Uuid,
        origin: String,
        conn: u64,
        req: Option<u32>,
        act: WireAct,
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
    Create {
        name: String,
        options: TableOptions,
    },
}

/// A node's answer.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Reply {
    /// The connection is attached; `again` attaches it to a later owner.
    Attached {
        role: WireRole,
        again: WireAttach,
        epoch: u64,
    },
    /// Refused: the frames to deliver (the error).
    Refused {
        frames: Vec<String>,
    },
    /// The table is not (or no longer) on this node.
    NotHere,
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
}

/// The header of a frames message: kind, version, connection id, epoch.
const HEADER: usize = 1 + 1 + 8 + 8;

/// A frames message: header, then the frame's text.
pub fn frame_message(kind: FrameKind, conn: u64, epoch: u64, frame: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + frame.len());
    out.push(match kind {
        FrameKind::Frame => 0,
        FrameKind::Released => 1,
        FrameKind::Moved => 2,
    });
    out.push(WIRE_VERSION);
    out.extend_from_slice(&conn.to_be_bytes());
    out.extend_from_slice(&epoch.to_be_bytes());
    out.extend_from_slice(frame);
    out
}

/// Reads a frames message: (kind, connection, epoch, offset of the frame).
pub fn read_frame_message(bytes: &[u8]) -> Result<(FrameKind, u64, u64, usize), WireError> {
    if bytes.len() < HEADER {
        return Err(WireError::Short);
    }
    let kind = match bytes[0] {
        0 => FrameKind::Frame,
        1 => FrameKind::Released,
        2 => FrameKind::Moved,
        k => return Err(WireError::Unreadable(format!("frame kind {k}"))),
    };
    if bytes[1] != WIRE_VERSION {
        return Err(WireError::Version(bytes[1]));
    }
    let conn = u64::from_be_bytes(bytes[2..10].try_into().map_err(|_| WireError::Short)?);
    let epoch = u64::from_be_bytes(bytes[10..18].try_into().map_err(|_| WireError::Short)?);
    Ok((kind, conn, epoch, HEADER))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_messages_round_trip_and_short_ones_are_refused() {
        let m = frame_message(FrameKind::Frame, 7, 1 << 40, b"{\"type\":\"view\"}");
        let (kind, conn, epoch, at) = read_frame_message(&m).unwrap();
        assert_eq!((kind, conn, epoch), (FrameKind::Frame, 7, 1 << 40));
        assert_eq!(&m[at..], b"{\"type\":\"view\"}");
        let r = frame_message(FrameKind::Released, 9, 3, b"");
        assert_eq!(read_frame_message(&r).unwrap().0, FrameKind::Released);
        assert!(matches!(read_frame_message(&m[..5]), Err(WireError::Short)));
        let mut bad = m.clone();
        bad[1] = 99;
        assert!(matches!(read_frame_message(&bad), Err(WireError::Version(99))));
        bad[0] = 5;
        assert!(read_frame_message(&bad).is_err());
    }

    #[test]
    fn claim_notices_round_trip() {
        let c = Claimed { node: "n2".into(), table: Uuid::nil(), epoch: 7 };
        assert_eq!(decode::<Claimed>(&encode(&c)).unwrap(), c);
        assert!(decode::<Claimed>(b"{\"v\":1,\"msg\":{\"node\":\"n2\"}}").is_err());
    }

    #[test]
    fn requests_round_trip_and_other_versions_are_refused() {
        let r = Request::Act {
            table: Uuid::nil(),
            origin: "b".into(),
            conn: 3,
            req: Some(4),
            act: WireAct::Play { card: "QH".parse().unwrap(), seq: Some(9) },
            resent: false,
        };
        let bytes = encode(&r);
        let back: Request = decode(&bytes).unwrap();
        match back {
            Request::Act { conn, req, act: WireAct::Play { card, seq }, .. } => {
                assert_eq!((conn, req, card.to_string(), seq), (3, Some(4), "QH".to_owned(), Some(9)));
            }
            _ => panic!("another request"),
        }
        let text = String::from_utf8(bytes).unwrap().replace("\"v\":1", "\"v\":2");
        assert!(matches!(decode::<Request>(text.as_bytes()), Err(WireError::Version(2))));
        assert!(matches!(
            decode::<Request>(b"{\"v\":1,\"msg\":{\"type\":\"nope\"}}"),
            Err(WireError::Unreadable(_))
        ));
        assert!(decode::<Request>(b"garbage").is_err());
    }

    #[test]
    fn acts_and_attaches_survive_the_wire() {
        for act in [
            Act::Bid(0, Some(7)),
            Act::TakeOver,
            Act::Leave,
            Act::Closing,
            Act::Start { owner_token: "t".into() },
            Act::AddBots { owner_token: "u".into() },
            Act::RemoveBot { owner_token: "v".into(), seat: Seat::East },
            Act::MoveSeat { owner_token: "w".into(), from: Seat::North, to: Seat::West },
            Act::Invite { owner_token: "x".into(), seat: Seat::South },
        ] {
            let wire = WireAct::from(act.clone());
            assert!(WireAct::from(Act::from(wire.clone())) == wire);
        }
        let a = WireAttach::from(Attach::Join { name: "Ann".into(), seat: Some(Seat::East), invite: None });
        assert!(WireAttach::from(Attach::from(a.clone())) == a);
        let invited =
            WireAttach::from(Attach::Join { name: "Dee".into(), seat: None, invite: Some("code".into()) });
        assert!(WireAttach::from(Attach::from(invited.clone())) == invited);
        // A node that knows no invitations reads a join without one.
        let old: WireAttach = serde_json::from_str(r#"{"kind":"join","name":"Ann","seat":null}"#).unwrap();
        assert!(matches!(Attach::from(old), Attach::Join { invite: None, .. }));
        assert_eq!(Role::from(WireRole::from(Role::Left(Seat::West))), Role::Left(Seat::West));
    }
}
