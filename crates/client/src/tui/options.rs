//! The options of a new table, chosen in the terminal one key at a time:
//! each key cycles one option through its menu (SPEC §3).

use spades_engine::{BagPenalty, FailedNil, MatchEnd, NilRule, SpadesLead};
use spades_protocol::{TableOptions, Tempo};

/// The match ends, in the order the key cycles them.
const MATCH_ENDS: [MatchEnd; 7] = [
    MatchEnd::Target(500),
    MatchEnd::Target(300),
    MatchEnd::Target(250),
    MatchEnd::Target(200),
    MatchEnd::Hands(5),
    MatchEnd::Hands(9),
    MatchEnd::Hands(11),
];

fn next<T: PartialEq + Copy>(menu: &[T], current: T) -> T {
    let i = menu.iter().position(|x| *x == current).map_or(0, |i| (i + 1) % menu.len());
    menu[i]
}

/// Cycles the option of `key`; false when the key is no option's.
pub fn cycle(o: &mut TableOptions, key: char) -> bool {
    let r = &mut o.rules;
    match key {
        'm' => r.match_end = next(&MATCH_ENDS, r.match_end),
        'n' => r.nil = next(&[NilRule::Hundred, NilRule::Fifty, NilRule::Off], r.nil),
        'p' => {
            r.bag_penalty =
                next(&[BagPenalty::TenForHundred, BagPenalty::FiveForFifty, BagPenalty::Off], r.bag_penalty);
        }
        'f' => r.failed_nil = next(&[FailedNil::BagsOnly, FailedNil::CountForPartner], r.failed_nil),
        'l' => r.spades_lead = next(&[SpadesLead::AfterBroken, SpadesLead::AnyTime], r.spades_lead),
        'x' => r.mercy = !r.mercy,
        't' => o.tempo = next(&[Tempo::Relaxed, Tempo::Normal, Tempo::Fast], o.tempo),
        'c' => o.spectator_chat = !o.spectator_chat,
        _ => return false,
    }
    true
}

/// Each option as `(key, what, value)`, for the screen.
pub fn describe(o: &TableOptions) -> [(char, &'static str, String); 8] {
    let r = &o.rules;
    [
        (
            'm',
            "match end",
            match r.match_end {
                MatchEnd::Target(t) => format!("first to {t}"),
                MatchEnd::Hands(h) => format!("{h} hands"),
            },
        ),
        (
            'n',
            "nil",
            match r.nil {
                NilRule::Hundred => "±100".into(),
                NilRule::Fifty => "±50".into(),
                NilRule::Off => "off (bids 1-13)".into(),
            },
        ),
        (
            'p',
            "bag penalty",
            match r.bag_penalty {
                BagPenalty::TenForHundred => "10 bags cost 100".into(),
                BagPenalty::FiveForFifty => "5 bags cost 50".into(),
                BagPenalty::Off => "off".into(),
            },
        ),
        (
            'f',
            "nil bidder's tricks",
            match r.failed_nil {
                FailedNil::BagsOnly => "only bags".into(),
                FailedNil::CountForPartner => "count for the partner".into(),
            },
        ),
        (
            'l',
            "leading spades",
            match r.spades_lead {
                SpadesLead::AfterBroken => "once broken".into(),
                SpadesLead::AnyTime => "any time".into(),
            },
        ),
        ('x', "mercy rule", if r.mercy { "on (-200 loses)".into() } else { "off".into() }),
        (
            't',
            "tempo",
            match o.tempo {
                Tempo::Relaxed => "relaxed (60 s a card)".into(),
                Tempo::Normal => "normal (30 s a card)".into(),
                Tempo::Fast => "fast (15 s a card)".into(),
            },
        ),
        ('c', "spectators", if o.spectator_chat { "may chat".into() } else { "only read the chat".into() }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_cycles_its_menu_back_to_the_start() {
        for (key, len) in [('m', 7), ('n', 3), ('p', 3), ('f', 2), ('l', 2), ('x', 2), ('t', 3), ('c', 2)] {
            let mut o = TableOptions::default();
            let mut seen = vec![o];
            for _ in 1..len {
                assert!(cycle(&mut o, key));
                assert!(!seen.contains(&o), "{key}: {o:?} again too soon");
                seen.push(o);
            }
            assert!(cycle(&mut o, key));
            assert_eq!(o, TableOptions::default(), "{key} comes back to the default");
        }
        assert!(!cycle(&mut TableOptions::default(), 'z'));
        // Every value the menus offer is one the server accepts.
        let mut o = TableOptions::default();
        for _ in 0..7 {
            cycle(&mut o, 'm');
            assert!(o.rules.check().is_ok(), "{o:?}");
        }
    }
}
