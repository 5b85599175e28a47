//! Provably fair deals: every deal of a match from a committed server seed,
//! the players' own seeds and the table id, through HMAC-SHA256.
//!
//! The scheme (version 1, described for implementers in `docs/fairness.md`):
//!
//! - **Commitment**: `SHA-256(server_seed)`, the 32 bytes of the server seed
//!   hashed as they are.
//! - **Match key**: `HMAC-SHA256(key = server_seed, message = "spades-fair/v1"
//!   ‖ table id (16 bytes) ‖ for North, East, South, West: 0x00 when the seat
//!   gave no seed, else 0x01 ‖ its 32-byte seed)`.
//! - **First dealer**: the top two bits of the first byte of
//!   `HMAC-SHA256(match key, "first-dealer")`, as a seat index (0 North,
//!   1 East, 2 South, 3 West).
//! - **Hand `n`**: a stream of 32-bit big-endian words, block `b` (from 0)
//!   being `HMAC-SHA256(match key, "deal" ‖ n as 2 bytes BE ‖ b as 4 bytes
//!   BE)`, eight words a block. The deck is the card indices 0..52 (suit ×
//!   13 + rank; clubs, diamonds, hearts, spades; two … ace) in order; for
//!   `i` from 51 down to 1, draw words until one is below `2³² − (2³² mod
//!   (i + 1))`, let `j` be that word mod `(i + 1)`, and swap positions `i`
//!   and `j`. Card `k` of the shuffled deck goes to the seat `k + 1` places
//!   left of the dealer, as in every deal.
//! - **Bots' randomness** (no effect on the cards): the first 8 bytes, big
//!   endian, of `HMAC-SHA256(match key, "bots")`.
//! - **A player's commitment to its seed** (sent before any seed is shown):
//!   `SHA-256("spades-seed/v1" ‖ table id (16 bytes) ‖ seat index (1 byte)
//!   ‖ seed)`, so a commitment holds for one seat of one table only.
//!
//! Nothing here draws randomness: the seeds are inputs, so the engine stays
//! pure and every fair match replays exactly.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

use crate::card::CardSet;
use crate::seat::{BySeat, Seat};

/// The version of the fair-deal scheme implemented here.
pub const FAIR_VERSION: u8 = 1;

/// The domain string that starts the match key's message.
const DOMAIN: &[u8] = b"spades-fair/v1";

/// HMAC-SHA256 (RFC 2104) of the concatenation of `parts` under `key`.
pub fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > block.len() {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    for part in parts {
        inner.update(part);
    }
    let inner = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner);
    outer.finalize().into()
}

/// A 32-byte value written as 64 hex digits was not readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a seed or commitment is 64 hexadecimal digits (32 bytes)")]
pub struct ParseSeedError;

fn to_hex(bytes: &[u8; 32]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(64);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

fn from_hex(s: &str) -> Result<[u8; 32], ParseSeedError> {
    let digits = s.as_bytes();
    if digits.len() != 64 {
        return Err(ParseSeedError);
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(ParseSeedError),
    };
    let mut out = [0u8; 32];
    for (i, pair) in digits.chunks_exact(2).enumerate() {
        out[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Ok(out)
}

macro_rules! hex32 {
    ($name:ident) => {
        impl $name {
            /// From its 32 bytes.
            pub const fn from_bytes(bytes: [u8; 32]) -> $name {
                $name(bytes)
            }

            /// Its 32 bytes.
            pub const fn as_bytes(&self) -> &[u8; 32] {
                &self.0
            }

            /// Its 64 lower-case hex digits.
            pub fn to_hex(&self) -> String {
                to_hex(&self.0)
            }
        }

        impl FromStr for $name {
            type Err = ParseSeedError;

            /// Reads 64 hex digits (either case).
            fn from_str(s: &str) -> Result<$name, ParseSeedError> {
                from_hex(s).map($name)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.to_hex())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$name, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// The server's secret seed of a fair match: kept secret until the match is
/// over, then revealed so anyone can check it against its [`Commitment`].
/// `Debug` never shows it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ServerSeed([u8; 32]);
hex32!(ServerSeed);

impl ServerSeed {
    /// The public commitment to this seed: its SHA-256.
    pub fn commitment(&self) -> Commitment {
        Commitment(Sha256::digest(self.0).into())
    }
}

impl fmt::Debug for ServerSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerSeed(***)")
    }
}

/// A player's own random contribution to a fair match's deals (public).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientSeed([u8; 32]);
hex32!(ClientSeed);

/// The domain string of a player's commitment to its seed.
const SEED_DOMAIN: &[u8] = b"spades-seed/v1";

impl ClientSeed {
    /// The commitment a player sends for this seed at `seat` of `table`
    /// before any seed is revealed.
    pub fn commitment(&self, table: [u8; 16], seat: Seat) -> Commitment {
        let mut h = Sha256::new();
        h.update(SEED_DOMAIN);
        h.update(table);
        h.update([seat.index()]);
        h.update(self.0);
        Commitment(h.finalize().into())
    }
}

impl fmt::Debug for ClientSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClientSeed({})", self.to_hex())
    }
}

impl fmt::Display for ClientSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// SHA-256 of a [`ServerSeed`]: published when the seed is drawn, before any
/// player's seed is taken.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Commitment([u8; 32]);
hex32!(Commitment);

impl fmt::Debug for Commitment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Commitment({})", self.to_hex())
    }
}

