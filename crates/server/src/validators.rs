//! HTTP validators: a strong `ETag` for a body, and whether a request's
//! `If-None-Match` already holds it (then the answer is `304` without a
//! body).

use axum::http::{HeaderMap, header};
use sha2::{Digest, Sha256};

/// The strong entity tag of `bytes`, quoted: 96 bits of their SHA-256.
pub fn etag_of(bytes: &[u8]) -> String {
    format!("\"{}\"", hex::encode(&Sha256::digest(bytes)[..12]))
}

/// True when `If-None-Match` names `etag` (or is `*`).
pub fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(',').map(str::trim).any(|t| t == "*" || t.trim_start_matches("W/") == etag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_follow_the_bytes_and_match_lists() {
        let a = etag_of(b"[1]");
        assert_ne!(a, etag_of(b"[2]"));
        assert!(a.starts_with('"') && a.ends_with('"') && a.len() == 26, "{a}");
        let mut h = HeaderMap::new();
        assert!(!not_modified(&h, &a));
        h.insert(header::IF_NONE_MATCH, format!("\"x\", W/{a}").parse().unwrap());
        assert!(not_modified(&h, &a));
        assert!(!not_modified(&h, &etag_of(b"[2]")));
    }
}
