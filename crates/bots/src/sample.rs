//! Dealing the unseen cards: every deal consistent with what a seat knows
//! (cards held, cards played, voids shown) is equally likely.
//!
//! A greedy dealer ("give each card to some seat that can take it") is biased
//! whenever voids constrain the deal. Instead, a small dynamic programme over
//! the four suits counts the consistent deals for every split of each suit's
//! unseen cards among the three other seats; a sample then draws the splits
//! suit by suit with exactly those weights and shuffles the cards of each suit
//! into the chosen counts. Building the table costs a few microseconds once
//! per decision; each sample costs a few hundred nanoseconds.

use spades_engine::{Card, CardSet, Seat, Suit};

use crate::rng::Rng;

/// Binomial coefficients up to 13 choose 13.
const fn binomials() -> [[f64; 14]; 14] {
    let mut t = [[0.0f64; 14]; 14];
    let mut n = 0;
    while n < 14 {
        t[n][0] = 1.0;
        let mut k = 1;
        while k <= n {
            t[n][k] = t[n - 1][k - 1] + if k < n { t[n - 1][k] } else { 0.0 };
            k += 1;
        }
        n += 1;
    }
    t
}

const BINOM: [[f64; 14]; 14] = binomials();

/// Uniform sampler of the three other hands.
#[derive(Debug, Clone)]
pub(crate) struct Sampler {
    /// The other seats, left of the viewer first.
    pub others: [Seat; 3],
    cards: [[Card; 13]; 4],
    len: [u8; 4],
    allowed: [[bool; 4]; 3],
    need: [u8; 3],
    /// `dp[c][a][b]`: number of deals of suits `c..4` when the first two
    /// other seats still need `a` and `b` cards (the third takes the rest).
    dp: [[[f64; 14]; 14]; 5],
}

impl Sampler {
    /// A sampler for the cards `unknown`, dealt to the seats after `me` in
    /// clockwise order, `need[i]` cards to the i-th, never giving a seat a
    /// card of a suit it has shown out of (`voids`, indexed by seat).
    ///
    /// `None` when no deal fits (counts that do not add up, or voids that
    /// leave a card nowhere to go).
    pub(crate) fn new(me: Seat, unknown: CardSet, need: [u8; 3], voids: &[u8; 4]) -> Option<Sampler> {
        let others = [me.offset(1), me.offset(2), me.offset(3)];
        if need.iter().map(|&n| u32::from(n)).sum::<u32>() != unknown.len() || need.iter().any(|&n| n > 13) {
            return None;
        }
        let mut cards = [[Card::new(spades_engine::Rank::Two, Suit::Clubs); 13]; 4];
        let mut len = [0u8; 4];
        for suit in Suit::ALL {
            let s = usize::from(suit.index());
            for (i, card) in unknown.of_suit(suit).iter().enumerate() {
                cards[s][i] = card;
            }
            len[s] = unknown.of_suit(suit).len() as u8;
        }
        let mut allowed = [[true; 4]; 3];
        for (o, seat) in others.iter().enumerate() {
            for suit in Suit::ALL {
                allowed[o][usize::from(suit.index())] =
                    voids[usize::from(seat.index())] & (1 << suit.index()) == 0;
            }
        }
        let mut s = Sampler { others, cards, len, allowed, need, dp: [[[0.0; 14]; 14]; 5] };
        s.fill();
        if s.dp[0][usize::from(need[0])][usize::from(need[1])] > 0.0 { Some(s) } else { None }
    }

    /// Cards in suits `c..4`.
    fn rest(&self, c: usize) -> usize {
        self.len[c..].iter().map(|&l| usize::from(l)).sum()
    }

    /// Calls `f(k1, k2, weight)` for every split of suit `c` when the first
    /// two seats still need `a` and `b` cards.
    #[inline]
    fn splits(&self, c: usize, a: usize, b: usize, mut f: impl FnMut(usize, usize, f64) -> bool) {
        let u = usize::from(self.len[c]);
        let rest = self.rest(c);
        if a + b > rest {
            return;
        }
        let need3 = rest - a - b;
        let [al1, al2, al3] = [self.allowed[0][c], self.allowed[1][c], self.allowed[2][c]];
        let max1 = if al1 { u.min(a) } else { 0 };
        for (k1, &b1) in BINOM[u].iter().enumerate().take(max1 + 1) {
            let max2 = if al2 { (u - k1).min(b) } else { 0 };
            for (k2, &b2) in BINOM[u - k1].iter().enumerate().take(max2 + 1) {
                let k3 = u - k1 - k2;
                if k3 > need3 || (!al3 && k3 > 0) {
                    continue;
                }
                let next = self.dp[c + 1][a - k1][b - k2];
                if next == 0.0 {
                    continue;
                }
                if f(k1, k2, b1 * b2 * next) {
                    return;
                }
            }
        }
    }

