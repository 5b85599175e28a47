//! Scoring a hand (SPEC §2) and deciding the end of a match (SPEC §3).

use serde::{Deserialize, Serialize};

use crate::rules::{FailedNil, HAND_CAP, MERCY_FLOOR, MatchEnd, Rules};
use crate::seat::{BySeat, ByTeam, Seat, Team};

/// One player's part in a hand: the bid (0 = nil) and the tricks taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerLine {
    /// The bid; 0 is nil.
    pub bid: u8,
    /// Tricks taken.
    pub tricks: u8,
}

/// How a team scored one hand, with every part of the sum.
///
/// `hand_points = contract_points + bag_points + nil_points + bag_penalty`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct TeamHandScore {
    /// The team contract: the sum of the non-nil bids.
    pub contract: u8,
    /// Tricks that count toward the contract (with the default rule, a nil
    /// bidder's tricks are left out).
    pub counted_tricks: u8,
    /// True when `counted_tricks >= contract` (always true for a contract of 0).
    pub made: bool,
    /// +10 per bid trick when made, −10 per bid trick when missed.
    pub contract_points: i32,
    /// Bags taken this hand: overtricks, plus a nil bidder's tricks when they
    /// count only as bags.
    pub bags: u8,
    /// +1 per bag taken this hand.
    pub bag_points: i32,
    /// The sum of the team's nil results (±100 or ±50 each).
    pub nil_points: i32,
    /// The bag penalty charged this hand (0 or negative).
    pub bag_penalty: i32,
    /// The hand's total for the team.
    pub hand_points: i32,
    /// The team's score after the hand.
    pub score: i32,
    /// The team's bag count after the hand (and after any penalty).
    pub bag_count: u8,
}

/// Scores one team's hand.
///
/// `players` are the two partners' bids and tricks; `start_score` and
/// `start_bags` are the team's totals before the hand.
pub fn score_team(
    rules: &Rules,
    players: [PlayerLine; 2],
    start_score: i32,
    start_bags: u8,
) -> TeamHandScore {
    let nil_value = rules.nil.value();
    let mut contract = 0u8;
    let mut counted = 0u8;
    let mut nil_points = 0i32;
    let mut nil_bags = 0u8;
    for p in players {
        if p.bid == 0 {
            nil_points += if p.tricks == 0 { nil_value } else { -nil_value };
            match rules.failed_nil {
                FailedNil::BagsOnly => nil_bags += p.tricks,
                FailedNil::CountForPartner => counted += p.tricks,
            }
        } else {
            contract += p.bid;
            counted += p.tricks;
        }
    }
    let made = counted >= contract;
    let (contract_points, overtricks) =
        if made { (10 * i32::from(contract), counted - contract) } else { (-10 * i32::from(contract), 0) };
    let bags = overtricks + nil_bags;
    let bag_points = i32::from(bags);
    let mut bag_count = u32::from(start_bags) + u32::from(bags);
    let mut bag_penalty = 0;
    if let Some((per, cost)) = rules.bag_penalty.threshold() {
        while bag_count >= u32::from(per) {
            bag_count -= u32::from(per);
            bag_penalty -= cost;
        }
    }
    let hand_points = contract_points + bag_points + nil_points + bag_penalty;
    TeamHandScore {
        contract,
        counted_tricks: counted,
        made,
        contract_points,
        bags,
        bag_points,
        nil_points,
        bag_penalty,
        hand_points,
        score: start_score + hand_points,
        // At most 13 bags a hand on top of a count below the threshold (or
        // below 256 with the penalty off); saturate rather than wrap.
        bag_count: u8::try_from(bag_count).unwrap_or(u8::MAX),
    }
}

/// Whether a nil bid was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NilResult {
    /// The nil bidder took no trick.
    Made,
    /// The nil bidder took at least one trick.
    Failed,
}

/// The record of one finished hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct HandResult {
    /// 1 for the first hand of the match.
    pub hand_number: u16,
    /// Who dealt.
    pub dealer: Seat,
    /// Every seat's bid (0 = nil).
    #[cfg_attr(feature = "schema", schema(value_type = [u8; 4]))]
    pub bids: BySeat<u8>,
    /// Tricks taken by each seat.
    #[cfg_attr(feature = "schema", schema(value_type = [u8; 4]))]
    pub tricks: BySeat<u8>,
    /// For each seat that bid nil, whether it was made.
    #[cfg_attr(feature = "schema", schema(value_type = [Option<NilResult>; 4]))]
    pub nils: BySeat<Option<NilResult>>,
    /// Each team's score for the hand.
    #[cfg_attr(feature = "schema", schema(value_type = [TeamHandScore; 2]))]
    pub teams: ByTeam<TeamHandScore>,
}

