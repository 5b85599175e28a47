//! Match records and restoring matches, both built by replaying the stored
//! action log through the engine.

use spades_engine::{Action, BySeat, Match, ReplayError, Seat};
use spades_protocol::{
    ActionSource, Fairness, HandInProgress, HandRecord, MatchRecord, MatchSummary, PlayRecord, PlayedForYou,
    RecordSeat, SeatKind, SeatPlayer,
};

use crate::storage::{ActionRecord, StorageError, StoredTable};
use crate::token::TokenHash;

/// A seat restored from storage.
#[derive(Debug, Clone)]
pub struct RestoredSeat {
    /// Display name.
    pub name: String,
    /// Person or bot.
    pub kind: SeatKind,
    /// Token hash (people).
    pub token: Option<TokenHash>,
    /// The account of a signed-in player.
    pub account: Option<uuid::Uuid>,
    /// Left on purpose.
    pub left: bool,
    /// The autopilot was playing the seat.
    pub autopilot: bool,
    /// Timeouts in a row.
    pub timeouts: u8,
    /// The grace had run out: a bot was playing the seat.
    pub grace_expired: bool,
    /// Who played the seat, once it changed hands during the match.
    pub players: Vec<SeatPlayer>,
    /// The moves the table made for its person since their last own move.
    pub played_for_you: Vec<PlayedForYou>,
}

/// Moves in every hand: four bids and fifty-two cards.
const MOVES_PER_HAND: usize = 56;

/// The moves the table made for `seat` (a timeout, the autopilot, the bot)
/// in hand `hand` since its person's last own move, from the stored log,
/// oldest first.
pub fn played_for_you(actions: &[ActionRecord], seat: Seat, hand: u16) -> Vec<PlayedForYou> {
    let since: Vec<PlayedForYou> = actions
        .iter()
        .rev()
        .filter(|a| a.seat == seat)
        .take_while(|a| a.source != ActionSource::Player)
        .map(|a| PlayedForYou {
            hand_number: u16::try_from(a.index / MOVES_PER_HAND + 1).unwrap_or(u16::MAX),
            action: a.action,
            source: a.source,
            seq: a.seq,
        })
        .take_while(|p| p.hand_number == hand)
        .collect();
    since.into_iter().rev().collect()
}

/// What each seat's person finds the table made for them in the hand being
/// played (`game`, the replayed match), from a stored table: nothing for a
/// bot, for one who left, or for a person invited to the seat during this
/// hand (the log does not say which of its moves came after they took it).
pub fn played_for_seats(stored: &StoredTable, game: Option<&Match>) -> BySeat<Vec<PlayedForYou>> {
    let Some(hand) = game.map(Match::hand_number) else { return BySeat(Default::default()) };
    BySeat(Seat::ALL.map(|seat| match &stored.seats[seat] {
        Some(s) if s.kind == SeatKind::Human && !s.left => {
            if s.players.len() > 1 && s.players.last().is_some_and(|p| p.from_hand >= hand) {
                return Vec::new();
            }
            played_for_you(&stored.actions, seat, hand)
        }
        _ => Vec::new(),
    }))
}

/// A table restored from storage: its seats and the match rebuilt by
/// replaying its log.
pub struct Restored {
    /// The seats.
    pub seats: BySeat<Option<RestoredSeat>>,
    /// The match, if it had started.
    pub game: Option<Match>,
    /// How many times the table has been restored (at least 1): view
    /// sequence numbers start at `epoch << 32`, so they keep growing.
    pub epoch: u64,
    /// The last few moves of the log, with the frames that showed them
    /// (which moves a client chose from an older frame).
    pub recent: Vec<ActionRecord>,
    /// A fair match's commitments to its players' seeds.
    pub commitments: [Option<spades_engine::Commitment>; 4],
}

impl std::fmt::Debug for Restored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The match holds the seed and every hand: not printed.
        f.debug_struct("Restored")
            .field("seats", &self.seats)
            .field("started", &self.game.is_some())
            .field("epoch", &self.epoch)
            .field("moves", &self.recent.len())
            .finish()
    }
}

/// Replays a stored table's log.
///
/// # Errors
/// The first move the engine refuses, as a corrupt record.
pub fn replay(stored: &StoredTable) -> Result<Option<Match>, StorageError> {
    let Some(mut m) = dealt(stored)? else {
        if !stored.actions.is_empty() {
            return Err(corrupt(stored, "actions stored for a match that never started".into()));
        }
        return Ok(None);
    };
    for (index, a) in stored.actions.iter().enumerate() {
        m.apply(a.seat, a.action).map_err(|error| {
            let e = ReplayError { index, seat: a.seat, action: a.action, error };
            corrupt(stored, format!("the log does not replay: {e}"))
        })?;
    }
    Ok(Some(m))
}

