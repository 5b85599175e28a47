//! The browser's defences on every answer: the Content-Security-Policy
//! (only the server's own scripts and styles; framed only by itself and the
//! allowed origins), Referrer-Policy, nosniff, and HSTS only when a trusted
//! proxy says the request came over TLS.

use crate::helpers::{spawn_server, test_config};

const SITE: &str = "https://club.example";

#[tokio::test]
async fn every_answer_carries_the_policy_and_hsts_comes_only_over_tls() {
    let mut config = test_config();
    config.server.allowed_origins = vec![SITE.into()];
    config.server.trusted_proxies = vec!["127.0.0.1".into()];
    let server = spawn_server(config).await;
    for path in ["/", "/api/v1/tables", "/healthz", "/no-such-file"] {
        let resp = server.http.get(server.url(path)).send().await.unwrap();
        let h = resp.headers();
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("script-src 'self';") && csp.contains("style-src 'self';"), "{path}: {csp}");
        assert!(!csp.contains("unsafe"), "{path}: {csp}");
        assert!(csp.contains(&format!("frame-ancestors 'self' {SITE}")), "{path}: {csp}");
        assert_eq!(h["referrer-policy"], "same-origin", "{path}");
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
        assert!(h.get("strict-transport-security").is_none(), "{path}: HSTS over plain HTTP");
    }
    // Behind the trusted proxy (this test's own address), from TLS.
    let resp = server.http.get(server.url("/")).header("x-forwarded-proto", "https").send().await.unwrap();
    assert_eq!(resp.headers()["strict-transport-security"], "max-age=31536000");
    server.stop().await;

    // Without trusted proxies, nobody's claim of TLS is believed.
    let server = spawn_server(test_config()).await;
    let resp = server.http.get(server.url("/")).header("x-forwarded-proto", "https").send().await.unwrap();
    assert!(resp.headers().get("strict-transport-security").is_none());
    let csp = resp.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.ends_with("frame-ancestors 'self'"), "{csp}");
    server.stop().await;
}

/// The page keeps to the policy: no inline script, no inline style, no
/// event-handler attributes (each would be blocked and break the page).
#[tokio::test]
async fn the_page_needs_nothing_the_policy_forbids() {
    let server = spawn_server(test_config()).await;
    let page = server.http.get(server.url("/")).send().await.unwrap().text().await.unwrap();
    let lower = page.to_ascii_lowercase();
    for (at, _) in lower.match_indices("<script") {
        let tag = &lower[at..at + lower[at..].find('>').unwrap()];
        assert!(tag.contains(" src="), "an inline script: {tag}");
    }
    assert!(!lower.contains(" style="), "an inline style attribute");
    assert!(!lower.contains("<style"), "an inline style element");
    for handler in [" onclick=", " onload=", " onerror=", " onsubmit="] {
        assert!(!lower.contains(handler), "an inline handler {handler}");
    }
    server.stop().await;
}
