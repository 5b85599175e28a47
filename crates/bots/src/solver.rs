//! Exact solution of the last tricks of a fully known deal.
//!
//! Alpha-beta over the remaining plays of a sampled deal, scored by the real
//! hand value ([`Eval`]: contracts, nils, bags, bag penalty) rather than by
//! trick count, so it knows when to duck a bag, when a set is worth the
//! bags and how to save or break a nil. Partnerships alternate, so it is a
//! two-sided search: our team maximises, theirs minimises. Touching cards
//! (no live card between them) are tried once.

use spades_engine::{Card, CardSet, Hand, Rules, Seat, Suit, Team, legal_cards};

use crate::eval::Eval;
use crate::know::{above, beats, below};

/// A position of the end of a hand with every card known.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pos {
    hands: [CardSet; 4],
    /// Cards of completed tricks (no longer live).
    gone: CardSet,
    leader: Seat,
    cards: [Option<Card>; 4],
    len: u8,
    win: u8,
    won: [u8; 4],
    broken: bool,
    turn: Seat,
}

impl Pos {
    /// The position of a simulated hand that is being played.
    pub(crate) fn from_hand(h: &Hand) -> Option<Pos> {
        let turn = h.turn()?;
        let trick = h.trick();
        let mut cards = [None; 4];
        let mut on_table = CardSet::EMPTY;
        for (i, &c) in trick.cards().iter().enumerate() {
            cards[i] = Some(c);
            on_table.insert(c);
        }
        let win = trick.winning_seat().map_or(0, |w| (w.index() + 4 - trick.leader().index()) % 4);
        Some(Pos {
            hands: Seat::ALL.map(|s| h.cards(s)),
            gone: h.played().minus(on_table),
            leader: trick.leader(),
            cards,
            len: trick.len() as u8,
            win,
            won: h.tricks_won().0,
            broken: h.spades_broken(),
            turn,
        })
    }

    fn led(&self) -> Option<Suit> {
        self.cards[0].map(|c| c.suit())
    }

    fn play(&mut self, card: Card) {
        let s = usize::from(self.turn.index());
        self.hands[s].remove(card);
        let pos = self.len;
        self.cards[usize::from(pos)] = Some(card);
        if pos > 0
            && let Some(best) = self.cards[usize::from(self.win)]
            && beats(card, best)
        {
            self.win = pos;
        }
        self.broken |= card.is_spade();
        self.len += 1;
        if self.len == 4 {
            let winner = self.leader.offset(self.win);
            self.won[usize::from(winner.index())] += 1;
            for c in self.cards.iter().flatten() {
                self.gone.insert(*c);
            }
            self.cards = [None; 4];
            self.len = 0;
            self.win = 0;
            self.leader = winner;
            self.turn = winner;
        } else {
            self.turn = self.turn.next();
        }
    }
}

/// The solver for one decision (fixed bids and scoring).
#[derive(Debug)]
pub(crate) struct Solver<'a> {
    rules: &'a Rules,
    eval: &'a Eval,
    bids: [u8; 4],
    us: Team,
    /// Nodes visited (for budget accounting).
    pub nodes: u64,
}

