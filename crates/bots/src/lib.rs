//! Computer players for partnership Spades.
//!
//! Three strengths behind one small API:
//!
//! - [`Strength::Random`]: a uniformly random legal card, bids 1–4. A smoke
//!   test opponent, not for real tables.
//! - [`Strength::Rule`]: a fast, deterministic rule bot (trick-counting
//!   bids, nil and cover play, nil attacks, second hand low / third hand
//!   high, ducking bags once the contract is safe, sets when they pay).
//!   Well under 50 µs a decision.
//! - [`Strength::Search`]: determinised Monte Carlo search over deals
//!   consistent with what the seat knows, with bid inference, rule-bot
//!   playouts and simulated bidding, under a hard time and iteration
//!   [`Budget`]. The default takeover bot.
//!
//! A bot decides from a [`SeatView`] alone, the redacted view the engine
//! gives the seat: it never sees another seat's cards. It keeps no state
//! between decisions (voids, bids and scores are re-derived from the view
//! each time), so it can take over a seat mid-hand and hand it back.
//!
//! ```
//! use spades_bots::{Strength, choose};
//! use spades_engine::{Match, Rules};
//!
//! let mut m = Match::new(Rules::default(), 7);
//! while let Some(seat) = m.turn() {
//!     let action = choose(Strength::Rule, &m.view(Some(seat)), 42);
//!     m.apply(seat, action).expect("bots only make legal moves");
//!     if m.results().len() == 1 {
//!         break;
//!     }
//! }
//! assert_eq!(m.results().len(), 1);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod eval;
mod know;
mod rng;
mod rule;
mod sample;
mod search;
mod sim;
mod solver;
pub mod tournament;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use spades_engine::{Action, Legal, SeatView};

pub use search::Budget;

/// How strong a bot plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strength {
    /// Uniformly random legal cards and a random bid of 1–4.
    Random,
    /// The rule bot: fast and deterministic.
    Rule,
    /// The search bot under [`Budget::DEFAULT`]: the default for timeouts,
    /// autopilot, takeovers and filled seats.
    #[default]
    Search,
}

impl Strength {
    /// All strengths, weakest first.
    pub const ALL: [Strength; 3] = [Strength::Random, Strength::Rule, Strength::Search];

    /// The lower-case name (`"random"`, `"rule"`, `"search"`).
    pub const fn name(self) -> &'static str {
        match self {
            Strength::Random => "random",
            Strength::Rule => "rule",
            Strength::Search => "search",
        }
    }
}

impl std::fmt::Display for Strength {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Strength {
    type Err = String;