/// The stored match as first dealt, before any move: from its fair seeds,
/// or from its seed alone for a match dealt before fair deals.
fn dealt(stored: &StoredTable) -> Result<Option<Match>, StorageError> {
    let rules = stored.table.options.rules;
    match (&stored.fair, stored.seed) {
        (None, None) => Ok(None),
        (None, Some(seed)) => Ok(Some(Match::new(rules, seed))),
        (Some(fair), _) => {
            let seeds = fair.seeds(stored.table.id).map_err(|reason| corrupt(stored, reason))?;
            Ok(Some(Match::fair(rules, seeds)))
        }
    }
}

/// What anybody may know of a stored match's fair deals: the server seed
/// only once the match is over.
fn fairness(stored: &StoredTable, finished: bool) -> Option<Fairness> {
    stored.fair.as_ref().map(|f| Fairness {
        version: f.version,
        commitment: f.commitment,
        client_seeds: f.client_seeds,
        client_commitments: f.client_commitments,
        fixed: true,
        server_seed: finished.then_some(f.server_seed),
        reveal_by: None,
    })
}

fn corrupt(stored: &StoredTable, reason: String) -> StorageError {
    StorageError::Corrupt { table: stored.table.id.to_string(), reason }
}

/// What a table's task needs to resume: seats and the replayed match.
///
/// # Errors
/// A corrupt record (bad token hash, a log that does not replay).
pub fn restore(stored: &StoredTable) -> Result<(Restored, TokenHash), StorageError> {
    let owner = TokenHash::from_hex(&stored.table.owner_hash)
        .ok_or_else(|| corrupt(stored, "unreadable owner token hash".into()))?;
    let game = replay(stored)?;
    let mut played = played_for_seats(stored, game.as_ref());
    let mut seats: BySeat<Option<RestoredSeat>> = BySeat([None, None, None, None]);
    for seat in Seat::ALL {
        let Some(s) = &stored.seats[seat] else { continue };
        let token = match &s.token_hash {
            Some(h) => Some(
                TokenHash::from_hex(h).ok_or_else(|| corrupt(stored, format!("{seat}: bad token hash")))?,
            ),
            None => None,
        };
        if s.kind == SeatKind::Human && token.is_none() {
            return Err(corrupt(stored, format!("{seat}: a player without a token")));
        }
        seats[seat] = Some(RestoredSeat {
            name: s.name.clone(),
            kind: s.kind,
            token,
            account: s.account,
            left: s.left,
            autopilot: s.autopilot,
            timeouts: s.timeouts,
            grace_expired: s.grace_expired,
            players: s.players.clone(),
            played_for_you: std::mem::take(&mut played[seat]),
        });
    }
    if game.is_some() && seats.0.iter().any(Option::is_none) {
        return Err(corrupt(stored, "a started match with an empty seat".into()));
    }
    // The epoch is counted up by the caller when it restores the table.
    let recent = stored.actions[stored.actions.len().saturating_sub(8)..].to_vec();
    let commitments = stored.fair.as_ref().map_or([None; 4], |f| f.client_commitments);
    Ok((Restored { seats, game, epoch: stored.epoch, recent, commitments }, owner))
}

fn record_seats(stored: &StoredTable) -> Vec<RecordSeat> {
    Seat::ALL
        .into_iter()
        .filter_map(|seat| {
            stored.seats[seat].as_ref().map(|s| RecordSeat {
                seat,
                name: s.name.clone(),
                kind: s.kind,
                account: s.account,
                left: s.left,
                players: s.players.clone(),
            })
        })
        .collect()
}