impl<'a> Solver<'a> {
    pub(crate) fn new(rules: &'a Rules, eval: &'a Eval, bids: [u8; 4], us: Team) -> Solver<'a> {
        Solver { rules, eval, bids, us, nodes: 0 }
    }

    /// The value of `p` for our team with best play by both sides.
    pub(crate) fn value(&mut self, p: &Pos) -> f64 {
        self.search(p, f64::NEG_INFINITY, f64::INFINITY)
    }

    /// The moves worth trying at `p`: the legal cards, one per run of
    /// touching cards.
    fn moves(&self, p: &Pos) -> CardSet {
        let hand = p.hands[usize::from(p.turn.index())];
        let legal = legal_cards(self.rules, hand, p.led(), p.broken);
        let live_elsewhere = CardSet::FULL.minus(p.gone).minus(hand);
        let mut out = CardSet::EMPTY;
        for card in legal.iter() {
            // Skip a card when the next lower legal card of the suit touches it.
            let lower = legal.and(below(card));
            let touching =
                lower.last().is_some_and(|l| live_elsewhere.and(above(l)).and(below(card)).is_empty());
            if !touching {
                out.insert(card);
            }
        }
        out
    }

    fn search(&mut self, p: &Pos, mut alpha: f64, mut beta: f64) -> f64 {
        self.nodes += 1;
        if p.hands.iter().all(|h| h.is_empty()) {
            return self.eval.value(&self.bids, &p.won);
        }
        let maximising = p.turn.team() == self.us;
        let moves = self.moves(p);
        let mut best = if maximising { f64::NEG_INFINITY } else { f64::INFINITY };
        // High cards first: they decide tricks and cut the tree early.
        for card in moves.iter().rev() {
            let mut q = *p;
            q.play(card);
            let v = self.search(&q, alpha, beta);
            if maximising {
                best = best.max(v);
                alpha = alpha.max(v);
            } else {
                best = best.min(v);
                beta = beta.min(v);
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spades_engine::{Action, BySeat, Events, Match};

    /// Plays `m` with the lowest legal card until `left` cards per seat.
    fn hand_with(left: u32, seed: u64, bids: [u8; 4]) -> (Hand, Eval) {
        let m = Match::new(Rules::default(), seed);
        let eval = Eval::from_view(&m.view(Some(Seat::North)));
        let mut h = m.hand().clone();
        let mut ev = Events::new();
        for _ in 0..4 {
            let s = h.turn().unwrap();
            h.apply(s, Action::Bid(bids[usize::from(s.index())]), &mut ev).unwrap();
        }
        while h.cards(h.turn().unwrap()).len() > left || !h.trick().is_empty() {
            let s = h.turn().unwrap();
            let c = h.legal_cards().first().unwrap();
            h.apply(s, Action::Play(c), &mut ev).unwrap();
        }
        (h, eval)
    }

    /// Brute force without pruning or move merging, for comparison.
    fn brute(p: &Pos, rules: &Rules, eval: &Eval, bids: &[u8; 4], us: Team) -> f64 {
        if p.hands.iter().all(|h| h.is_empty()) {
            return eval.value(bids, &p.won);
        }
        let legal = legal_cards(rules, p.hands[usize::from(p.turn.index())], p.led(), p.broken);
        let vals = legal.iter().map(|c| {
            let mut q = *p;
            q.play(c);
            brute(&q, rules, eval, bids, us)
        });
        if p.turn.team() == us {
            vals.fold(f64::NEG_INFINITY, f64::max)
        } else {
            vals.fold(f64::INFINITY, f64::min)
        }
    }

    #[test]
    fn alpha_beta_with_merging_equals_brute_force() {
        let rules = Rules::default();
        for seed in 0..12 {
            for bids in [[3, 3, 3, 3], [0, 4, 5, 2], [6, 1, 5, 0]] {
                let (h, eval) = hand_with(3, seed, bids);
                let p = Pos::from_hand(&h).unwrap();
                let us = h.turn().unwrap().team();
                let mut s = Solver::new(&rules, &eval, bids, us);
                let fast = s.value(&p);
                let slow = brute(&p, &rules, &eval, &bids, us);
                assert!((fast - slow).abs() < 1e-9, "seed {seed} bids {bids:?}: {fast} vs {slow}");
            }
        }
    }

    #[test]
    fn a_known_ending() {
        // North to lead with AS KS; the others hold small cards; bids make
        // North-South want exactly... N bid 2 with 0 taken: take both.
        let hands = BySeat([
            "AS KS".parse::<CardSet>().unwrap(),
            "2H 3H".parse().unwrap(),
            "4H 5H".parse().unwrap(),
            "6H 7H".parse().unwrap(),
        ]);
        let mut p = Pos {
            hands: hands.0,
            gone: CardSet::FULL.minus(hands.0.iter().fold(CardSet::EMPTY, |a, &b| a.or(b))),
            leader: Seat::North,
            cards: [None; 4],
            len: 0,
            win: 0,
            won: [0, 5, 3, 3],
            broken: true,
            turn: Seat::North,
        };
        let rules = Rules::default();
        let m = Match::new(rules, 1);
        let eval = Eval::from_view(&m.view(Some(Seat::North)));
        let bids = [2, 5, 3, 3];
        let mut s = Solver::new(&rules, &eval, bids, Team::NorthSouth);
        let v = s.value(&p);
        // NS: N 2 tricks, S 3 of bid 5: made exactly (50); EW 8 of 8: 80.
        assert!((v - (50.0 - 80.0)).abs() < 1e-9, "{v}");
        p.play("AS".parse().unwrap());
        assert_eq!(p.turn, Seat::East);
    }
}