    fn fill(&mut self) {
        self.dp[4][0][0] = 1.0;
        for c in (0..4).rev() {
            let rest = self.rest(c);
            for a in 0..14 {
                for b in 0..14 {
                    if a + b > rest {
                        continue;
                    }
                    let mut total = 0.0;
                    self.splits(c, a, b, |_, _, w| {
                        total += w;
                        false
                    });
                    self.dp[c][a][b] = total;
                }
            }
        }
    }

    /// One deal of the unknown cards: the hands of the three other seats,
    /// in the order of [`Sampler::others`].
    pub(crate) fn sample(&self, rng: &mut Rng) -> [CardSet; 3] {
        let mut hands = [CardSet::EMPTY; 3];
        let (mut a, mut b) = (usize::from(self.need[0]), usize::from(self.need[1]));
        for c in 0..4 {
            let total = self.dp[c][a][b];
            let mut r = rng.unit() * total;
            let mut chosen = None;
            self.splits(c, a, b, |k1, k2, w| {
                chosen = Some((k1, k2));
                r -= w;
                r < 0.0
            });
            // Rounding can leave r a hair above zero: the last split stands.
            let Some((k1, k2)) = chosen else { break };
            let u = usize::from(self.len[c]);
            let mut cards = self.cards[c];
            for i in 0..u {
                let j = i + rng.below((u - i) as u32) as usize;
                cards.swap(i, j);
            }
            for (i, &card) in cards[..u].iter().enumerate() {
                let o = if i < k1 {
                    0
                } else if i < k1 + k2 {
                    1
                } else {
                    2
                };
                hands[o].insert(card);
            }
            a -= k1;
            b -= k2;
        }
        hands
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn binomials_are_right() {
        assert_eq!(BINOM[13][6], 1716.0);
        assert_eq!(BINOM[4][2], 6.0);
        assert_eq!(BINOM[0][0], 1.0);
    }

    #[test]
    fn full_deal_respects_counts() {
        let unknown = CardSet::FULL.minus(CardSet::suit(Suit::Clubs));
        let s = Sampler::new(Seat::North, unknown, [13, 13, 13], &[0; 4]).unwrap();
        let mut rng = Rng::new(1);
        for _ in 0..200 {
            let h = s.sample(&mut rng);
            assert!(h.iter().all(|x| x.len() == 13));
            assert_eq!(h[0].or(h[1]).or(h[2]), unknown);
        }
    }

    #[test]
    fn voids_are_respected_and_the_deal_is_uniform() {
        // Six cards: 3 hearts, 3 spades; East void in hearts; each needs 2.
        let unknown: CardSet = "2H 3H 4H 2S 3S 4S".parse().unwrap();
        let mut voids = [0u8; 4];
        voids[Seat::East.index() as usize] = 1 << Suit::Hearts.index();
        let s = Sampler::new(Seat::North, unknown, [2, 2, 2], &voids).unwrap();
        let mut rng = Rng::new(9);
        let mut counts: HashMap<[u64; 3], u32> = HashMap::new();
        let n = 60_000;
        for _ in 0..n {
            let h = s.sample(&mut rng);
            assert!(h[0].of_suit(Suit::Hearts).is_empty(), "East is void in hearts");
            *counts.entry(h.map(|x| x.bits())).or_default() += 1;
        }
        // Count the consistent deals by brute force: East takes 2 of the 3
        // spades (3 ways), South 2 of the remaining 4 cards (6 ways), West
        // the rest: 18 deals, each 1/18.
        assert_eq!(counts.len(), 18);
        let expect = f64::from(n) / 18.0;
        for (&deal, &c) in &counts {
            assert!((f64::from(c) - expect).abs() < 0.08 * expect, "{deal:?}: {c} vs {expect}");
        }
    }

    #[test]
    fn impossible_constraints_are_refused() {
        let unknown: CardSet = "2H 3H".parse().unwrap();
        let voids = [0, 0b0100, 0b0100, 0b0100];
        assert!(Sampler::new(Seat::North, unknown, [1, 1, 0], &voids).is_none());
        assert!(Sampler::new(Seat::North, unknown, [1, 1, 1], &[0; 4]).is_none());
    }
}
