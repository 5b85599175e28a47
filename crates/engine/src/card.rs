//! Suits, ranks, cards and 52-bit card sets.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One of the four suits. Spades are always trump.
///
/// The order (clubs, diamonds, hearts, spades) is the order used for bit
/// positions in a [`CardSet`] and for sorting a hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Suit {
    /// ♣, letter `C`.
    Clubs = 0,
    /// ♦, letter `D`.
    Diamonds = 1,
    /// ♥, letter `H`.
    Hearts = 2,
    /// ♠, letter `S`: always trump.
    Spades = 3,
}

impl Suit {
    /// All suits, clubs first.
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];

    /// The suit with the given index (0 = clubs … 3 = spades), or `None`.
    pub const fn from_index(index: u8) -> Option<Suit> {
        match index {
            0 => Some(Suit::Clubs),
            1 => Some(Suit::Diamonds),
            2 => Some(Suit::Hearts),
            3 => Some(Suit::Spades),
            _ => None,
        }
    }

    /// Index 0..=3 (clubs, diamonds, hearts, spades).
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The single letter used in card names: `C`, `D`, `H`, `S`.
    pub const fn letter(self) -> char {
        match self {
            Suit::Clubs => 'C',
            Suit::Diamonds => 'D',
            Suit::Hearts => 'H',
            Suit::Spades => 'S',
        }
    }

    /// The plural English name used in messages: "clubs", "diamonds", …
    pub const fn name(self) -> &'static str {
        match self {
            Suit::Clubs => "clubs",
            Suit::Diamonds => "diamonds",
            Suit::Hearts => "hearts",
            Suit::Spades => "spades",
        }
    }

    /// Parses a suit letter (either case).
    pub const fn from_letter(c: char) -> Option<Suit> {
        match c {
            'C' | 'c' => Some(Suit::Clubs),
            'D' | 'd' => Some(Suit::Diamonds),
            'H' | 'h' => Some(Suit::Hearts),
            'S' | 's' => Some(Suit::Spades),
            _ => None,
        }
    }
}

impl fmt::Display for Suit {
    /// Writes the plural English name ("hearts").
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A rank, two low and ace high.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)]
pub enum Rank {
    Two = 0,
    Three = 1,
    Four = 2,
    Five = 3,
    Six = 4,
    Seven = 5,
    Eight = 6,
    Nine = 7,
    Ten = 8,
    Jack = 9,
    Queen = 10,
    King = 11,
    Ace = 12,
}

impl Rank {
    /// All ranks, two first.
    pub const ALL: [Rank; 13] = [
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
        Rank::Ace,
    ];

    /// The rank with the given index (0 = two … 12 = ace), or `None`.
    pub const fn from_index(index: u8) -> Option<Rank> {
        if index < 13 { Some(Rank::ALL[index as usize]) } else { None }
    }

    /// Index 0..=12 (two … ace).
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The character used in card names: `2`–`9`, `T`, `J`, `Q`, `K`, `A`.
    pub const fn letter(self) -> char {
        match self {
            Rank::Two => '2',
            Rank::Three => '3',
            Rank::Four => '4',
            Rank::Five => '5',
            Rank::Six => '6',
            Rank::Seven => '7',
            Rank::Eight => '8',
            Rank::Nine => '9',
            Rank::Ten => 'T',
            Rank::Jack => 'J',
            Rank::Queen => 'Q',
            Rank::King => 'K',
            Rank::Ace => 'A',
        }
    }

    /// Parses a rank character (`T` or `t` for ten; `10` is handled by
    /// [`Card::from_str`]).
    pub const fn from_letter(c: char) -> Option<Rank> {
        match c {
            '2' => Some(Rank::Two),
            '3' => Some(Rank::Three),
            '4' => Some(Rank::Four),
            '5' => Some(Rank::Five),
            '6' => Some(Rank::Six),
            '7' => Some(Rank::Seven),
            '8' => Some(Rank::Eight),
            '9' => Some(Rank::Nine),
            'T' | 't' => Some(Rank::Ten),
            'J' | 'j' => Some(Rank::Jack),
            'Q' | 'q' => Some(Rank::Queen),
            'K' | 'k' => Some(Rank::King),
            'A' | 'a' => Some(Rank::Ace),
            _ => None,
        }
    }
}

/// The error returned when a suit or rank name cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a {what}: {text:?}")]
pub struct ParseNameError {
    /// "suit" or "rank".
    pub what: &'static str,
    /// The text that was refused (at most 16 characters).
    pub text: String,
}

impl FromStr for Suit {
    type Err = ParseNameError;

