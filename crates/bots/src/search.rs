//! The search bot: determinised Monte Carlo over deals consistent with what
//! the seat knows (perfect-information Monte Carlo with rule-policy
//! playouts), for both the card play and the bid.
//!
//! 1. **Sampling.** The unseen cards are dealt to the other three seats
//!    uniformly among the deals that fit the cards still held and every void
//!    shown ([`crate::sample::Sampler`]), then accepted with the likelihood of
//!    each seat's bid given the hand it would have held (bid inference).
//! 2. **Evaluation.** For each sampled deal, every candidate move (equivalent
//!    touching cards are tried once) is played and the hand finished with the
//!    rule policy at all four seats; the result is scored by
//!    [`crate::eval::Eval`] (our points minus theirs, bags charged).
//!    The same deals are used for every candidate, so comparisons are paired.
//! 3. **Budget.** Deals are drawn until the iteration cap or the time limit,
//!    whichever comes first (anytime: the best move so far is returned).
//!    Candidates that fall clearly behind are dropped early so the leaders get
//!    the remaining playouts.

use std::time::{Duration, Instant};

use spades_engine::{Action, BySeat, Card, CardSet, Events, Hand, HandPhase, NilRule, SeatView, Suit};

use crate::eval::Eval;
use crate::know::{Knowledge, above, ctx_from_view};
use crate::rng::Rng;
use crate::rule::{BID_OFFSET, estimate, nil_liability, rule_bid, rule_play};
use crate::sample::Sampler;
use crate::sim::{policy, rollout, step};
use crate::solver::{Pos, Solver};

/// Limits of one search decision: whichever is reached first ends it.
///
/// With `time_limit: None` a decision depends only on the view and the seed
/// (reproducible, for tests and duplicate tournaments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Most sampled deals for a card decision.
    pub play_worlds: u32,
    /// Most sampled deals for a bid decision.
    pub bid_worlds: u32,
    /// Wall-clock limit per decision.
    pub time_limit: Option<Duration>,
    /// Cards per seat from which each simulated deal is finished by exact
    /// search instead of rule-policy playout (0: never).
    pub endgame: u8,
}

impl Budget {
    /// The default takeover budget: at most 30 ms a decision.
    pub const DEFAULT: Budget =
        Budget { play_worlds: 400, bid_worlds: 600, time_limit: Some(Duration::from_millis(30)), endgame: 0 };

    /// The default iteration caps with no clock: fully reproducible.
    pub const fn iterations_only(self) -> Budget {
        Budget { time_limit: None, ..self }
    }

    /// Scales both iteration caps (at least one deal each).
    pub fn scaled(self, factor: f64) -> Budget {
        let s = |n: u32| ((f64::from(n) * factor).round() as u32).max(1);
        Budget { play_worlds: s(self.play_worlds), bid_worlds: s(self.bid_worlds), ..self }
    }
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::DEFAULT
    }
}

/// Spread of the bid around the rule bidder's estimate (in tricks).
const BID_SIGMA: f64 = 1.5;
/// Attempts at a deal that fits the bids before taking the best seen.
const MAX_TRIES: u32 = 24;

/// Likelihood that a seat holding `hand` (its whole hand as dealt) bid `bid`.
pub(crate) fn bid_likelihood(hand: CardSet, bid: u8) -> f64 {
    if bid == 0 {
        let liab = f64::from(nil_liability(hand));
        (-0.8 * liab).exp()
    } else {
        let d = f64::from(bid) - f64::from(estimate(hand) - BID_OFFSET);
        (-(d * d) / (2.0 * BID_SIGMA * BID_SIGMA)).exp()
    }
}

/// Bid inference: turns uniform deals into deals weighted by how well each
/// seat's hand explains its bid.
struct Inference {
    /// For each other seat (sampler order): its bid and the cards it has
    /// already played (part of its hand as dealt).
    seats: [(Option<u8>, CardSet); 3],
}

impl Inference {
    fn new(view: &SeatView, k: &Knowledge, sampler: &Sampler) -> Inference {
        let seats = sampler.others.map(|s| (view.bids[s], k.played_by[usize::from(s.index())]));
        Inference { seats }
    }

