//! Change frames: what the table tells its connections after a change,
//! worked out against what it told them before.
//!
//! [`Sent`] is the small part of the table's state that the last frame
//! showed (seats, clock, phase, the game's progress). After a change the
//! table compares the new [`Sent`] with the old one: one move, a new hand, a
//! seat's status, a clock become a [`Delta`], a [`Change`] for everybody and
//! the little that differs per seat (the legal moves of the seat on turn, a
//! new hand's cards). Anything it cannot say as a change (a match starting,
//! several moves at once) makes it send snapshots instead.

use serde::Serialize;
use spades_engine::{Action, CardSet, Legal, Match, Seat, Trick};
use spades_protocol::{
    Change, Clock, ClockChange, Deal, Fairness, LastAction, PlayedForYou, Rematch, SeatInfo, TablePhase,
};

/// What the last frame showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Sent {
    pub(super) seats: [SeatInfo; 4],
    pub(super) clock: Option<Clock>,
    pub(super) phase: TablePhase,
    pub(super) fair: Option<Fairness>,
    pub(super) rematch: Option<Rematch>,
    pub(super) last_action: Option<LastAction>,
    pub(super) game: Option<Progress>,
    /// Per seat: the moves the table made for it (its own view's).
    pub(super) played_for_you: [Vec<PlayedForYou>; 4],
}

/// How far the match has gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Progress {
    moves: usize,
    hand_number: u16,
    results: usize,
    trick: Trick,
    turn: Option<Seat>,
    /// The legal moves of the seat on turn.
    legal: Legal,
    over: bool,
}

impl Progress {
    pub(super) fn of(m: &Match) -> Progress {
        let turn = m.turn();
        Progress {
            moves: m.moves().len(),
            hand_number: m.hand_number(),
            results: m.results().len(),
            trick: *m.hand().trick(),
            turn,
            legal: if turn.is_some() { m.legal_moves() } else { Legal::None },
            over: m.result().is_some(),
        }
    }

    fn legal_of(&self, seat: Seat) -> Legal {
        if self.turn == Some(seat) { self.legal } else { Legal::None }
    }
}

/// A change for everybody, and what each seat gets besides.
#[derive(Debug)]
pub(super) struct Delta {
    pub(super) change: Change,
    /// Per seat: its legal moves, where they changed.
    pub(super) legal: [Option<Legal>; 4],
    /// A new hand was dealt: each seat gets its cards.
    pub(super) deal: bool,
    /// Per seat: the moves the table made for it, where they changed.
    pub(super) played_for_you: [Option<Vec<PlayedForYou>>; 4],
}

/// The part of a seat's change frame that only that seat receives.
#[derive(Serialize)]
pub(super) struct SeatPart {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) hand: Option<CardSet>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) legal: Option<Legal>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) played_for_you: Option<Vec<PlayedForYou>>,
}

impl Delta {
    /// What `seat` gets besides the common change, if anything.
    pub(super) fn seat_part(&self, seat: Seat, m: Option<&Match>) -> Option<SeatPart> {
        let legal = self.legal[usize::from(seat.index())];
        let hand = if self.deal { m.map(|m| m.hand().cards(seat)) } else { None };
        let played_for_you = self.played_for_you[usize::from(seat.index())].clone();
        (legal.is_some() || hand.is_some() || played_for_you.is_some()).then_some(SeatPart {
            hand,
            legal,
            played_for_you,
        })
    }
}

impl Sent {
    /// The change from `self` to `now`, or `None` when only snapshots can
    /// say it. `m` is the match `now` was taken from, `latest` the last move
    /// made (with who chose it), even one the view no longer shows.
    pub(super) fn delta(
        &self,
        now: &Sent,
        m: Option<&Match>,
        latest: Option<LastAction>,
        server_time: u64,
    ) -> Option<Delta> {
        let mut change = Change { server_time, ..Change::default() };
        let mut legal = [None; 4];
        let mut deal = false;
        match (&self.game, &now.game, m) {
            (None, None, _) => {}
            (Some(a), Some(b), Some(m)) => {
                if b.moves != a.moves {
                    if b.moves != a.moves + 1 {
                        return None;
                    }
                    let last = *m.moves().last()?;
                    if b.hand_number != a.hand_number {
                        // The move ended a hand and the next is dealt: its
                        // card is not shown (it may be in a new hand now).
                        if b.hand_number != a.hand_number + 1 || b.results != a.results + 1 || b.over {
                            return None;
                        }
                        change.hand_scored = m.results().last().cloned();
                        change.deal = Some(Deal { hand_number: b.hand_number, dealer: m.hand().dealer() });
                        deal = true;
                    } else {
                        let latest = latest.filter(|l| l.seat == last.seat && l.action == last.action)?;
                        change.action = Some(latest);
                        if let Action::Play(card) = last.action {
                            let mut cards = a.trick.cards().to_vec();
                            cards.push(card);
                            change.trick_won = Trick::from_cards(a.trick.leader(), &cards)?.winner();
                        }
                        if b.results != a.results {
                            if b.results != a.results + 1 {
                                return None;
                            }
                            change.hand_scored = m.results().last().cloned();
                        }
                        if b.over && !a.over {
                            change.result = m.result().copied();
                        }
                    }
                } else if b.hand_number != a.hand_number || b.results != a.results || b.over != a.over {
                    return None;
                }
                if b.turn != a.turn {
                    change.turn = Some(b.turn);
                }
                for seat in Seat::ALL {
                    let (before, after) = (a.legal_of(seat), b.legal_of(seat));
                    if before != after {
                        legal[usize::from(seat.index())] = Some(after);
                    }
                }
            }
            _ => return None,
        }
        // The view's last action must come out as the table has it.
        let expected = if change.deal.is_some() || change.result.is_some() {
            None
        } else {
            change.action.or(self.last_action)
        };
        if expected != now.last_action {
            return None;
        }
        if now.phase != self.phase {
            change.phase = Some(now.phase);
        }
        change.seats =
            now.seats.iter().zip(&self.seats).filter(|(n, o)| n != o).map(|(n, _)| n.clone()).collect();
        if now.clock != self.clock {
            change.clock = Some(now.clock.map(|c| ClockChange::between(self.clock, c)));
        }
        if now.fair != self.fair {
            change.fair = Some(now.fair.clone());
        }
        if now.rematch != self.rematch {
            change.rematch = Some(now.rematch);
        }
        let played_for_you = std::array::from_fn(|i| {
            (now.played_for_you[i] != self.played_for_you[i]).then(|| now.played_for_you[i].clone())
        });
        Some(Delta { change, legal, deal, played_for_you })
    }
}
