//! Who may come in: the client's address behind trusted proxies, the
//! per-address rate limits and caps on tables, connections and requests,
//! and the `Origin` check of browser pages.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::time::Duration;

use axum::http::{HeaderMap, header};
use dashmap::DashMap;

use crate::config::{Cidr, LimitsConfig};

/// Same-origin pages and clients without an `Origin` header are always
/// allowed; other origins only when listed.
pub fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else { return true };
    if allowed.iter().any(|a| a == origin || a == "*") {
        return true;
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let bare = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")).unwrap_or(origin);
    !host.is_empty() && bare == host
}

type Keyed = governor::DefaultKeyedRateLimiter<IpAddr>;

/// Per-address limits: tables created, connections opened and REST
/// requests per minute, and connections open at once. Every limit is keyed
/// by [`client_key`] of the client address.
pub struct Limits {
    tables: Option<Keyed>,
    accounts: Option<Keyed>,
    sign_ins: Option<Keyed>,
    account_sign_ins: Option<governor::DefaultKeyedRateLimiter<uuid::Uuid>>,
    connections: Option<Keyed>,
    requests: Option<Keyed>,
    /// Open connections by client key.
    open: DashMap<IpAddr, usize>,
    /// Most open connections per client key (0: no cap).
    open_cap: usize,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits").field("open_cap", &self.open_cap).finish_non_exhaustive()
    }
}

/// The key of every per-address limit: an IPv4 address itself, an IPv6
/// address its /64 (one subscriber's block), an IPv4-mapped IPv6 address
/// its IPv4 address.
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u128::from(u64::MAX)))),
    }
}

/// The client's address: the TCP peer, unless the peer is a trusted proxy;
/// then the right-most `X-Forwarded-For` entry that is not itself a trusted
/// proxy (the left-most one when all are). A missing or unreadable header
/// leaves the peer.
pub fn client_addr(peer: IpAddr, headers: &HeaderMap, trusted: &[Cidr]) -> IpAddr {
    let peer = peer.to_canonical();
    let is_trusted = |ip: IpAddr| trusted.iter().any(|t| t.contains(ip));
    if !is_trusted(peer) {
        return peer;
    }
    let mut entries = Vec::new();
    for value in headers.get_all(X_FORWARDED_FOR) {
        let Ok(text) = value.to_str() else { return peer };
        entries.extend(text.split(',').map(str::trim));
    }
    // From the right: each proxy appends the address it saw, so entries
    // to the left of the first untrusted one are the client's own claims.
    let mut leftmost = None;
    for entry in entries.iter().rev() {
        let Some(ip) = forwarded_ip(entry) else { return peer };
        if !is_trusted(ip) {
            return ip;
        }
        leftmost = Some(ip);
    }
    leftmost.unwrap_or(peer)
}

const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// True when the request from TCP peer `peer` reached a trusted proxy over
/// TLS: the peer is a trusted proxy and the last `X-Forwarded-Proto` value
/// (the one the nearest proxy set) is `https`. The server itself speaks
/// plain HTTP.
pub fn over_tls(peer: IpAddr, headers: &HeaderMap, trusted: &[Cidr]) -> bool {
    let peer = peer.to_canonical();
    if !trusted.iter().any(|t| t.contains(peer)) {
        return false;
    }
    headers
        .get_all("x-forwarded-proto")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .next_back()
        .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"))
}

/// One `X-Forwarded-For` entry: an address, maybe with a port.
fn forwarded_ip(entry: &str) -> Option<IpAddr> {
    let ip = entry.parse::<IpAddr>().ok().or_else(|| entry.parse::<SocketAddr>().ok().map(|s| s.ip()))?;
    Some(ip.to_canonical())
}

/// How long to wait before a limited address may try again.
fn wait_of(not_until: &governor::NotUntil<governor::clock::QuantaInstant>) -> Duration {
    not_until.wait_time_from(governor::clock::Clock::now(&governor::clock::DefaultClock::default()))
}

impl Limits {
    /// The limits of `config` (each 0: none).
    pub fn new(config: &LimitsConfig) -> Limits {
        let limiter =
            |n: u32| NonZeroU32::new(n).map(|n| governor::RateLimiter::keyed(governor::Quota::per_minute(n)));
        Limits {
            tables: limiter(config.tables_per_minute_per_ip),
            accounts: NonZeroU32::new(config.accounts_per_hour_per_ip)
                .map(|n| governor::RateLimiter::keyed(governor::Quota::per_hour(n))),
            sign_ins: limiter(config.sign_ins_per_minute_per_ip),
            account_sign_ins: NonZeroU32::new(config.sign_ins_per_minute_per_account)
                .map(|n| governor::RateLimiter::keyed(governor::Quota::per_minute(n))),
            connections: limiter(config.connections_per_minute_per_ip),
            requests: limiter(config.requests_per_minute_per_ip),
            open: DashMap::new(),
            open_cap: config.connections_per_ip,
        }
    }