/// A match's public record: every finished hand with its cards; of a running
/// hand only the bids and tricks so far; the seed once the match is over.
///
/// # Errors
/// A corrupt record.
pub fn record(stored: &StoredTable) -> Result<MatchRecord, StorageError> {
    let game = replay(stored)?;
    let mut hands = Vec::new();
    let mut current_hand = None;
    if let (Some(m), Some(mut walk)) = (&game, dealt(stored)?) {
        // Walk the log again to split it into hands.
        let mut plays = Vec::new();
        let mut bid_sources = [ActionSource::Player; 4];
        for a in &stored.actions {
            let hand = walk.hand_number();
            if walk.apply(a.seat, a.action).is_err() {
                return Err(corrupt(stored, format!("action {} does not replay", a.index)));
            }
            match a.action {
                Action::Bid(_) => bid_sources[usize::from(a.seat.index())] = a.source,
                Action::Play(card) => {
                    plays.push(PlayRecord { seat: a.seat, card, source: a.source, at: a.at_ms })
                }
            }
            if walk.results().len() >= usize::from(hand) {
                if let Some(result) = walk.results().last() {
                    hands.push(HandRecord {
                        result: result.clone(),
                        bid_sources,
                        plays: std::mem::take(&mut plays),
                    });
                }
                bid_sources = [ActionSource::Player; 4];
            }
        }
        if m.result().is_none() {
            let h = m.hand();
            current_hand = Some(HandInProgress {
                hand_number: m.hand_number(),
                bids: h.bids().0,
                tricks_won: h.tricks_won().0,
            });
        }
    }
    let finished = game.as_ref().is_some_and(|m| m.result().is_some());
    Ok(MatchRecord {
        table: stored.table.id,
        name: stored.table.name.clone(),
        options: stored.table.options,
        seats: record_seats(stored),
        created_at: stored.table.created_at_ms,
        finished,
        hands,
        current_hand,
        result: game.as_ref().and_then(|m| m.result().copied()),
        scores: game.as_ref().map_or([0, 0], |m| m.scores().0),
        actions: stored.actions.len(),
        seed: if finished { stored.seed } else { None },
        fair: fairness(stored, finished),
        abandoned: stored.abandoned(),
    })
}

/// A line of the recent-matches list.
pub fn summary(stored: &StoredTable) -> MatchSummary {
    let game = replay(stored).ok().flatten();
    MatchSummary {
        table: stored.table.id,
        name: stored.table.name.clone(),
        created_at: stored.table.created_at_ms,
        seats: record_seats(stored),
        finished: game.as_ref().is_some_and(|m| m.result().is_some()),
        hands_played: game.as_ref().map_or(0, |m| m.results().len()),
        scores: game.as_ref().map_or([0, 0], |m| m.scores().0),
        result: game.as_ref().and_then(|m| m.result().copied()),
        abandoned: stored.abandoned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(index: usize, seat: Seat, action: &str, source: ActionSource) -> ActionRecord {
        let action = match action.parse::<u8>() {
            Ok(bid) => Action::Bid(bid),
            Err(_) => Action::Play(action.parse().unwrap()),
        };
        ActionRecord { index, seat, action, source, at_ms: 0, seq: 100 + index as u64 }
    }

    #[test]
    fn a_restart_finds_what_the_table_played_for_a_seat_since_its_own_move() {
        use ActionSource::{Autopilot, Bot, Player, Timeout};
        let log = [
            act(0, Seat::North, "3", Timeout),
            act(1, Seat::East, "2", Player),
            act(2, Seat::North, "4C", Player),
            act(3, Seat::East, "5C", Timeout),
            act(4, Seat::North, "9D", Timeout),
            act(5, Seat::East, "6C", Bot),
            act(6, Seat::North, "KH", Autopilot),
        ];
        let for_north = played_for_you(&log, Seat::North, 1);
        let seen: Vec<(Action, ActionSource, u64)> =
            for_north.iter().map(|p| (p.action, p.source, p.seq)).collect();
        assert_eq!(
            seen,
            [
                (Action::Play("9D".parse().unwrap()), Timeout, 104),
                (Action::Play("KH".parse().unwrap()), Autopilot, 106)
            ]
        );
        assert!(for_north.iter().all(|p| p.hand_number == 1));
        assert_eq!(played_for_you(&log, Seat::East, 1).len(), 2, "its timeout and its bot's card");
        assert!(played_for_you(&log, Seat::South, 1).is_empty());
        // Only the hand being played counts: the moves of hand 1 are over
        // once hand 2 is dealt.
        assert!(played_for_you(&log, Seat::North, 2).is_empty());
        let later = [act(0, Seat::West, "2", Timeout), act(MOVES_PER_HAND, Seat::West, "3", Timeout)];
        let for_west = played_for_you(&later, Seat::West, 2);
        assert_eq!(for_west.len(), 1);
        assert_eq!((for_west[0].hand_number, for_west[0].action), (2, Action::Bid(3)));
    }
}
