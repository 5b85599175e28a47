//! Table options (SPEC §3): how the match ends, nil, bags, failed-nil
//! tricks, leading spades and the mercy rule.

use serde::{Deserialize, Serialize};

/// How a match ends.
///
/// Serialised as `{"target": 500}` or `{"hands": 5}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MatchEnd {
    /// After a hand in which at least one team reached this many points, the
    /// higher score wins.
    Target(i32),
    /// After this many hands, the higher score wins.
    Hands(u16),
}

/// The value of a nil bid, or nil switched off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NilRule {
    /// Nil allowed: +100 made, −100 failed.
    #[default]
    Hundred,
    /// Nil allowed: +50 made, −50 failed.
    Fifty,
    /// No nil: bids are 1..=13.
    Off,
}

impl NilRule {
    /// Points won (or lost) by a nil; 0 when nil is off.
    pub const fn value(self) -> i32 {
        match self {
            NilRule::Hundred => 100,
            NilRule::Fifty => 50,
            NilRule::Off => 0,
        }
    }

    /// The lowest bid allowed: 0 with nil, 1 without.
    pub const fn min_bid(self) -> u8 {
        match self {
            NilRule::Off => 1,
            _ => 0,
        }
    }
}

/// What accumulated bags (overtricks) cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum BagPenalty {
    /// Every 10 bags cost 100 points; the count keeps the remainder.
    #[default]
    TenForHundred,
    /// Every 5 bags cost 50 points; the count keeps the remainder.
    FiveForFifty,
    /// Bags still score +1 each and are counted, but never cost anything.
    Off,
}

impl BagPenalty {
    /// `(bags per penalty, points per penalty)`, or `None` when off.
    pub const fn threshold(self) -> Option<(u8, i32)> {
        match self {
            BagPenalty::TenForHundred => Some((10, 100)),
            BagPenalty::FiveForFifty => Some((5, 50)),
            BagPenalty::Off => None,
        }
    }
}

/// What the tricks of a nil bidder count for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FailedNil {
    /// Only as bags for the team (+1 point and one bag each); never toward the
    /// partner's contract. The Pagat rule and the default.
    #[default]
    BagsOnly,
    /// Toward the team's contract, like the partner's tricks (overtricks are
    /// then bags as usual).
    CountForPartner,
}

/// When a spade may be led.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SpadesLead {
    /// Not until a spade has been played, unless the leader holds only spades.
    #[default]
    AfterBroken,
    /// At any time.
    AnyTime,
}

/// The score at or below which a team loses at once when the mercy rule is on.
pub const MERCY_FLOOR: i32 = -200;

/// The safety cap: no match lasts more than this many hands.
pub const HAND_CAP: u16 = 99;

/// The options of one table, fixed before the first deal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// How the match ends (default: first to 500).
    #[serde(default = "default_match_end")]
    #[cfg_attr(feature = "schema", schema(default = json!({"target": 500})))]
    pub match_end: MatchEnd,
    /// Nil value or off (default ±100).
    #[serde(default)]
    pub nil: NilRule,
    /// Bag penalty (default 10 bags cost 100).
    #[serde(default)]
    pub bag_penalty: BagPenalty,
    /// What a nil bidder's tricks count for (default: only bags).
    #[serde(default)]
    pub failed_nil: FailedNil,
    /// When spades may be led (default: once broken).
    #[serde(default)]
    pub spades_lead: SpadesLead,
    /// Mercy rule: a team at −200 or below loses at once (default off).
    #[serde(default)]
    pub mercy: bool,
}

const fn default_match_end() -> MatchEnd {
    MatchEnd::Target(500)
}

impl Default for Rules {
    fn default() -> Rules {
        Rules {
            match_end: default_match_end(),
            nil: NilRule::default(),
            bag_penalty: BagPenalty::default(),
            failed_nil: FailedNil::default(),
            spades_lead: SpadesLead::default(),
            mercy: false,
        }
    }
}

/// Target scores a table may choose.
pub const TARGET_CHOICES: [i32; 4] = [200, 250, 300, 500];
/// Fixed match lengths (in hands) a table may choose.
pub const HANDS_CHOICES: [u16; 3] = [5, 9, 11];

/// Why a set of options is not one a table may choose.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RulesError {
    /// The target score is not on the menu.
    #[error("match target must be one of 200, 250, 300 or 500 points (got {0})")]
    Target(i32),
    /// The number of hands is not on the menu.
    #[error("a fixed-length match must be 5, 9 or 11 hands (got {0})")]
    Hands(u16),
}

impl Rules {
    /// Checks that these are options a table may offer (SPEC §3): target
    /// 200/250/300/500 or 5/9/11 hands. The engine itself plays any positive
    /// target or hand count (test data uses others); servers call this at
    /// the boundary.
    ///
    /// # Errors
    /// [`RulesError`] naming the value that is not allowed.
    pub fn check(&self) -> Result<(), RulesError> {
        match self.match_end {
            MatchEnd::Target(t) if !TARGET_CHOICES.contains(&t) => Err(RulesError::Target(t)),
            MatchEnd::Hands(h) if !HANDS_CHOICES.contains(&h) => Err(RulesError::Hands(h)),
            _ => Ok(()),
        }
    }

    /// The lowest bid allowed at this table (0, or 1 with nil off).
    pub const fn min_bid(&self) -> u8 {
        self.nil.min_bid()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_spec_defaults() {
        let rules = Rules::default();
        assert_eq!(rules.match_end, MatchEnd::Target(500));
        assert_eq!(rules.nil.value(), 100);
        assert_eq!(rules.bag_penalty.threshold(), Some((10, 100)));
        assert_eq!(rules.failed_nil, FailedNil::BagsOnly);
        assert_eq!(rules.spades_lead, SpadesLead::AfterBroken);
        assert!(!rules.mercy);
        assert_eq!(rules.check(), Ok(()));
        // Every field is optional in JSON and defaults as above.
        assert_eq!(serde_json::from_str::<Rules>("{}").unwrap(), rules);
    }

    #[test]
    fn json_form() {
        let rules: Rules = serde_json::from_str(
            r#"{"match_end":{"hands":9},"nil":"off","bag_penalty":"five_for_fifty",
                "failed_nil":"count_for_partner","spades_lead":"any_time","mercy":true}"#,
        )
        .unwrap();
        assert_eq!(rules.match_end, MatchEnd::Hands(9));
        assert_eq!(rules.min_bid(), 1);
        assert_eq!(rules.bag_penalty.threshold(), Some((5, 50)));
        assert!(serde_json::from_str::<Rules>(r#"{"colour":"red"}"#).is_err());
        assert!(serde_json::from_str::<Rules>(r#"{"nil":"twenty"}"#).is_err());
    }

    #[test]
    fn check_refuses_values_off_the_menu() {
        let mut rules = Rules { match_end: MatchEnd::Target(450), ..Rules::default() };
        assert_eq!(rules.check(), Err(RulesError::Target(450)));
        rules.match_end = MatchEnd::Hands(10);
        assert_eq!(rules.check(), Err(RulesError::Hands(10)));
        for t in TARGET_CHOICES {
            rules.match_end = MatchEnd::Target(t);
            assert_eq!(rules.check(), Ok(()));
        }
        for h in HANDS_CHOICES {
            rules.match_end = MatchEnd::Hands(h);
            assert_eq!(rules.check(), Ok(()));
        }
    }
}