    fn check(limiter: Option<&Keyed>, ip: IpAddr) -> Result<(), Duration> {
        match limiter {
            None => Ok(()),
            Some(l) => l.check_key(&client_key(ip)).map_err(|n| wait_of(&n)),
        }
    }

    /// Whether `ip` may create a table now; else how long to wait.
    ///
    /// # Errors
    /// The wait, when the address is over its limit.
    pub fn allow_table(&self, ip: IpAddr) -> Result<(), Duration> {
        Limits::check(self.tables.as_ref(), ip)
    }

    /// Whether `ip` may make an account now; else how long to wait.
    ///
    /// # Errors
    /// The wait, when the address is over its limit.
    pub fn allow_account(&self, ip: IpAddr) -> Result<(), Duration> {
        Limits::check(self.accounts.as_ref(), ip)
    }

    /// Whether `ip` may try to sign in with a passkey now; else how long to
    /// wait.
    ///
    /// # Errors
    /// The wait, when the address is over its limit.
    pub fn allow_sign_in(&self, ip: IpAddr) -> Result<(), Duration> {
        Limits::check(self.sign_ins.as_ref(), ip)
    }

    /// Whether a passkey may try to sign `account` in now (whoever tries,
    /// from wherever); else how long to wait.
    ///
    /// # Errors
    /// The wait, when the account is over its limit.
    pub fn allow_account_sign_in(&self, account: uuid::Uuid) -> Result<(), Duration> {
        match &self.account_sign_ins {
            None => Ok(()),
            Some(l) => l.check_key(&account).map_err(|n| wait_of(&n)),
        }
    }

    /// Whether `ip` may open a connection now; else how long to wait.
    ///
    /// # Errors
    /// The wait, when the address is over its limit.
    pub fn allow_connection(&self, ip: IpAddr) -> Result<(), Duration> {
        Limits::check(self.connections.as_ref(), ip)
    }

    /// Whether `ip` may make a REST request now; else how long to wait.
    ///
    /// # Errors
    /// The wait, when the address is over its limit.
    pub fn allow_request(&self, ip: IpAddr) -> Result<(), Duration> {
        Limits::check(self.requests.as_ref(), ip)
    }

    /// Counts a connection from `ip` as open; false (and nothing counted)
    /// when the address already holds as many as it may. Every `true` must
    /// be matched by one [`Limits::close_connection`].
    pub fn open_connection(&self, ip: IpAddr) -> bool {
        if self.open_cap == 0 {
            return true;
        }
        let mut open = self.open.entry(client_key(ip)).or_insert(0);
        if *open >= self.open_cap {
            return false;
        }
        *open += 1;
        true
    }

    /// A connection from `ip` counted by [`Limits::open_connection`] ended.
    pub fn close_connection(&self, ip: IpAddr) {
        if self.open_cap == 0 {
            return;
        }
        if let dashmap::Entry::Occupied(mut e) = self.open.entry(client_key(ip)) {
            *e.get_mut() = e.get().saturating_sub(1);
            if *e.get() == 0 {
                e.remove();
            }
        }
    }

    /// Connections open from `ip`'s client key (counted only under a cap).
    pub fn open_from(&self, ip: IpAddr) -> usize {
        self.open.get(&client_key(ip)).map_or(0, |n| *n)
    }