    fn from_str(s: &str) -> Result<Strength, String> {
        Strength::ALL
            .into_iter()
            .find(|st| st.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown bot strength {s:?} (expected random, rule or search)"))
    }
}

/// A computer player.
pub trait Bot {
    /// The action for the viewer of `view`, who must be on turn. Always a
    /// legal action when `view.legal` is not [`Legal::None`].
    fn choose(&mut self, view: &SeatView) -> Action;
}

/// A bot of a given strength and search budget. Stateless between
/// decisions: its only field besides the configuration is a seed, mixed with
/// the position so that the same view always gets the same decision (when
/// the time limit does not bind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Player {
    /// How it plays.
    pub strength: Strength,
    /// The search budget (used by [`Strength::Search`] only).
    pub budget: Budget,
    /// Seed for its random choices.
    pub seed: u64,
}

impl Player {
    /// A bot of `strength` with the default budget.
    pub fn new(strength: Strength, seed: u64) -> Player {
        Player { strength, budget: Budget::DEFAULT, seed }
    }
}

impl Bot for Player {
    fn choose(&mut self, view: &SeatView) -> Action {
        let seed = rng::mix(self.seed, position_key(view));
        decide_with(self.strength, &self.budget, view, seed).unwrap_or_else(|| placeholder(view))
    }
}

/// A number identifying the decision point of a view (hand, bids made,
/// cards played), to vary a bot's seed from one decision to the next.
fn position_key(view: &SeatView) -> u64 {
    let bids = view.bids.0.iter().filter(|b| b.is_some()).count() as u64;
    (u64::from(view.hand_number) << 16) | (bids << 8) | u64::from(view.played.len())
}

/// The action a bot of `strength` takes for the viewer of `view`, with the
/// default budget. Never panics; always legal when `view.legal` is not
/// [`Legal::None`] (otherwise the returned action is meaningless: nobody
/// asked this seat to move).
pub fn choose(strength: Strength, view: &SeatView, seed: u64) -> Action {
    decide_with(strength, &Budget::DEFAULT, view, seed).unwrap_or_else(|| placeholder(view))
}

/// Like [`choose`], but `None` when the viewer has no legal move.
pub fn decide(strength: Strength, view: &SeatView, seed: u64) -> Option<Action> {
    decide_with(strength, &Budget::DEFAULT, view, seed)
}

/// Like [`decide`], with an explicit search budget.
pub fn decide_with(strength: Strength, budget: &Budget, view: &SeatView, seed: u64) -> Option<Action> {
    let safe = safe_action(view)?;
    let start = Instant::now();
    // Defence in depth: a bug in a heuristic must never take a table down.
    let chosen = catch_unwind(AssertUnwindSafe(|| match strength {
        Strength::Random => random_action(view, seed),
        Strength::Rule => rule_action(view),
        Strength::Search => search_action(view, budget, seed, start),
    }))
    .ok()
    .flatten();
    match chosen {
        Some(a) if view.legal.allows(a) => Some(a),
        _ => catch_unwind(AssertUnwindSafe(|| rule_action(view)))
            .ok()
            .flatten()
            .filter(|&a| view.legal.allows(a))
            .or(Some(safe)),
    }
}

fn placeholder(view: &SeatView) -> Action {
    Action::Bid(view.rules.min_bid().max(1))
}

/// A legal action without any thinking: a bid of 1 (or the lowest allowed
/// above nil), or the first legal card.
fn safe_action(view: &SeatView) -> Option<Action> {
    match view.legal {
        Legal::None => None,
        Legal::Bid { min, max } => Some(Action::Bid(min.max(1).min(max))),
        Legal::Play { cards } => cards.first().map(Action::Play),
    }
}

fn random_action(view: &SeatView, seed: u64) -> Option<Action> {
    let mut r = rng::Rng::new(seed);
    match view.legal {
        Legal::None => None,
        Legal::Bid { min, max } => {
            let lo = min.max(1).min(max);
            let hi = 4.clamp(lo, max);
            Some(Action::Bid(lo + r.below(u32::from(hi - lo) + 1) as u8))
        }
        Legal::Play { cards } => cards.nth(r.below(cards.len())).map(Action::Play),
    }
}

fn rule_action(view: &SeatView) -> Option<Action> {
    let k = know::Knowledge::from_view(view)?;
    match view.legal {
        Legal::None => None,
        Legal::Bid { .. } => Some(Action::Bid(rule::rule_bid(k.hand, k.me, &view.bids.0, &view.rules))),
        Legal::Play { cards } => rule::rule_play(&know::ctx_from_view(view, &k, cards)).map(Action::Play),
    }
}

fn search_action(view: &SeatView, budget: &Budget, seed: u64, start: Instant) -> Option<Action> {
    let k = know::Knowledge::from_view(view)?;
    match view.legal {
        Legal::None => None,
        Legal::Bid { .. } => Some(Action::Bid(search::search_bid(view, &k, budget, seed, start))),
        Legal::Play { cards } => search::search_play(view, &k, cards, budget, seed, start).map(Action::Play),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spades_engine::{Match, Rules};

    #[test]
    fn strength_names_and_serde() {
        for s in Strength::ALL {
            assert_eq!(s.name().parse::<Strength>(), Ok(s));
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{}\"", s.name()));
        }
        assert_eq!(Strength::default(), Strength::Search);
        assert!("strong".parse::<Strength>().is_err());
    }

    #[test]
    fn no_move_for_a_seat_not_on_turn() {
        let m = Match::new(Rules::default(), 5);
        let idle = m.turn().unwrap().next();
        let view = m.view(Some(idle));
        assert_eq!(view.legal, Legal::None);
        for s in Strength::ALL {
            assert_eq!(decide(s, &view, 1), None);
        }
        assert_eq!(decide(Strength::Rule, &m.view(None), 1), None);
    }

    #[test]
    fn same_view_same_decision() {
        let m = Match::new(Rules::default(), 8);
        let view = m.view(m.turn());
        let budget = Budget::DEFAULT.iterations_only().scaled(0.2);
        let a = decide_with(Strength::Search, &budget, &view, 3);
        let b = decide_with(Strength::Search, &budget, &view, 3);
        assert_eq!(a, b);
        let mut p = Player::new(Strength::Rule, 1);
        assert_eq!(p.choose(&view), p.choose(&view));
    }
}
