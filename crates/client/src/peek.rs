//! Cheap reading of server frames, for programs that hold many connections
//! (the load generator): the type, the request id and the few fields of a
//! view that say whose turn it is, skipping the rest; the full game view
//! only when it is needed.

use std::borrow::Cow;

use serde::Deserialize;
use spades_engine::{Seat, SeatView};
use spades_protocol::TablePhase;

/// The frame's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `hello`.
    Hello,
    /// `joined`.
    Joined,
    /// `resumed`.
    Resumed,
    /// `watching`.
    Watching,
    /// `ack`.
    Ack,
    /// `error`.
    Error,
    /// `view`.
    View,
    /// `pong`.
    Pong,
    /// A type this version does not know.
    #[serde(other)]
    Other,
}

/// The parts of a frame a load generator needs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Peek<'a> {
    /// The frame's type.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// The request id of a reply.
    #[serde(default)]
    pub req: Option<u32>,
    /// An error's code.
    #[serde(default, borrow)]
    pub code: Option<Cow<'a, str>>,
    /// A view's sequence number.
    #[serde(default)]
    pub seq: Option<u64>,
    /// A view's outline.
    #[serde(default)]
    pub view: Option<ViewOutline>,
}

/// The outline of a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct ViewOutline {
    /// The table's phase.
    pub phase: TablePhase,
    /// The seat of this connection.
    pub you: Option<Seat>,
    /// The game's outline, once started.
    pub game: Option<GameOutline>,
}

/// The outline of a game view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct GameOutline {
    /// The seat on turn.
    pub turn: Option<Seat>,
    /// The current hand.
    pub hand_number: u16,
}

impl ViewOutline {
    /// True when the connection's seat is on turn.
    pub fn my_turn(&self) -> bool {
        self.you.is_some() && self.game.and_then(|g| g.turn) == self.you
    }
}

/// What [`quick_view`] finds in a view frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuickView {
    /// The table's phase is `finished`.
    pub finished: bool,
    /// The seat on turn (`None` before the match or after it).
    pub turn: Option<Seat>,
    /// The current hand (`None` before the match).
    pub hand_number: Option<u16>,
}

impl From<ViewOutline> for QuickView {
    fn from(v: ViewOutline) -> QuickView {
        QuickView {
            finished: v.phase == TablePhase::Finished,
            turn: v.game.and_then(|g| g.turn),
            hand_number: v.game.map(|g| g.hand_number),
        }
    }
}

impl QuickView {
    /// The same of a complete view.
    pub fn of(v: &spades_protocol::TableView) -> QuickView {
        let game = v.game.as_ref();
        QuickView {
            finished: v.phase == TablePhase::Finished,
            turn: game.and_then(|g| g.turn),
            hand_number: game.map(|g| g.hand_number),
        }
    }
}