    /// Forgets addresses that have not been seen for a while.
    pub fn forget_idle(&self) {
        for l in self
            .tables
            .iter()
            .chain(&self.accounts)
            .chain(&self.sign_ins)
            .chain(&self.connections)
            .chain(&self.requests)
        {
            l.retain_recent();
            l.shrink_to_fit();
        }
        if let Some(l) = &self.account_sign_ins {
            l.retain_recent();
            l.shrink_to_fit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(origin: Option<&str>, host: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, host.parse().unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, o.parse().unwrap());
        }
        h
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn ipv6_addresses_are_keyed_by_their_64() {
        assert_eq!(client_key(ip("203.0.113.9")), ip("203.0.113.9"));
        assert_eq!(client_key(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd")), ip("2001:db8:1:2::"));
        assert_eq!(client_key(ip("2001:db8:1:2::1")), client_key(ip("2001:db8:1:2:ffff::7")));
        assert_ne!(client_key(ip("2001:db8:1:2::1")), client_key(ip("2001:db8:1:3::1")));
        assert_eq!(client_key(ip("::ffff:198.51.100.4")), ip("198.51.100.4"));
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(X_FORWARDED_FOR, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn the_client_address_comes_from_trusted_proxies_only() {
        let trusted: Vec<Cidr> =
            ["127.0.0.1", "10.0.0.0/8", "::1"].iter().map(|t| t.parse().unwrap()).collect();
        let h = forwarded(&["198.51.100.7"]);
        // An untrusted peer's header is ignored.
        assert_eq!(client_addr(ip("203.0.113.1"), &h, &trusted), ip("203.0.113.1"));
        // No proxies configured: the peer, whatever the header says.
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &[]), ip("127.0.0.1"));
        // A trusted peer: the header's client.
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("198.51.100.7"));
        assert_eq!(client_addr(ip("::1"), &h, &trusted), ip("198.51.100.7"));
        assert_eq!(client_addr(ip("::ffff:10.1.1.1"), &h, &trusted), ip("198.51.100.7"));
        // The right-most entry that is not a trusted proxy; what the client
        // put on the left is not believed.
        let h = forwarded(&["6.6.6.6, 198.51.100.7, 10.0.0.5"]);
        assert_eq!(client_addr(ip("10.0.0.1"), &h, &trusted), ip("198.51.100.7"));
        let h = forwarded(&["6.6.6.6", "198.51.100.7", "10.0.0.5"]);
        assert_eq!(client_addr(ip("10.0.0.1"), &h, &trusted), ip("198.51.100.7"));
        // Garbage left of the client's entry is never reached.
        let h = forwarded(&["garbage, 198.51.100.7"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("198.51.100.7"));
        // Ports and IPv6 entries.
        let h = forwarded(&["198.51.100.7:4711"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("198.51.100.7"));
        let h = forwarded(&["[2001:db8::5]:443"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("2001:db8::5"));
        let h = forwarded(&["2001:db8::5"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("2001:db8::5"));
        // Every entry a trusted proxy: the left-most.
        let h = forwarded(&["10.9.9.9, 10.0.0.5"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("10.9.9.9"));
        // Missing or bad header: the peer.
        assert_eq!(client_addr(ip("127.0.0.1"), &HeaderMap::new(), &trusted), ip("127.0.0.1"));
        let h = forwarded(&["not-an-address"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("127.0.0.1"));
        let h = forwarded(&["198.51.100.7, "]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("127.0.0.1"));
    }

    #[test]
    fn open_connections_are_capped_per_client_key() {
        let config = LimitsConfig { connections_per_ip: 2, ..LimitsConfig::default() };
        let limits = Limits::new(&config);
        let a = ip("2001:db8:1:2::1");
        let b = ip("2001:db8:1:2::2");
        assert!(limits.open_connection(a));
        assert!(limits.open_connection(b));
        assert!(!limits.open_connection(a), "the same /64");
        assert!(limits.open_connection(ip("2001:db8:1:3::1")), "another /64");
        assert_eq!(limits.open_from(a), 2);
        limits.close_connection(b);
        assert!(limits.open_connection(a));
        limits.close_connection(a);
        limits.close_connection(a);
        assert_eq!(limits.open_from(a), 0);
        assert!(limits.open.get(&client_key(a)).is_none(), "empty entries are removed");
        let unlimited = Limits::new(&LimitsConfig { connections_per_ip: 0, ..LimitsConfig::default() });
        for _ in 0..100 {
            assert!(unlimited.open_connection(a));
        }
    }

    #[test]
    fn rate_limits_say_how_long_to_wait() {
        let config = LimitsConfig { requests_per_minute_per_ip: 2, ..LimitsConfig::default() };
        let limits = Limits::new(&config);
        let a = ip("2001:db8:1:2::1");
        assert!(limits.allow_request(a).is_ok());
        assert!(limits.allow_request(ip("2001:db8:1:2::9")).is_ok());
        let wait = limits.allow_request(a).unwrap_err();
        assert!(wait > Duration::from_secs(20) && wait <= Duration::from_secs(30), "{wait:?}");
        assert!(limits.allow_request(ip("192.0.2.1")).is_ok());
    }

    #[test]
    fn origins() {
        assert!(origin_allowed(&headers(None, "cards.example:8080"), &[]));
        assert!(origin_allowed(&headers(Some("http://cards.example:8080"), "cards.example:8080"), &[]));
        assert!(!origin_allowed(&headers(Some("https://evil.example"), "cards.example:8080"), &[]));
        let allowed = vec!["https://friends.example".to_owned()];
        assert!(origin_allowed(&headers(Some("https://friends.example"), "cards.example"), &allowed));
        assert!(!origin_allowed(&headers(Some("https://evil.example"), "cards.example"), &allowed));
    }
}
