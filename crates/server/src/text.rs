//! Text a player typed that everybody will see: which names are accepted,
//! and when two names are the same name.

use unicode_normalization::UnicodeNormalization;

/// The longest display name of a player, in characters.
pub const PLAYER_NAME_MAX: usize = 24;

/// Checks a display name: trimmed, 1..=`max` characters, no control
/// characters and none of the invisible characters that could make a name
/// pass for another ([`is_spoofing`]). Names with them are refused, not
/// stripped, so what a player typed is what everybody sees.
pub fn clean_name(raw: &str, max: usize) -> Option<String> {
    let name = raw.trim();
    let ok = !name.is_empty()
        && name.chars().count() <= max
        && !name.chars().any(|c| c.is_control() || is_spoofing(c));
    ok.then(|| name.to_owned())
}

/// Characters refused in names: bidirectional embeddings, overrides,
/// isolates and marks (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
/// U+061C), which reorder the text around them, zero-width characters
/// (U+200B–U+200D, U+2060, U+FEFF), which hide inside a name, and the line
/// and paragraph separators (U+2028, U+2029).
pub fn is_spoofing(c: char) -> bool {
    matches!(
        c,
        '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{061C}'
            | '\u{200B}'..='\u{200D}'
            | '\u{2060}'
            | '\u{FEFF}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// The form two display names are compared in: NFKC, case-folded (the
/// lower case of the upper case of the NFKC form, which folds "ß" to "ss"
/// and "ς" to "σ" as full case folding does, normalized again), every run
/// of white space one space. "ANN", "ann" and "Ａｎｎ" (full-width) have
/// one key.
pub fn name_key(name: &str) -> String {
    let nfkc: String = name.nfkc().collect();
    let folded: String = nfkc.to_uppercase().to_lowercase().nfkc().collect();
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The rule [`name_skeleton`] follows, kept with each stored skeleton so
/// that rows made under an older rule are made again at start-up
/// (`Accounts::rekey_names`): 1, the skeleton of the [`name_key`]; 2, the
/// skeleton taken before case folding too.
pub const NAME_SKELETON_RULE: i64 = 2;

/// The confusable skeleton of a name (Unicode UTS 39): names that look
/// alike have one skeleton ("Ann" with a Cyrillic "а", "rn" and "m", "l"
/// and "1"). Two display names are the same name when their skeletons are
/// equal.
///
/// Some letters look like a Latin one in one case only: the Cyrillic
/// capital "М" is an "M", its small "м" like no Latin letter; "rn" is an
/// "m" only in small letters. So the skeleton is taken twice: of the name
/// in capitals (every case of it alike), then of that folded as
/// [`name_key`] folds. Taking it of the folded name alone would let "Маrlo"
/// pass for "Marlo".
pub fn name_skeleton(name: &str) -> String {
    use unicode_security::confusable_detection::skeleton;
    let capitals: String = name.nfkc().collect::<String>().to_uppercase();
    let first: String = skeleton(&capitals).collect();
    skeleton(&name_key(&first)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cleaned() {
        assert_eq!(clean_name("  Ann ", 24), Some("Ann".into()));
        assert_eq!(clean_name("", 24), None);
        assert_eq!(clean_name("   ", 24), None);
        assert_eq!(clean_name("a\u{7}b", 24), None);
        assert_eq!(clean_name(&"x".repeat(25), 24), None);
        assert_eq!(clean_name(&"é".repeat(24), 24), Some("é".repeat(24)));
    }

    #[test]
    fn names_are_the_same_after_case_folding_nfkc_and_confusables() {
        let same = |a: &str, b: &str| name_skeleton(a) == name_skeleton(b);
        assert_eq!(name_key("  ANN   Lee "), "ann lee");
        assert_eq!(name_key("Ａｎｎ"), "ann", "full-width letters are NFKC-folded");
        assert!(same("Ann", "ann"));
        assert!(same("Ann", "ANN"));
        assert!(same("Ann", "\u{0410}nn"), "Cyrillic capital A");
        assert!(same("Marlo", "\u{041c}\u{0430}rlo"), "Cyrillic capital Em and small a");
        assert!(same("marlo", "\u{041c}arlo"), "a capital that looks Latin only as a capital");
        assert!(same("PAUL", "\u{0420}\u{0410}UL"), "Cyrillic capitals Er and A");
        assert!(same("ann", "\u{0430}nn"), "Cyrillic small a");
        assert!(same("Bern", "Bem"), "rn looks like m");
        assert!(same("Paul", "Pau1"), "1 looks like l");
        assert!(same("Ann Lee", "Ann  Lee"));
        assert!(same("Straße", "STRASSE"), "full case folding of ß");
        assert!(same("\u{39F}\u{394}\u{39F}\u{3A3}", "\u{3BF}\u{3B4}\u{3BF}\u{3C2}"), "final sigma");
        assert!(!same("Ann", "Anne"));
        assert!(!same("Ann", "Bo"));
        assert!(!same("مريم", "Ann"));
    }

    #[test]
    fn names_cannot_spoof() {
        let spoofers = [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
            '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}', '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}',
            '\u{FEFF}', '\u{2028}', '\u{2029}',
        ];
        for c in spoofers {
            assert!(is_spoofing(c), "U+{:04X}", u32::from(c));
            assert_eq!(clean_name(&format!("A{c}nn"), 24), None, "U+{:04X} inside", u32::from(c));
            // The separators are white space: trimmed at the ends like spaces.
            if !c.is_whitespace() {
                assert_eq!(clean_name(&format!("Ann{c}"), 24), None, "U+{:04X} at the end", u32::from(c));
                assert_eq!(clean_name(&c.to_string(), 24), None, "U+{:04X} alone", u32::from(c));
            }
        }
        // "Ann" shown as "nnA" by a right-to-left override.
        assert_eq!(clean_name("\u{202E}nnA", 24), None);
        // Letters of right-to-left scripts and ordinary accents are names.
        assert_eq!(clean_name("مريم", 24), Some("مريم".into()));
        assert_eq!(clean_name("שרה", 24), Some("שרה".into()));
        assert_eq!(clean_name("Zoë Łucja", 24), Some("Zoë Łucja".into()));
        assert!(
            !is_spoofing(' ') && !is_spoofing('a') && !is_spoofing('\u{2030}') && !is_spoofing('\u{2065}')
        );
    }
}