    fn weight(&self, hands: &[CardSet; 3]) -> f64 {
        let mut w = 1.0;
        for (i, &(bid, played)) in self.seats.iter().enumerate() {
            if let Some(bid) = bid {
                w *= bid_likelihood(hands[i].or(played), bid);
            }
        }
        w
    }

    /// A deal drawn uniformly, then accepted with its bid likelihood (the
    /// most likely of the tries when none is accepted).
    fn draw(&self, sampler: &Sampler, rng: &mut Rng) -> [CardSet; 3] {
        let mut best = (-1.0, [CardSet::EMPTY; 3]);
        for _ in 0..MAX_TRIES {
            let hands = sampler.sample(rng);
            let w = self.weight(&hands);
            if rng.unit() < w {
                return hands;
            }
            if w > best.0 {
                best = (w, hands);
            }
        }
        best.1
    }
}

/// Paired comparison of candidate moves over the same sampled deals, with
/// early elimination of candidates that are clearly behind.
#[derive(Debug)]
struct Race {
    /// Per candidate: the value in each deal so far.
    values: Vec<Vec<f64>>,
    alive: Vec<bool>,
}

impl Race {
    fn new(n: usize, capacity: u32) -> Race {
        let cap = capacity.min(4096) as usize;
        Race { values: (0..n).map(|_| Vec::with_capacity(cap)).collect(), alive: vec![true; n] }
    }

    fn mean(&self, i: usize) -> f64 {
        let v = &self.values[i];
        if v.is_empty() { f64::NEG_INFINITY } else { v.iter().sum::<f64>() / v.len() as f64 }
    }