/// The frame is a `change`, as the server writes it.
pub fn is_change(text: &str) -> bool {
    text.starts_with(r#"{"type":"change","#)
}

/// The frame is an `ack`, as the server writes it.
pub fn is_ack(text: &str) -> bool {
    text.starts_with(r#"{"type":"ack","#)
}

/// A look at a view frame without parsing it: the phase, the seat on turn
/// and the hand number, found by their keys. Works on the compact JSON the
/// server writes (`{"type":"view",…` with no spaces); `None` for anything
/// else, which [`peek`] then reads. Keys cannot be forged by names: a quote
/// inside a JSON string is escaped, so `"turn":` only matches a key, and
/// the first such key of a view is the game's.
pub fn quick_view(text: &str) -> Option<QuickView> {
    if !text.starts_with(r#"{"type":"view","#) {
        return None;
    }
    let after = |key: &str| text.find(key).map(|i| &text[i + key.len()..]);
    let finished = after(r#""phase":"#)?.starts_with(r#""finished""#);
    let turn = match after(r#""turn":"#) {
        None => None,
        Some(rest) if rest.starts_with("null") => None,
        Some(rest) => {
            let name = rest.strip_prefix('"')?.split('"').next()?;
            Some(match name {
                "north" => Seat::North,
                "east" => Seat::East,
                "south" => Seat::South,
                "west" => Seat::West,
                _ => return None,
            })
        }
    };
    let hand_number = match after(r#""hand_number":"#) {
        None => None,
        Some(rest) => {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            Some(rest[..digits].parse().ok()?)
        }
    };
    Some(QuickView { finished, turn, hand_number })
}

/// Reads a frame's outline.
///
/// # Errors
/// When the frame is not a JSON object with a known shape.
pub fn peek(text: &str) -> serde_json::Result<Peek<'_>> {
    serde_json::from_str(text)
}

/// Reads the full game view out of a `view` frame.
///
/// # Errors
/// When the frame is not a view with a game.
pub fn game(text: &str) -> serde_json::Result<SeatView> {
    #[derive(Deserialize)]
    struct Frame {
        view: ViewGame,
    }
    #[derive(Deserialize)]
    struct ViewGame {
        game: SeatView,
    }
    serde_json::from_str::<Frame>(text).map(|f| f.view.game)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spades_engine::{Match, Rules};
    use spades_protocol::{ErrorCode, ServerMessage, TableOptions, TableView};

    fn view_frame(game: Option<SeatView>, you: Option<Seat>) -> String {
        let seat = |s: Seat| spades_protocol::SeatInfo {
            seat: s,
            name: None,
            kind: None,
            status: spades_protocol::SeatStatus::Empty,
            away_until: None,
            timeouts: 0,
        };
        let view = TableView {
            grace_ms: Some(60_000),
            table: uuid::Uuid::nil(),
            name: "t".into(),
            phase: if game.is_some() { TablePhase::Bidding } else { TablePhase::Lobby },
            options: TableOptions::default(),
            you,
            seats: Seat::ALL.map(seat),
            game,
            clock: None,
            last_action: None,
            server_time: 1,
            autopilot_after: 3,
            fair: None,
            rematch: None,
            played_for_you: Vec::new(),
        };
        serde_json::to_string(&ServerMessage::View { seq: 7, view: Box::new(view) }).unwrap()
    }

    #[test]
    fn quick_views_of_finished_matches_and_odd_names() {
        let rules = Rules { match_end: spades_engine::MatchEnd::Hands(5), ..Rules::default() };
        let mut m = Match::new(rules, 9);
        while let Some(s) = m.turn() {
            let a = spades_bots::choose(spades_bots::Strength::Random, &m.view(Some(s)), 1);
            m.apply(s, a).unwrap();
        }
        let mut frame: ServerMessage =
            serde_json::from_str(&view_frame(Some(m.view(Some(Seat::East))), Some(Seat::East))).unwrap();
        if let ServerMessage::View { view, .. } = &mut frame {
            view.phase = TablePhase::Finished;
            view.name = r#"a "turn":"north","phase":"finished" name"#.into();
            view.seats[0].name = Some(r#""hand_number":99"#.into());
        }
        let text = serde_json::to_string(&frame).unwrap();
        let q = quick_view(&text).unwrap();
        assert!(q.finished);
        assert_eq!(q.turn, None);
        assert_eq!(q.hand_number, Some(m.hand_number()));
        assert_eq!(q, QuickView::from(peek(&text).unwrap().view.unwrap()));

        // Mid-match, the names cannot pass for keys either.
        let m = Match::new(Rules::default(), 10);
        let turn = m.turn().unwrap();
        let mut frame: ServerMessage =
            serde_json::from_str(&view_frame(Some(m.view(Some(turn))), Some(turn))).unwrap();
        if let ServerMessage::View { view, .. } = &mut frame {
            view.name = format!(
                r#"x","turn":"{}","phase":"finished","hand_number":7,"#,
                turn.next().name().to_lowercase()
            );
        }
        let text = serde_json::to_string(&frame).unwrap();
        assert_eq!(
            quick_view(&text).unwrap(),
            QuickView { finished: false, turn: Some(turn), hand_number: Some(1) }
        );
    }

    #[test]
    fn outlines_of_views_and_replies() {
        let m = Match::new(Rules::default(), 3);
        let turn = m.turn().unwrap();
        let text = view_frame(Some(m.view(Some(turn))), Some(turn));
        let p = peek(&text).unwrap();
        assert_eq!((p.kind, p.seq), (Kind::View, Some(7)));
        let v = p.view.unwrap();
        assert!(v.my_turn());
        assert_eq!(v.game.unwrap().hand_number, 1);
        assert_eq!(game(&text).unwrap(), m.view(Some(turn)));

        let quick = quick_view(&text).unwrap();
        assert_eq!(quick, QuickView { finished: false, turn: Some(turn), hand_number: Some(1) });
        assert_eq!(quick, QuickView::from(v));
        assert_eq!(
            quick_view(&view_frame(None, Some(Seat::North))).unwrap(),
            QuickView { finished: false, turn: None, hand_number: None }
        );
        assert!(quick_view(r#"{"type":"ack","req":1}"#).is_none());
        assert!(is_ack(r#"{"type":"ack","req":1}"#));
        assert!(quick_view(r#"{"type": "view", "seq": 1}"#).is_none(), "only the compact form");

        let other = view_frame(Some(m.view(Some(turn.next()))), Some(turn.next()));
        assert!(!peek(&other).unwrap().view.unwrap().my_turn());
        let lobby = view_frame(None, Some(Seat::North));
        assert!(!peek(&lobby).unwrap().view.unwrap().my_turn());

        let err = serde_json::to_string(&ServerMessage::Error {
            req: Some(4),
            code: ErrorCode::MustFollowSuit,
            message: "you must \"follow\"".into(),
        })
        .unwrap();
        let p = peek(&err).unwrap();
        assert_eq!((p.kind, p.req, p.code.as_deref()), (Kind::Error, Some(4), Some("must_follow_suit")));
        let p = peek(r#"{"type":"ack","req":9}"#).unwrap();
        assert_eq!((p.kind, p.req), (Kind::Ack, Some(9)));
        assert_eq!(peek(r#"{"type":"future"}"#).unwrap().kind, Kind::Other);
    }
}
