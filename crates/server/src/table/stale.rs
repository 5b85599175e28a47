//! A move is for one turn. A client sends the `seq` of the frame its player
//! chose a bid or card from; when a bid or card was applied at the table in
//! a later frame (by anyone: a timeout and the autopilot included), the move
//! was chosen for a table that is gone and is refused as `stale`, saying
//! what happened instead. Frames that are not moves (chat, presence, clocks,
//! seeds) never make a move stale.

use std::collections::VecDeque;

use spades_engine::{Action, Card, Seat, Suit};
use spades_protocol::{ActionSource, LastAction};

use crate::storage::ActionRecord;

/// Moves remembered for the refusal's words (a trick and a half).
const REMEMBERED: usize = 6;

/// The moves of the table and the frames that showed them.
#[derive(Debug, Default)]
pub(super) struct Turns {
    /// The latest moves, oldest first, each with its frame's `seq`.
    recent: VecDeque<(u64, LastAction)>,
    /// The `seq` of the frame that showed the latest move (0: none yet).
    last: u64,
}

impl Turns {
    /// The moves of a stored log, whose frames up to now were numbered
    /// below `base`. Actions stored without their `seq` (before moves
    /// carried it) count as shown at `base - 1`: every older frame is then
    /// stale, as it may have been.
    pub(super) fn restored(actions: &[ActionRecord], base: u64) -> Turns {
        let mut turns = Turns::default();
        let start = actions.len().saturating_sub(REMEMBERED);
        for a in &actions[start..] {
            let seq = if a.seq == 0 { base.saturating_sub(1) } else { a.seq };
            turns.made(seq, LastAction { seat: a.seat, action: a.action, source: a.source });
        }
        turns
    }

    /// A move was applied and shown in the frame `seq`.
    pub(super) fn made(&mut self, seq: u64, action: LastAction) {
        if self.recent.len() >= REMEMBERED {
            self.recent.pop_front();
        }
        self.recent.push_back((seq, action));
        self.last = self.last.max(seq);
    }

    /// The latest move of `seat` remembered.
    pub(super) fn last_of(&self, seat: Seat) -> Option<&LastAction> {
        self.recent.iter().rev().map(|(_, a)| a).find(|a| a.seat == seat)
    }

    /// Why a move `seat` chose from the frame `seq` is stale, if it is.
    pub(super) fn stale(&self, seq: u64, seat: Seat) -> Option<String> {
        if self.last <= seq {
            return None;
        }
        let since: Vec<&LastAction> = self.recent.iter().filter(|(s, _)| *s > seq).map(|(_, a)| a).collect();
        // The player's own turn taken by the table says most.
        if let Some(own) = since.iter().rev().find(|a| a.seat == seat) {
            let what = done(own.action);
            return Some(match own.source {
                ActionSource::Timeout => format!("the table {what} for you when your time ran out"),
                ActionSource::Autopilot => format!("the autopilot {what} for you"),
                ActionSource::Bot => format!("a bot {what} for you"),
                ActionSource::Player => format!("you {what} already (from another window)"),
            });
        }
        let Some(latest) = since.last() else {
            return Some("the table has moved on since you chose: look again".to_owned());
        };
        let who = latest.seat.name();
        Some(if since.len() == 1 {
            format!("{who} {} after you chose: look again", done(latest.action))
        } else {
            format!(
                "{} moves were made after you chose (the last: {who} {}): look again",
                since.len(),
                done(latest.action)
            )
        })
    }
}

/// A move in words: "played 4♣", "bid 3", "bid nil".
fn done(action: Action) -> String {
    match action {
        Action::Bid(0) => "bid nil".to_owned(),
        Action::Bid(n) => format!("bid {n}"),
        Action::Play(card) => format!("played {}", spoken(card)),
    }
}

/// A card as a player reads it: "10♥", "K♠".
pub(super) fn spoken(card: Card) -> String {
    let rank = match card.rank().letter() {
        'T' => "10".to_owned(),
        c => c.to_string(),
    };
    let suit = match card.suit() {
        Suit::Clubs => '♣',
        Suit::Diamonds => '♦',
        Suit::Hearts => '♥',
        Suit::Spades => '♠',
    };
    format!("{rank}{suit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(seat: Seat, card: &str, source: ActionSource) -> LastAction {
        LastAction { seat, action: Action::Play(card.parse().unwrap()), source }
    }

    #[test]
    fn only_moves_after_the_frame_make_it_stale() {
        let mut t = Turns::default();
        assert_eq!(t.stale(0, Seat::North), None);
        t.made(10, play(Seat::East, "KH", ActionSource::Player));
        assert_eq!(t.stale(10, Seat::South), None, "chosen from the frame of the last move");
        assert_eq!(t.stale(14, Seat::South), None, "frames of presence or chat since");
        assert_eq!(t.stale(9, Seat::South).unwrap(), "East played K♥ after you chose: look again");
    }

    #[test]
    fn the_refusal_says_what_the_table_did() {
        let mut t = Turns::default();
        t.made(20, play(Seat::North, "4C", ActionSource::Timeout));
        t.made(21, play(Seat::East, "TC", ActionSource::Bot));
        assert_eq!(t.stale(19, Seat::North).unwrap(), "the table played 4♣ for you when your time ran out");
        assert_eq!(
            t.stale(19, Seat::South).unwrap(),
            "2 moves were made after you chose (the last: East played 10♣): look again"
        );
        t.made(22, LastAction { seat: Seat::South, action: Action::Bid(0), source: ActionSource::Autopilot });
        assert_eq!(t.stale(21, Seat::South).unwrap(), "the autopilot bid nil for you");
    }

    #[test]
    fn a_restored_log_keeps_its_frames() {
        let a = |index, seq, source| ActionRecord {
            index,
            seat: Seat::West,
            action: Action::Bid(3),
            source,
            at_ms: 0,
            seq,
        };
        let t = Turns::restored(&[a(0, 7, ActionSource::Player), a(1, 9, ActionSource::Timeout)], 1 << 32);
        assert_eq!(t.stale(9, Seat::West), None, "nothing moved since the last stored move");
        assert_eq!(t.stale(8, Seat::West).unwrap(), "the table bid 3 for you when your time ran out");
        // A move stored before seqs were: every earlier frame is stale.
        let old = Turns::restored(&[a(0, 0, ActionSource::Player)], 1 << 32);
        assert!(old.stale((1 << 32) - 2, Seat::North).is_some());
        assert_eq!(old.stale(1 << 32, Seat::North), None);
    }
}
