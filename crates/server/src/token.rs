//! Secret tokens for seats and table owners.
//!
//! A token is 32 random bytes from the operating system (256 bits), written
//! as 64 hex digits. The server keeps only its SHA-256 hash and compares
//! hashes in constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The SHA-256 hash of a token: what the server stores.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TokenHash(pub [u8; 32]);

impl std::fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print even the hash in full.
        write!(f, "TokenHash({}…)", hex::encode(&self.0[..4]))
    }
}

impl TokenHash {
    /// Hashes a token presented by a client.
    pub fn of(token: &str) -> TokenHash {
        TokenHash(Sha256::digest(token.as_bytes()).into())
    }

    /// True when `token` hashes to this value (constant-time comparison).
    pub fn matches(&self, token: &str) -> bool {
        TokenHash::of(token).0.ct_eq(&self.0).into()
    }

    /// The hash as 64 hex digits (for storage).
    pub fn to_hex(self) -> String {
        hex::encode(self.0)
    }

    /// Reads a stored hash.
    pub fn from_hex(s: &str) -> Option<TokenHash> {
        let bytes = hex::decode(s).ok()?;
        Some(TokenHash(bytes.try_into().ok()?))
    }
}

/// A new random token and its hash.
///
/// # Errors
/// When the operating system's random source fails.
pub fn new_token() -> Result<(String, TokenHash), getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    let token = hex::encode(bytes);
    let hash = TokenHash::of(&token);
    Ok((token, hash))
}

/// A random 256-bit server seed for a fair match.
///
/// # Errors
/// When the operating system's random source fails.
pub fn new_server_seed() -> Result<spades_engine::ServerSeed, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(spades_engine::ServerSeed::from_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_unique_and_match_only_themselves() {
        let (a, ha) = new_token().unwrap();
        let (b, hb) = new_token().unwrap();
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(ha.matches(&a));
        assert!(!ha.matches(&b));
        assert!(!hb.matches(""));
        assert_eq!(TokenHash::from_hex(&ha.to_hex()), Some(ha));
        assert_eq!(TokenHash::from_hex("zz"), None);
        assert!(!format!("{ha:?}").contains(&ha.to_hex()));
    }
}