impl fmt::Display for Commitment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// Everything a fair match's deals come from: the server seed, each seat's
/// seed (if it gave one) and the table id. `Debug` shows the commitment and
/// the players' seeds, never the server seed or the match key.
#[derive(Clone, PartialEq, Eq)]
pub struct FairSeeds {
    table: [u8; 16],
    server: ServerSeed,
    clients: BySeat<Option<ClientSeed>>,
    /// The match key derived from the three above.
    key: [u8; 32],
    /// The commitment to `server`, computed once (every frame shows it).
    commitment: Commitment,
}

impl fmt::Debug for FairSeeds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FairSeeds")
            .field("table", &to_hex16(&self.table))
            .field("commitment", &self.commitment)
            .field("clients", &self.clients)
            .finish_non_exhaustive()
    }
}

fn to_hex16(bytes: &[u8; 16]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl FairSeeds {
    /// The seeds of a match at the table with id `table` (its 16 bytes, as
    /// a UUID is written, most significant first).
    pub fn new(table: [u8; 16], server: ServerSeed, clients: BySeat<Option<ClientSeed>>) -> FairSeeds {
        let mut message = Vec::with_capacity(DOMAIN.len() + 16 + 4 * 33);
        message.extend_from_slice(DOMAIN);
        message.extend_from_slice(&table);
        for (_, seed) in clients.iter() {
            match seed {
                None => message.push(0),
                Some(s) => {
                    message.push(1);
                    message.extend_from_slice(&s.0);
                }
            }
        }
        let key = hmac_sha256(&server.0, &[&message]);
        let commitment = server.commitment();
        FairSeeds { table, server, clients, key, commitment }
    }

    /// The table id's bytes.
    pub const fn table(&self) -> &[u8; 16] {
        &self.table
    }

    /// The server seed (secret until the match is over: trusted code only).
    pub const fn server_seed(&self) -> &ServerSeed {
        &self.server
    }

    /// The commitment to the server seed.
    pub const fn commitment(&self) -> Commitment {
        self.commitment
    }

    /// Each seat's seed, `None` where the seat gave none.
    pub const fn client_seeds(&self) -> &BySeat<Option<ClientSeed>> {
        &self.clients
    }

    /// The first dealer of the match.
    pub fn first_dealer(&self) -> Seat {
        let h = hmac_sha256(&self.key, &[b"first-dealer"]);
        Seat::ALL[usize::from(h[0] >> 6)]
    }

    /// The 64-bit seed of the bots' own randomness in this match (it never
    /// changes a card).
    pub fn bot_seed(&self) -> u64 {
        let h = hmac_sha256(&self.key, &[b"bots"]);
        u64::from_be_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]])
    }

    /// The deal of hand `hand_number` (1-based) with `dealer` dealing.
    pub fn deal(&self, hand_number: u16, dealer: Seat) -> BySeat<CardSet> {
        let mut words = Words { key: &self.key, hand: hand_number, block: 0, buf: [0; 8], next: 8 };
        let mut deck: [u8; 52] = std::array::from_fn(|i| i as u8);
        for i in (1..deck.len()).rev() {
            let n = i as u64 + 1;
            // The largest multiple of n that fits in 32 bits: words at or
            // above it are drawn again, so every j is equally likely.
            let limit = (1u64 << 32) - (1u64 << 32) % n;
            let j = loop {
                let w = u64::from(words.next_word());
                if w < limit {
                    break (w % n) as usize;
                }
            };
            deck.swap(i, j);
        }
        let mut bits = [0u64; 4];
        for (k, &index) in deck.iter().enumerate() {
            bits[(usize::from(dealer.index()) + 1 + k) % 4] |= 1 << index;
        }
        BySeat(bits.map(CardSet::from_bits))
    }
}