impl HandResult {
    /// Scores a finished hand from the bids and tricks, given the scores and
    /// bag counts before it.
    pub fn score(
        rules: &Rules,
        hand_number: u16,
        dealer: Seat,
        bids: BySeat<u8>,
        tricks: BySeat<u8>,
        start: ByTeam<(i32, u8)>,
    ) -> HandResult {
        let teams = ByTeam::new_with(|team| {
            let [a, b] = team.seats();
            let line = |s: Seat| PlayerLine { bid: bids[s], tricks: tricks[s] };
            score_team(rules, [line(a), line(b)], start[team].0, start[team].1)
        });
        let nils = BySeat::new_with(|s| {
            (bids[s] == 0).then_some(if tricks[s] == 0 { NilResult::Made } else { NilResult::Failed })
        });
        HandResult { hand_number, dealer, bids, tricks, nils, teams }
    }

    /// Each team's score after this hand.
    pub fn scores(&self) -> ByTeam<i32> {
        ByTeam::new_with(|t| self.teams[t].score)
    }
}

/// How a match ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", tag = "result", content = "team")]
pub enum Outcome {
    /// This team won.
    Win(Team),
    /// Level after the 99-hand cap.
    Draw,
}

/// What ended the match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// A team reached the target score.
    Target,
    /// The fixed number of hands was played.
    Hands,
    /// A team fell to −200 or below with the mercy rule on.
    Mercy,
    /// The 99-hand safety cap.
    HandCap,
}

/// The end of a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MatchResult {
    /// Who won, or a draw.
    pub outcome: Outcome,
    /// What ended it.
    pub reason: EndReason,
    /// Final scores.
    #[cfg_attr(feature = "schema", schema(value_type = [i32; 2]))]
    pub scores: ByTeam<i32>,
    /// Hands played.
    pub hands_played: u16,
}

