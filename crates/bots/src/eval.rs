//! What a finished hand is worth to one side.
//!
//! The value is the side's hand points minus the opponents', under the
//! table's own rules (nil value, failed-nil tricks, bag penalty), with each
//! bag charged its long-run share of the bag penalty (10 bags cost 100: each
//! bag nets −9) rather than only when a penalty happens to fall. Close to the
//! end of a match, when leftover bags may never be charged, the share shrinks
//! toward the plain hand points.

use spades_engine::{ByTeam, MatchEnd, PlayerLine, Rules, SeatView, Team, score_team};

/// Scores finished hands from one team's point of view.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Eval {
    rules: Rules,
    team: Team,
    bags: ByTeam<u8>,
    /// Long-run cost of one bag on the bag counter (points).
    bag_cost: f64,
}

impl Eval {
    /// The evaluation for the viewer of `view` (North–South for a spectator).
    pub(crate) fn from_view(view: &SeatView) -> Eval {
        let team = view.viewer.map_or(Team::NorthSouth, |s| s.team());
        let per_bag =
            view.rules.bag_penalty.threshold().map_or(0.0, |(n, cost)| f64::from(cost) / f64::from(n));
        let horizon = match view.rules.match_end {
            MatchEnd::Target(t) => {
                let lead = view.scores.0[0].max(view.scores.0[1]);
                (f64::from(t - lead) / 250.0).clamp(0.2, 1.0)
            }
            MatchEnd::Hands(n) => (f64::from(n.saturating_sub(view.hand_number)) / 4.0).clamp(0.0, 1.0),
        };
        Eval { rules: view.rules, team, bags: view.bags, bag_cost: per_bag * horizon }
    }

    fn team_value(&self, team: Team, bids: &[u8; 4], won: &[u8; 4]) -> f64 {
        let [a, b] = team.seats();
        let line = |s: spades_engine::Seat| {
            let i = usize::from(s.index());
            PlayerLine { bid: bids[i], tricks: won[i] }
        };
        let start = self.bags[team];
        let s = score_team(&self.rules, [line(a), line(b)], 0, start);
        // Bags added to the counter net of any penalty charged this hand.
        let counter_change = f64::from(s.bag_count) - f64::from(start);
        f64::from(s.hand_points) - self.bag_cost * counter_change
    }

    /// The team this evaluation is for.
    pub(crate) fn team(&self) -> Team {
        self.team
    }

    /// Our value minus theirs, for final bids and tricks taken.
    pub(crate) fn value(&self, bids: &[u8; 4], won: &[u8; 4]) -> f64 {
        self.team_value(self.team, bids, won) - self.team_value(self.team.other(), bids, won)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spades_engine::{Match, Seat};

    #[test]
    fn bags_are_charged_their_share() {
        let m = Match::new(Rules::default(), 1);
        let view = m.view(Some(Seat::North));
        let e = Eval::from_view(&view);
        // NS bid 3+3, took 8 (2 bags): 62 - 20 = 42; EW bid 2+2, took 5: 41 - 10 = 31.
        let v = e.value(&[3, 2, 3, 2], &[4, 3, 4, 2]);
        assert!((v - (42.0 - 31.0)).abs() < 1e-9, "{v}");
        // A made nil is worth 100 on top: NS 100 + 45 - 50 = 95; EW 4 of 4 = 40.
        let v = e.value(&[0, 2, 4, 2], &[0, 1, 9, 3]);
        assert!((v - (95.0 - 40.0)).abs() < 1e-9, "{v}");
    }
}