/// The 32-bit words of one hand's HMAC stream.
struct Words<'a> {
    key: &'a [u8; 32],
    hand: u16,
    block: u32,
    buf: [u32; 8],
    next: usize,
}

impl Words<'_> {
    fn next_word(&mut self) -> u32 {
        if self.next == self.buf.len() {
            let h = hmac_sha256(self.key, &[b"deal", &self.hand.to_be_bytes(), &self.block.to_be_bytes()]);
            for (w, chunk) in self.buf.iter_mut().zip(h.chunks_exact(4)) {
                *w = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            }
            self.block += 1;
            self.next = 0;
        }
        self.next += 1;
        self.buf[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: [u8; 16] = *b"\x67\xe5\x50\x44\x10\xb1\x42\x6f\x92\x47\xbb\x68\x0e\x5f\xe0\xc8";

    fn seeds(clients: [Option<u8>; 4]) -> FairSeeds {
        FairSeeds::new(
            TABLE,
            ServerSeed::from_bytes([7; 32]),
            BySeat(clients.map(|c| c.map(|b| ClientSeed::from_bytes([b; 32])))),
        )
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        assert_eq!(
            to_hex(&hmac_sha256(b"Jefe", &[b"what do ya want ", b"for nothing?"])),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        assert_eq!(
            to_hex(&hmac_sha256(&[0xaa; 131], &[b"Test Using Larger Than Block-Size Key - Hash Key First"])),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn the_commitment_is_the_seeds_sha256() {
        let seed = ServerSeed::from_bytes([0; 32]);
        assert_eq!(
            seed.commitment().to_hex(),
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
        );
        assert_ne!(ServerSeed::from_bytes([1; 32]).commitment(), seed.commitment());
    }

    #[test]
    fn hex_round_trips_and_refuses_junk() {
        let s: ClientSeed = "00FF".repeat(16).parse().unwrap();
        assert_eq!(s.to_hex(), "00ff".repeat(16));
        for bad in ["", "00", &"0".repeat(63), &"0".repeat(65), &"g".repeat(64), &"é".repeat(32)] {
            assert_eq!(bad.parse::<ClientSeed>(), Err(ParseSeedError), "{bad}");
        }
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<ClientSeed>(&json).unwrap(), s);
        assert!(serde_json::from_str::<ClientSeed>("\"12\"").is_err());
    }

    #[test]
    fn debug_never_shows_the_server_seed_or_the_key() {
        let f = seeds([Some(1), None, None, Some(2)]);
        let printed = format!("{f:?} {:?}", f.server_seed());
        assert!(!printed.contains(&"07".repeat(32)), "{printed}");
        assert!(!printed.contains(&to_hex(&f.key)), "{printed}");
        assert!(printed.contains(&f.commitment().to_hex()), "{printed}");
        assert!(printed.contains(&"01".repeat(32)), "{printed}");
    }

    #[test]
    fn fair_deals_are_complete_and_deterministic() {
        let f = seeds([Some(1), Some(2), Some(3), Some(4)]);
        for hand in 1..60 {
            let hands = f.deal(hand, Seat::ALL[usize::from(hand % 4)]);
            let mut all = CardSet::EMPTY;
            for (_, h) in hands.iter() {
                assert_eq!(h.len(), 13);
                assert!(all.and(*h).is_empty());
                all = all.or(*h);
            }
            assert_eq!(all, CardSet::FULL);
        }
        assert_eq!(f.deal(3, Seat::East), seeds([Some(1), Some(2), Some(3), Some(4)]).deal(3, Seat::East));
        assert_ne!(f.deal(3, Seat::East), f.deal(4, Seat::East));
    }

    #[test]
    fn changing_any_one_input_changes_every_deal() {
        let base = seeds([Some(1), Some(2), None, Some(4)]);
        let others = [
            seeds([Some(9), Some(2), None, Some(4)]),
            seeds([Some(1), Some(9), None, Some(4)]),
            seeds([Some(1), Some(2), Some(9), Some(4)]),
            seeds([Some(1), Some(2), None, None]),
            seeds([Some(2), Some(1), None, Some(4)]),
            FairSeeds::new([0; 16], *base.server_seed(), *base.client_seeds()),
            FairSeeds::new(TABLE, ServerSeed::from_bytes([8; 32]), *base.client_seeds()),
        ];
        for other in &others {
            for hand in 1..=20 {
                assert_ne!(base.deal(hand, Seat::North), other.deal(hand, Seat::North), "{other:?} {hand}");
            }
        }
    }

    #[test]
    fn first_dealers_are_roughly_uniform() {
        let mut counts = [0u32; 4];
        for i in 0..2000u32 {
            let mut server = [0u8; 32];
            server[..4].copy_from_slice(&i.to_be_bytes());
            let f = FairSeeds::new(TABLE, ServerSeed::from_bytes(server), BySeat([None; 4]));
            counts[usize::from(f.first_dealer().index())] += 1;
        }
        for c in counts {
            assert!((400..600).contains(&c), "{counts:?}");
        }
    }

    /// Pins the scheme: `docs/fairness.md` gives this example, and the
    /// browser's verifier is tested against the same numbers.
    #[test]
    fn the_documented_example_is_stable() {
        let f = seeds([Some(1), None, Some(3), None]);
        assert_eq!(f.commitment().to_hex(), PINNED_COMMITMENT);
        assert_eq!(f.first_dealer(), PINNED_DEALER);
        assert_eq!(f.deal(1, f.first_dealer()).map(|_, h| h.to_string()).0, PINNED_DEAL);
        assert_eq!(f.bot_seed(), 0xa7e9_60af_5224_8302);
        let second = f.first_dealer().next();
        assert_eq!(f.deal(2, second).map(|_, h| h.to_string()).0, PINNED_DEAL_2);
        // The players' commitments to their seeds, at their own seats.
        let north = ClientSeed::from_bytes([1; 32]).commitment(TABLE, Seat::North);
        assert_eq!(north.to_hex(), "6cd9776c5a124fd9e297c916a358cae53abd63701718a7361e87f0c4e035ac29");
        let south = ClientSeed::from_bytes([3; 32]).commitment(TABLE, Seat::South);
        assert_eq!(south.to_hex(), "c0bd072000ef9582551e33852ce4de85f1b269635339082c1d1f4e8acde35d8b");
        assert_ne!(ClientSeed::from_bytes([1; 32]).commitment(TABLE, Seat::East), north, "one seat's only");
    }

    const PINNED_COMMITMENT: &str = "4bb06f8e4e3a7715d201d573d0aa423762e55dabd61a2c02278fa56cc6d294e0";
    const PINNED_DEALER: Seat = Seat::South;
    const PINNED_DEAL_2: [&str; 4] = [
        "6C AC 2D 5D 9D KD 2H 3H 9H AH 3S 5S 9S",
        "7C 9C TC KC 6D 8D QD QH KH 4S 7S TS JS",
        "2C 3C 4C 5C 8C QC 7D AD 4H 5H 2S QS AS",
        "JC 3D 4D TD JD 6H 7H 8H TH JH 6S 8S KS",
    ];
    const PINNED_DEAL: [&str; 4] = [
        "6C JC 9D JD QD AD 2H 5H 6H AH 2S 8S JS",
        "5C 9C QC KC AC 4H 9H KH 4S 5S 7S 9S KS",
        "2C 4C 8C TC 3D 4D 5D 7D 3H 7H JH QH QS",
        "3C 7C 2D 6D 8D TD KD 8H TH 3S 6S TS AS",
    ];
}