    /// The live candidate with the best mean (the first on ties).
    fn leader(&self) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for i in 0..self.values.len() {
            if !self.alive[i] || self.values[i].is_empty() {
                continue;
            }
            let m = self.mean(i);
            if best.is_none_or(|(_, b)| m > b + 1e-9) {
                best = Some((i, m));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Drops candidates trailing the leader by more than three standard
    /// errors of the paired difference plus two points.
    fn prune(&mut self) {
        let Some(lead) = self.leader() else { return };
        let n = self.values[lead].len();
        if n < 24 {
            return;
        }
        for i in 0..self.values.len() {
            if i == lead || !self.alive[i] || self.values[i].len() != n {
                continue;
            }
            let (mut s, mut sq) = (0.0, 0.0);
            for (a, b) in self.values[lead].iter().zip(&self.values[i]) {
                let d = a - b;
                s += d;
                sq += d * d;
            }
            let nf = n as f64;
            let mean = s / nf;
            let var = (sq / nf - mean * mean).max(0.0);
            if mean > 3.0 * (var / nf).sqrt() + 2.0 {
                self.alive[i] = false;
            }
        }
    }
}

/// Touching cards are equivalent: one card per run of cards with no unseen
/// card between them (the rule bot's choice stands for its run).
fn candidates(legal: CardSet, unknown: CardSet, preferred: Card) -> Vec<Card> {
    let mut out: Vec<Card> = vec![preferred];
    for suit in Suit::ALL {
        let mut prev: Option<Card> = None;
        let mut run_has_preferred = false;
        let mut run_first: Option<Card> = None;
        let flush = |out: &mut Vec<Card>, first: Option<Card>, has_pref: bool| {
            if let Some(f) = first
                && !has_pref
            {
                out.push(f);
            }
        };
        for card in legal.of_suit(suit).iter() {
            let touching =
                prev.is_some_and(|p| unknown.and(above(p)).and(crate::know::below(card)).is_empty());
            if !touching {
                flush(&mut out, run_first, run_has_preferred);
                run_first = Some(card);
                run_has_preferred = false;
            }
            run_has_preferred |= card == preferred;
            prev = Some(card);
        }
        flush(&mut out, run_first, run_has_preferred);
    }
    out
}

fn hidden_hands(sampler: &Sampler, hands: [CardSet; 3]) -> BySeat<CardSet> {
    let mut hidden = BySeat([CardSet::EMPTY; 4]);
    for (seat, cards) in sampler.others.iter().zip(hands) {
        hidden[*seat] = cards;
    }
    hidden
}

/// Finishes a simulated hand: rule-policy playout until the seat on turn
/// holds at most `endgame` cards, then exact search. Returns its value.
fn finish(h: &mut Hand, voids: &mut [u8; 4], ev: &mut Events, eval: &Eval, endgame: u8) -> f64 {
    while let Some(seat) = h.turn() {
        if endgame > 0
            && h.phase() == HandPhase::Playing
            && h.cards(seat).len() <= u32::from(endgame)
            && let (Some(p), Some(bids)) = (Pos::from_hand(h), h.final_bids())
        {
            let rules = *h.rules();
            return Solver::new(&rules, eval, bids.0, eval.team()).value(&p);
        }
        let Some(action) = policy(h, seat, voids) else { break };
        if !step(h, voids, seat, action, ev) {
            break;
        }
    }
    let bids = h.final_bids().map_or([1; 4], |b| b.0);
    eval.value(&bids, &h.tricks_won().0)
}

fn out_of_time(budget: &Budget, start: Instant) -> bool {
    budget.time_limit.is_some_and(|limit| start.elapsed() >= limit)
}

/// Chooses a card by search. `legal` is the viewer's legal set (non-empty).
pub(crate) fn search_play(
    view: &SeatView,
    k: &Knowledge,
    legal: CardSet,
    budget: &Budget,
    seed: u64,
    start: Instant,
) -> Option<Card> {
    let ctx = ctx_from_view(view, k, legal);
    let rule = rule_play(&ctx)?;
    if legal.len() == 1 {
        return Some(rule);
    }
    let unknown = k.unknown();
    let cands = candidates(legal, unknown, rule);
    if cands.len() == 1 {
        return Some(rule);
    }
    let need = [1, 2, 3].map(|i| k.cards_left[usize::from(k.me.offset(i).index())]);
    let Some(sampler) = Sampler::new(k.me, unknown, need, &k.voids) else { return Some(rule) };
    let infer = Inference::new(view, k, &sampler);
    let eval = Eval::from_view(view);
    let mut rng = Rng::new(seed);
    let mut ev = Events::new();
    let mut race = Race::new(cands.len(), budget.play_worlds);
    let mut worlds = 0u32;
    while worlds < budget.play_worlds && !out_of_time(budget, start) {
        let hidden = hidden_hands(&sampler, infer.draw(&sampler, &mut rng));
        let Ok(base) = Hand::from_view(view, hidden) else { break };
        for (i, &card) in cands.iter().enumerate() {
            if !race.alive[i] {
                continue;
            }
            let mut h = base.clone();
            let mut voids = k.voids;
            if !step(&mut h, &mut voids, k.me, Action::Play(card), &mut ev) {
                race.alive[i] = false;
                continue;
            }
            let v = finish(&mut h, &mut voids, &mut ev, &eval, budget.endgame);
            race.values[i].push(v);
        }
        worlds += 1;
        if worlds.is_multiple_of(8) {
            race.prune();
        }
    }
    Some(race.leader().map_or(rule, |i| cands[i]))
}

/// Chooses a bid by search: each candidate bid is tried on the same sampled
/// deals, the later seats bid by the rule bidder and the hand is played out.
pub(crate) fn search_bid(view: &SeatView, k: &Knowledge, budget: &Budget, seed: u64, start: Instant) -> u8 {
    let rules = view.rules;
    let me = k.me;
    let rule = rule_bid(k.hand, me, &view.bids.0, &rules);
    let center = if rule == 0 { ((estimate(k.hand) - BID_OFFSET).round() as u8).clamp(1, 13) } else { rule };
    let lo = center.saturating_sub(2).max(1);
    let hi = (center + 2).min(13);
    let mut cands: Vec<u8> = vec![center];
    cands.extend((lo..=hi).filter(|&b| b != center));
    let partner_bid = view.bids[me.partner()];
    let spades = k.hand.of_suit(Suit::Spades);
    let nil_possible = rules.nil != NilRule::Off
        && partner_bid != Some(0)
        && !spades.contains(Card::new(spades_engine::Rank::Ace, Suit::Spades))
        && spades.len() <= 4
        && nil_liability(k.hand) <= 3.0;
    if nil_possible {
        cands.push(0);
    }
    let unknown = CardSet::FULL.minus(k.hand);
    let Some(sampler) = Sampler::new(me, unknown, [13, 13, 13], &[0; 4]) else { return rule };
    let infer = Inference::new(view, k, &sampler);
    let eval = Eval::from_view(view);
    let mut rng = Rng::new(seed);
    let mut ev = Events::new();
    let mut race = Race::new(cands.len(), budget.bid_worlds);
    let mut nil_made = 0u32;
    let mut worlds = 0u32;
    while worlds < budget.bid_worlds && !out_of_time(budget, start) {
        let hidden = hidden_hands(&sampler, infer.draw(&sampler, &mut rng));
        let Ok(base) = Hand::from_view(view, hidden) else { break };
        for (i, &bid) in cands.iter().enumerate() {
            if !race.alive[i] {
                continue;
            }
            let mut h = base.clone();
            let mut voids = [0u8; 4];
            if !step(&mut h, &mut voids, me, Action::Bid(bid), &mut ev) {
                race.alive[i] = false;
                continue;
            }
            rollout(&mut h, &mut voids, &mut ev);
            let bids = h.final_bids().map_or([1; 4], |b| b.0);
            let won = h.tricks_won().0;
            let v = eval.value(&bids, &won);
            race.values[i].push(v);
            if bid == 0 && won[usize::from(me.index())] == 0 {
                nil_made += 1;
            }
        }
        worlds += 1;
        if worlds.is_multiple_of(8) {
            race.prune();
        }
    }
    // A nil must also be likely to succeed, not just pay on average.
    if let Some(i) = cands.iter().position(|&b| b == 0) {
        let n = race.values[i].len() as f64;
        if n == 0.0 || f64::from(nil_made) < NIL_MIN_SUCCESS * n {
            race.alive[i] = false;
        }
    }
    let Some(best) = race.leader() else { return center };
    // Among bids worth about the same, the highest: fewer bags for the
    // same expected score.
    if cands[best] > 0 {
        let top = race.mean(best);
        let mut pick = best;
        for (i, &b) in cands.iter().enumerate() {
            if race.alive[i] && b > cands[pick] && race.mean(i) >= top - BID_TIE_POINTS {
                pick = i;
            }
        }
        return cands[pick];
    }
    cands[best]
}

/// Bids whose simulated value is within this many points of the best count
/// as ties (measured: 2 points cut bags per contract by about 0.03 at no
/// cost in margin; 5 points started to cost margin and sets).
const BID_TIE_POINTS: f64 = 2.0;

/// Least simulated success rate for the search bot to bid nil.
const NIL_MIN_SUCCESS: f64 = 0.75;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_cards_are_tried_once() {
        let legal: CardSet = "KH QH 9H 2C".parse().unwrap();
        // JH and TH unseen: K-Q touch, 9 separate.
        let unknown: CardSet = "JH TH AH 3C".parse().unwrap();
        let c = candidates(legal, unknown, "QH".parse().unwrap());
        assert_eq!(c.len(), 3, "{c:?}");
        assert_eq!(c[0], "QH".parse().unwrap());
        // With JH and TH played, K-Q-9 is one run.
        let unknown: CardSet = "AH 3C".parse().unwrap();
        let c = candidates(legal, unknown, "2C".parse().unwrap());
        assert_eq!(c.len(), 2, "{c:?}");
    }

    #[test]
    fn likelihood_prefers_hands_that_fit_the_bid() {
        let strong: CardSet = "AS KS QS AH KH AD KD AC 2C 3C 4C 5C 6C".parse().unwrap();
        let weak: CardSet = "2S 3C 5C 7C 2D 4D 6D 8D 3H 5H 7H 9H 4S".parse().unwrap();
        assert!(bid_likelihood(strong, 7) > bid_likelihood(weak, 7) * 10.0);
        assert!(bid_likelihood(weak, 0) > bid_likelihood(strong, 0) * 10.0);
    }
}