/// Decides whether the match ends after a hand, given the scores after it
/// and the number of hands played so far.
///
/// A hand is always finished before this is asked. A tie when the match
/// should end plays another hand, except at the 99-hand cap, which records a
/// draw.
pub fn match_end(rules: &Rules, scores: ByTeam<i32>, hands_played: u16) -> Option<MatchResult> {
    let [ns, ew] = scores.0;
    let reason = match rules.match_end {
        MatchEnd::Target(t) if ns >= t || ew >= t => Some(EndReason::Target),
        MatchEnd::Hands(n) if hands_played >= n => Some(EndReason::Hands),
        _ => None,
    };
    let reason = match reason {
        Some(r) => Some(r),
        None if rules.mercy && (ns <= MERCY_FLOOR || ew <= MERCY_FLOOR) => Some(EndReason::Mercy),
        None => None,
    };
    let leader = match ns.cmp(&ew) {
        std::cmp::Ordering::Greater => Some(Team::NorthSouth),
        std::cmp::Ordering::Less => Some(Team::EastWest),
        std::cmp::Ordering::Equal => None,
    };
    let (outcome, reason) = match (reason, leader) {
        (Some(reason), Some(team)) => (Outcome::Win(team), reason),
        _ if hands_played >= HAND_CAP => match leader {
            Some(team) => (Outcome::Win(team), EndReason::HandCap),
            None => (Outcome::Draw, EndReason::HandCap),
        },
        _ => return None,
    };
    Some(MatchResult { outcome, reason, scores, hands_played })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{BagPenalty, NilRule};

    fn line(bid: u8, tricks: u8) -> PlayerLine {
        PlayerLine { bid, tricks }
    }

    fn team(players: [PlayerLine; 2]) -> TeamHandScore {
        score_team(&Rules::default(), players, 0, 0)
    }

    // SPEC §2 worked checks.
    #[test]
    fn spec_worked_checks() {
        assert_eq!(team([line(4, 5), line(3, 4)]).hand_points, 72); // bid 7 take 9
        assert_eq!(team([line(4, 2), line(3, 1)]).hand_points, -70); // bid 7 take 3
        assert_eq!(team([line(2, 3), line(1, 2)]).hand_points, 32); // bid 3 take 5
        assert_eq!(team([line(0, 0), line(4, 4)]).hand_points, 140); // nil made + 4 of 4
        let failed = team([line(0, 1), line(4, 4)]);
        assert_eq!(failed.hand_points, -59); // nil took 1 + 4 of 4
        assert_eq!(failed.bags, 1);
        assert_eq!(failed.bag_count, 1);
    }

    #[test]
    fn bag_penalty_keeps_the_remainder() {
        // 8 bags + 4 new = -100, count 2.
        let s = score_team(&Rules::default(), [line(3, 5), line(2, 4)], 100, 8);
        assert_eq!(s.bags, 4);
        assert_eq!(s.bag_penalty, -100);
        assert_eq!(s.bag_count, 2);
        assert_eq!(s.hand_points, 50 + 4 - 100);
        assert_eq!(s.score, 100 + 50 + 4 - 100);
    }

    #[test]
    fn five_bag_penalty_can_trigger_twice() {
        let rules = Rules { bag_penalty: BagPenalty::FiveForFifty, ..Rules::default() };
        let s = score_team(&rules, [line(1, 6), line(1, 5)], 0, 4);
        assert_eq!(s.bags, 9);
        assert_eq!(s.bag_penalty, -100);
        assert_eq!(s.bag_count, 3);
    }

    #[test]
    fn bag_penalty_off_still_scores_and_counts_bags() {
        let rules = Rules { bag_penalty: BagPenalty::Off, ..Rules::default() };
        let s = score_team(&rules, [line(1, 6), line(1, 5)], 0, 9);
        assert_eq!(s.bag_points, 9);
        assert_eq!(s.bag_penalty, 0);
        assert_eq!(s.bag_count, 18);
    }

    #[test]
    fn nil_fifty_and_failed_nil_toward_partner() {
        let rules = Rules { nil: NilRule::Fifty, ..Rules::default() };
        assert_eq!(score_team(&rules, [line(0, 0), line(3, 3)], 0, 0).hand_points, 80);
        let rules = Rules { failed_nil: FailedNil::CountForPartner, ..Rules::default() };
        // Nil took 2, partner bid 4 took 3: 5 counted >= 4, one overtrick.
        let s = score_team(&rules, [line(0, 2), line(4, 3)], 0, 0);
        assert_eq!(s.contract_points, 40);
        assert_eq!(s.bags, 1);
        assert_eq!(s.hand_points, 40 + 1 - 100);
        // Same hand under the default rule: contract missed, 2 bags.
        let s = score_team(&Rules::default(), [line(0, 2), line(4, 3)], 0, 0);
        assert_eq!(s.hand_points, -40 + 2 - 100);
    }

    #[test]
    fn double_nil_is_two_nils() {
        let s = team([line(0, 0), line(0, 0)]);
        assert_eq!((s.contract, s.made, s.hand_points), (0, true, 200));
        let s = team([line(0, 3), line(0, 0)]);
        assert_eq!(s.hand_points, 3);
        assert_eq!(s.bag_count, 3);
    }

    #[test]
    fn match_end_rules() {
        let r = Rules::default();
        assert_eq!(match_end(&r, ByTeam([499, 300]), 9), None);
        let end = match_end(&r, ByTeam([510, 480]), 9).unwrap();
        assert_eq!((end.outcome, end.reason), (Outcome::Win(Team::NorthSouth), EndReason::Target));
        assert_eq!(match_end(&r, ByTeam([510, 510]), 12), None);
        let end = match_end(&r, ByTeam([300, 300]), 99).unwrap();
        assert_eq!((end.outcome, end.reason), (Outcome::Draw, EndReason::HandCap));
        let end = match_end(&r, ByTeam([300, 200]), 99).unwrap();
        assert_eq!(end.reason, EndReason::HandCap);
        // Mercy only when on; at or below -200.
        assert_eq!(match_end(&r, ByTeam([100, -450]), 8), None);
        let mercy = Rules { mercy: true, ..r };
        assert_eq!(match_end(&mercy, ByTeam([100, -199]), 8), None);
        let end = match_end(&mercy, ByTeam([100, -200]), 8).unwrap();
        assert_eq!((end.outcome, end.reason), (Outcome::Win(Team::NorthSouth), EndReason::Mercy));
        // Fixed hands.
        let fixed = Rules { match_end: MatchEnd::Hands(5), ..r };
        assert_eq!(match_end(&fixed, ByTeam([900, 0]), 4), None);
        assert_eq!(match_end(&fixed, ByTeam([10, 10]), 5), None);
        let end = match_end(&fixed, ByTeam([10, 20]), 6).unwrap();
        assert_eq!((end.outcome, end.reason), (Outcome::Win(Team::EastWest), EndReason::Hands));
    }
}