    /// Accepts the letter or the name, in any case: `"H"`, `"hearts"`,
    /// `"heart"`.
    fn from_str(s: &str) -> Result<Suit, ParseNameError> {
        let t = s.trim().to_ascii_lowercase();
        let mut chars = t.chars();
        let by_letter = match (chars.next(), chars.next()) {
            (Some(c), None) => Suit::from_letter(c),
            _ => None,
        };
        by_letter
            .or_else(|| {
                Suit::ALL.into_iter().find(|suit| t == suit.name() || t == suit.name().trim_end_matches('s'))
            })
            .ok_or_else(|| ParseNameError { what: "suit", text: s.chars().take(16).collect() })
    }
}

impl FromStr for Rank {
    type Err = ParseNameError;

    /// Accepts `2`–`9`, `T` or `10`, `J`, `Q`, `K`, `A`, in any case.
    fn from_str(s: &str) -> Result<Rank, ParseNameError> {
        let t = s.trim();
        let mut chars = t.chars();
        let rank = match (chars.next(), chars.next(), chars.next()) {
            (Some(c), None, None) => Rank::from_letter(c),
            (Some('1'), Some('0'), None) => Some(Rank::Ten),
            _ => None,
        };
        rank.ok_or_else(|| ParseNameError { what: "rank", text: s.chars().take(16).collect() })
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// A playing card: rank and suit packed into one byte (`suit * 13 + rank`).
///
/// Written as rank then suit letter: `"AS"`, `"TD"`, `"2C"`. Parsing also
/// accepts lower case and `10` for ten (`"10h"`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Card(u8);

impl Card {
    /// Builds a card from its rank and suit.
    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card(suit as u8 * 13 + rank as u8)
    }

    /// The card with index `0..52` (`suit * 13 + rank`), or `None`.
    pub const fn from_index(index: u8) -> Option<Card> {
        if index < 52 { Some(Card(index)) } else { None }
    }

    /// Index `0..52`; also the card's bit position in a [`CardSet`].
    pub const fn index(self) -> u8 {
        self.0
    }

    /// The card's suit.
    pub const fn suit(self) -> Suit {
        // A table lookup: the masked index needs no bounds check.
        Suit::ALL[(self.0 / 13) as usize & 3]
    }

    /// The card's rank.
    pub const fn rank(self) -> Rank {
        Rank::ALL[(self.0 % 13) as usize]
    }

    /// True for a spade (a trump).
    pub const fn is_spade(self) -> bool {
        self.0 >= 39
    }

    /// All 52 cards, in index order.
    pub fn all() -> impl Iterator<Item = Card> {
        (0..52).map(Card)
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.rank().letter(), self.suit().letter())
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The error returned when a card name cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a card: {0:?} (expected a rank 2-9, T, J, Q, K, A and a suit C, D, H, S, e.g. \"AS\")")]
pub struct ParseCardError(pub String);

impl FromStr for Card {
    type Err = ParseCardError;

    fn from_str(s: &str) -> Result<Card, ParseCardError> {
        let err = || ParseCardError(s.chars().take(16).collect());
        let t = s.trim();
        let mut chars = t.chars();
        let (rank, suit) = match (chars.next(), chars.next(), chars.next(), chars.next()) {
            (Some(r), Some(s), None, None) => (Rank::from_letter(r), Suit::from_letter(s)),
            (Some('1'), Some('0'), Some(s), None) => (Some(Rank::Ten), Suit::from_letter(s)),
            _ => return Err(err()),
        };
        match (rank, suit) {
            (Some(rank), Some(suit)) => Ok(Card::new(rank, suit)),
            _ => Err(err()),
        }
    }
}

impl Serialize for Card {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let bytes = [self.rank().letter() as u8, self.suit().letter() as u8];
        // Both letters are ASCII, so this cannot fail.
        serializer.serialize_str(std::str::from_utf8(&bytes).unwrap_or("??"))
    }
}

impl<'de> Deserialize<'de> for Card {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Card, D::Error> {
        struct CardVisitor;
        impl serde::de::Visitor<'_> for CardVisitor {
            type Value = Card;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a card name such as \"AS\" or \"TD\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Card, E> {
                v.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(CardVisitor)
    }
}

/// A set of cards as a 52-bit mask (bit `i` is the card with index `i`).
///
/// Iteration goes in index order: clubs 2..A, diamonds, hearts, spades. That
/// is also the natural display order of a hand sorted by suit.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CardSet(u64);

const SUIT_MASK: u64 = 0x1FFF;
const FULL_MASK: u64 = (1 << 52) - 1;

