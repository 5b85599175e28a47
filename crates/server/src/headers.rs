//! The browser's own defences, on every answer: a Content-Security-Policy
//! that lets the pages run only the server's own scripts and styles (no
//! inline script, no other site's files) and be framed only by the server
//! itself and the sites of `server.allowed_origins`; a Referrer-Policy;
//! `nosniff`; and HSTS when the request reached the server over TLS (a
//! trusted proxy says so with `X-Forwarded-Proto: https`; the server itself
//! speaks plain HTTP).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::config::{Cidr, Config};

/// A year, the usual HSTS lifetime.
const HSTS: &str = "max-age=31536000";

/// What the answers carry, made once from the configuration.
#[derive(Debug, Clone)]
pub struct Defences {
    csp: HeaderValue,
    trusted_proxies: Vec<Cidr>,
}

impl Defences {
    /// The policy for `config` (its allowed origins were checked when the
    /// configuration was loaded).
    pub fn new(config: &Config) -> Defences {
        Defences {
            csp: HeaderValue::from_str(&policy(&config.server.allowed_origins))
                .unwrap_or_else(|_| HeaderValue::from_static(BASE_POLICY)),
            trusted_proxies: config.trusted_proxies(),
        }
    }

    /// True when a trusted proxy passed the request on from TLS.
    fn over_tls(&self, peer: Option<SocketAddr>, headers: &HeaderMap) -> bool {
        peer.is_some_and(|peer| crate::admission::over_tls(peer.ip(), headers, &self.trusted_proxies))
    }
}

/// Every directive but `frame-ancestors`: the pages' scripts, styles and
/// connections come from the server alone; images may also be `data:`
/// URLs (the page draws its own); nothing is a plug-in, and forms and
/// `<base>` cannot send the page elsewhere.
const BASE_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                           connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; \
                           form-action 'self'; frame-ancestors 'self'";

/// The whole policy: [`BASE_POLICY`] with the allowed origins as the sites
/// that may frame the pages.
fn policy(allowed_origins: &[String]) -> String {
    let mut p = BASE_POLICY.to_owned();
    for origin in allowed_origins {
        p.push(' ');
        p.push_str(origin);
    }
    p
}

/// The middleware: adds the headers to whatever the routes answered.
pub async fn defences(State(d): State<Arc<Defences>>, req: Request, next: Next) -> Response {
    let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0);
    let tls = d.over_tls(peer, req.headers());
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, d.csp.clone());
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if tls {
        h.insert(header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static(HSTS));
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_proxies(proxies: &[&str]) -> Defences {
        let mut config = Config::default();
        config.server.trusted_proxies = proxies.iter().map(|p| (*p).to_owned()).collect();
        config.server.allowed_origins = vec!["https://club.example".into(), "http://localhost:3000".into()];
        Defences::new(&config)
    }

    fn proto(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-proto", HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn the_policy_names_the_allowed_origins_as_framers_only() {
        let d = with_proxies(&[]);
        let csp = d.csp.to_str().unwrap();
        assert!(csp.contains("script-src 'self';"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert!(csp.ends_with("frame-ancestors 'self' https://club.example http://localhost:3000"), "{csp}");
        assert_eq!(csp.matches("club.example").count(), 1, "{csp}");
    }

    #[test]
    fn tls_is_believed_from_a_trusted_proxy_only() {
        let peer: SocketAddr = "10.1.2.3:4000".parse().unwrap();
        let trusting = with_proxies(&["10.0.0.0/8"]);
        assert!(trusting.over_tls(Some(peer), &proto("https")));
        assert!(trusting.over_tls(Some(peer), &proto("http, HTTPS")));
        assert!(!trusting.over_tls(Some(peer), &proto("https, http")));
        assert!(!trusting.over_tls(Some(peer), &HeaderMap::new()));
        assert!(!trusting.over_tls(None, &proto("https")));
        let other: SocketAddr = "192.0.2.1:4000".parse().unwrap();
        assert!(!trusting.over_tls(Some(other), &proto("https")), "an untrusted peer's claim");
        assert!(!with_proxies(&[]).over_tls(Some(peer), &proto("https")));
    }
}