impl CardSet {
    /// No cards.
    pub const EMPTY: CardSet = CardSet(0);
    /// The whole 52-card deck.
    pub const FULL: CardSet = CardSet(FULL_MASK);
    /// The thirteen spades.
    pub const SPADES: CardSet = CardSet::suit(Suit::Spades);

    /// All thirteen cards of `suit`.
    pub const fn suit(suit: Suit) -> CardSet {
        CardSet(SUIT_MASK << (suit as u8 * 13))
    }

    /// Builds a set from its raw bits; bits above 51 are dropped.
    pub const fn from_bits(bits: u64) -> CardSet {
        CardSet(bits & FULL_MASK)
    }

    /// The raw bits (bit `i` is the card with index `i`).
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The set holding just `card`.
    pub const fn single(card: Card) -> CardSet {
        CardSet(1 << card.0)
    }

    /// Number of cards.
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// True when the set holds no card.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// True when `card` is in the set.
    pub const fn contains(self, card: Card) -> bool {
        self.0 & (1 << card.0) != 0
    }

    /// Adds `card`.
    pub fn insert(&mut self, card: Card) {
        self.0 |= 1 << card.0;
    }

    /// Removes `card`.
    pub fn remove(&mut self, card: Card) {
        self.0 &= !(1 << card.0);
    }

    /// Cards in both sets.
    pub const fn and(self, other: CardSet) -> CardSet {
        CardSet(self.0 & other.0)
    }

    /// Cards in either set.
    pub const fn or(self, other: CardSet) -> CardSet {
        CardSet(self.0 | other.0)
    }

    /// Cards in `self` but not in `other`.
    pub const fn minus(self, other: CardSet) -> CardSet {
        CardSet(self.0 & !other.0)
    }

    /// True when every card of `self` is in `other`.
    pub const fn is_subset(self, other: CardSet) -> bool {
        self.0 & !other.0 == 0
    }

    /// The cards of one suit.
    pub const fn of_suit(self, suit: Suit) -> CardSet {
        self.and(CardSet::suit(suit))
    }

    /// The ranks held in `suit` as a 13-bit mask (bit 0 = two).
    pub const fn suit_bits(self, suit: Suit) -> u16 {
        ((self.0 >> (suit as u8 * 13)) & SUIT_MASK) as u16
    }

    /// The lowest card by index (lowest suit, then lowest rank).
    pub const fn first(self) -> Option<Card> {
        if self.0 == 0 { None } else { Some(Card(self.0.trailing_zeros() as u8)) }
    }

    /// The highest card by index (spades high, then rank).
    pub const fn last(self) -> Option<Card> {
        if self.0 == 0 { None } else { Some(Card(63 - self.0.leading_zeros() as u8)) }
    }

    /// The highest card of `suit`, if any.
    pub const fn highest_of(self, suit: Suit) -> Option<Card> {
        self.of_suit(suit).last()
    }

    /// The lowest card of `suit`, if any.
    pub const fn lowest_of(self, suit: Suit) -> Option<Card> {
        self.of_suit(suit).first()
    }

    /// The `n`-th card in index order (0-based), if the set has that many.
    ///
    /// Branch-free binary search over popcounts: picking a random legal card
    /// costs the same whatever the card.
    pub fn nth(self, n: u32) -> Option<Card> {
        if n >= self.len() {
            return None;
        }
        let (mut x, mut n, mut pos) = (self.0, n, 0u32);
        for shift in [32u32, 16, 8, 4, 2, 1] {
            let low = x & ((1u64 << shift) - 1);
            let c = low.count_ones();
            // All ones when the card is in the high half.
            let high = u64::from(n >= c).wrapping_neg();
            x = ((x >> shift) & high) | (low & !high);
            n -= c & high as u32;
            pos += shift & high as u32;
        }
        Some(Card(pos as u8))
    }

    /// Iterates over the cards in index order.
    pub const fn iter(self) -> CardSetIter {
        CardSetIter(self.0)
    }
}

impl fmt::Debug for CardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl fmt::Display for CardSet {
    /// Writes the cards separated by spaces, in index order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for card in self.iter() {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            write!(f, "{card}")?;
        }
        Ok(())
    }
}

/// Iterator over the cards of a [`CardSet`], lowest index first.
#[derive(Debug, Clone)]
pub struct CardSetIter(u64);

impl Iterator for CardSetIter {
    type Item = Card;

    fn next(&mut self) -> Option<Card> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as u8;
        self.0 &= self.0 - 1;
        Some(Card(i))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for CardSetIter {
    fn next_back(&mut self) -> Option<Card> {
        if self.0 == 0 {
            return None;
        }
        let i = 63 - self.0.leading_zeros() as u8;
        self.0 &= !(1 << i);
        Some(Card(i))
    }
}

impl ExactSizeIterator for CardSetIter {}

impl IntoIterator for CardSet {
    type Item = Card;
    type IntoIter = CardSetIter;
    fn into_iter(self) -> CardSetIter {
        self.iter()
    }
}

impl FromIterator<Card> for CardSet {
    fn from_iter<I: IntoIterator<Item = Card>>(iter: I) -> CardSet {
        let mut set = CardSet::EMPTY;
        for card in iter {
            set.insert(card);
        }
        set
    }
}

impl FromStr for CardSet {
    type Err = ParseCardError;

    /// Parses cards separated by spaces or commas: `"AS KD 2c"`.
    fn from_str(s: &str) -> Result<CardSet, ParseCardError> {
        s.split([' ', ',']).filter(|p| !p.is_empty()).map(str::parse::<Card>).collect()
    }
}

impl Serialize for CardSet {
    /// A list of card names in index order.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for CardSet {
    /// A list of card names; duplicates are refused.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CardSet, D::Error> {
        let cards = Vec::<Card>::deserialize(deserializer)?;
        let mut set = CardSet::EMPTY;
        for card in cards {
            if set.contains(card) {
                return Err(serde::de::Error::custom(format!("card {card} listed twice")));
            }
            set.insert(card);
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_names_round_trip() {
        for card in Card::all() {
            let name = card.to_string();
            assert_eq!(name.len(), 2);
            assert_eq!(name.parse::<Card>(), Ok(card));
        }
        assert_eq!("10h".parse::<Card>(), Ok(Card::new(Rank::Ten, Suit::Hearts)));
        assert_eq!("as".parse::<Card>(), Ok(Card::new(Rank::Ace, Suit::Spades)));
        assert!("1S".parse::<Card>().is_err());
        assert!("AX".parse::<Card>().is_err());
        assert!("ASS".parse::<Card>().is_err());
        assert!("".parse::<Card>().is_err());
    }

    #[test]
    fn suit_and_rank_names_parse() {
        for suit in Suit::ALL {
            assert_eq!(suit.to_string().parse::<Suit>(), Ok(suit));
            assert_eq!(suit.letter().to_string().parse::<Suit>(), Ok(suit));
        }
        assert_eq!("Heart".parse::<Suit>(), Ok(Suit::Hearts));
        assert!("stars".parse::<Suit>().is_err());
        for rank in Rank::ALL {
            assert_eq!(rank.to_string().parse::<Rank>(), Ok(rank));
        }
        assert_eq!("10".parse::<Rank>(), Ok(Rank::Ten));
        assert!("11".parse::<Rank>().is_err());
    }

    #[test]
    fn card_index_layout() {
        let two_clubs: Card = "2C".parse().unwrap();
        let ace_spades: Card = "AS".parse().unwrap();
        assert_eq!(two_clubs.index(), 0);
        assert_eq!(ace_spades.index(), 51);
        assert!(ace_spades.is_spade());
        assert!(!two_clubs.is_spade());
        assert_eq!(ace_spades.rank(), Rank::Ace);
        assert_eq!(ace_spades.suit(), Suit::Spades);
    }

    #[test]
    fn set_operations() {
        let set: CardSet = "AS KD 2C 9H".parse().unwrap();
        assert_eq!(set.len(), 4);
        assert_eq!(set.to_string(), "2C KD 9H AS");
        assert_eq!(set.of_suit(Suit::Spades).len(), 1);
        assert_eq!(set.highest_of(Suit::Diamonds), Some("KD".parse().unwrap()));
        assert_eq!(set.lowest_of(Suit::Clubs), Some("2C".parse().unwrap()));
        assert_eq!(set.highest_of(Suit::Clubs), Some("2C".parse().unwrap()));
        assert_eq!(set.nth(2), Some("9H".parse().unwrap()));
        assert_eq!(set.nth(4), None);
        assert_eq!(set.iter().next_back(), Some("AS".parse().unwrap()));
        assert_eq!(CardSet::FULL.len(), 52);
        assert_eq!(CardSet::SPADES.len(), 13);
        assert!(set.minus(CardSet::SPADES).is_subset(set));
        assert_eq!(CardSet::from_bits(u64::MAX), CardSet::FULL);
    }

    #[test]
    fn set_serde_refuses_duplicates() {
        let set: CardSet = serde_json::from_str(r#"["AS","2C"]"#).unwrap();
        assert_eq!(serde_json::to_string(&set).unwrap(), r#"["2C","AS"]"#);
        assert!(serde_json::from_str::<CardSet>(r#"["AS","AS"]"#).is_err());
        assert!(serde_json::from_str::<CardSet>(r#"["ZZ"]"#).is_err());
    }
}
