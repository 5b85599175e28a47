//! OpenID Connect against a real provider (the npm package `oidc-provider`,
//! `tests/browser/oidc-provider.mjs`), driven as a browser drives it: the
//! server's start, the provider's own sign-in and consent forms, the
//! callback. A first sign-in makes an account and the next finds it; a
//! signed-in guest links an identity, and one that is another account's is
//! refused; a wrong `state`, a replayed callback and a replayed code sign
//! nobody in; a provider whose issuer is not the configured one, or that is
//! down at start-up, is unavailable until it answers.
//!
//! Needs Node.js and `tests/browser/node_modules` (`npm ci` there): without
//! them the tests say so and are skipped, except under CI.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::accounts::secret;
use crate::helpers::*;
use crate::services::missing;

const CLIENT_ID: &str = "spades-test";
const CLIENT_SECRET: &str = "client-secret-never-logged-4711";

fn browser_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/browser")
}

/// Whether the provider can run here; else says why (and fails under CI).
fn provider_here() -> bool {
    if !browser_dir().join("node_modules/oidc-provider").is_dir() {
        missing("the OpenID provider", "tests/browser/node_modules has no oidc-provider (npm ci there)");
        return false;
    }
    true
}

/// The provider, on `port`, for a server whose public address is `server`.
struct Provider {
    child: Child,
    issuer: String,
}

impl Provider {
    fn start(port: u16, server: &str) -> Provider {
        let mut child = Command::new("node")
            .arg(browser_dir().join("oidc-provider.mjs"))
            .arg(port.to_string())
            .arg(CLIENT_ID)
            .arg(CLIENT_SECRET)
            .arg(format!("{server}/api/v1/oidc/club/callback"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs");
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut out, &mut line).unwrap();
        assert!(line.starts_with("ready "), "the provider did not start: {line:?}");
        // It writes notices to its output as it goes: read them, so that
        // it never writes into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        Provider { child, issuer: line.trim_start_matches("ready ").trim().to_owned() }
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A server whose public address is `http://localhost:<its port>`, with
/// provider `club` at `issuer`.
async fn server_with(issuer: &str, retry_secs: u64) -> (TestServer, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let public = format!("http://localhost:{}", listener.local_addr().unwrap().port());
    let server = server_on(listener, &public, issuer, retry_secs, None).await;
    (server, public)
}

/// A server on `listener` whose public address is `public`, with provider
/// `club` at `issuer`, its store in memory or at `database_url`.
async fn server_on(
    listener: tokio::net::TcpListener,
    public: &str,
    issuer: &str,
    retry_secs: u64,
    database_url: Option<&str>,
) -> TestServer {
    let addr: SocketAddr = listener.local_addr().unwrap();
    let mut config = test_config();
    config.server.public_url = public.to_owned();
    config.oidc.retry_secs = retry_secs;
    if let Some(url) = database_url {
        config.storage.in_memory = false;
        config.storage.database_url = url.to_owned();
    }
    config.oidc.providers.insert(
        "club".into(),
        spades_server::config::OidcProviderConfig {
            issuer: issuer.into(),
            client_id: CLIENT_ID.into(),
            client_secret: CLIENT_SECRET.into(),
            label: "Sign in with the Club".into(),
        },
    );
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(spades_server::serve(listener, config, shutdown.clone()));
    let server = TestServer { addr, shutdown, task, http: reqwest::Client::new() };
    // Ready once it answers (the providers are discovered first).
    assert!(ready(&server.http, &format!("http://{addr}")).await, "the server did not start");
    server
}

/// The sign-in methods of the server at `public` once provider `club` is
/// available there (it is discovered again every second), or after ten
/// seconds.
async fn discovered(public: &str) -> Value {
    let mut browser = Browser::new();
    let mut methods = Value::Null;
    for _ in 0..100 {
        methods = browser.json(&format!("{public}/api/v1/sign-in/methods")).await.1;
        if methods["providers"][0]["available"] == json!(true) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    methods
}

/// A server with provider `club`, the provider, and the server's public
/// address, once the server has discovered the provider.
async fn with_provider() -> (TestServer, String, Provider) {
    let port = free_port();
    let (server, public) = server_with(&format!("http://localhost:{port}"), 1).await;
    let provider = Provider::start(port, &public);
    let methods = discovered(&public).await;
    assert_eq!(methods["providers"][0]["available"], json!(true), "{methods}");
    (server, public, provider)
}

/// A browser: follows nothing by itself, keeps cookies by name.
struct Browser {
    http: reqwest::Client,
    cookies: BTreeMap<String, String>,
}

/// What a browser got: the status, the `Location` (absolute), the body.
struct Got {
    status: u16,
    location: Option<String>,
    body: String,
}

impl Browser {
    fn new() -> Browser {
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Browser { http, cookies: BTreeMap::new() }
    }

    /// A browser signed in (the cookie) as a new guest named `name`, of
    /// device `n`.
    async fn guest(public: &str, n: u32, name: &str) -> Browser {
        let mut browser = Browser::new();
        let url = format!("{public}/api/v1/accounts/guest");
        let req = browser.http.post(&url).json(&json!({"device_secret": secret(n), "name": name}));
        let made = browser.send(&url, req).await;
        assert_eq!(made.status, 201, "{}", made.body);
        browser
    }

    fn cookie_header(&self) -> String {
        self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    async fn send(&mut self, url: &str, req: reqwest::RequestBuilder) -> Got {
        let req = if self.cookies.is_empty() { req } else { req.header("cookie", self.cookie_header()) };
        let resp = req.send().await.unwrap();
        for v in resp.headers().get_all("set-cookie") {
            let v = v.to_str().unwrap();
            let pair = v.split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            if value.is_empty() || v.contains("Max-Age=0") {
                self.cookies.remove(name.trim());
            } else {
                self.cookies.insert(name.trim().to_owned(), value.to_owned());
            }
        }
        let base = url::Url::parse(url).unwrap();
        let location =
            resp.headers().get("location").map(|l| base.join(l.to_str().unwrap()).unwrap().to_string());
        let status = resp.status().as_u16();
        Got { status, location, body: resp.text().await.unwrap() }
    }

    async fn get(&mut self, url: &str) -> Got {
        let req = self.http.get(url);
        self.send(url, req).await
    }

    async fn post_form(&mut self, url: &str, form: &[(&str, &str)]) -> Got {
        let req = self.http.post(url).form(form);
        self.send(url, req).await
    }

    /// Starts at `start` and goes through the provider's forms as `login`,
    /// until the provider sends the browser to `callback_prefix`: that
    /// address (not yet opened).
    async fn through_provider(&mut self, start: &str, login: &str, callback_prefix: &str) -> String {
        let mut url = start.to_owned();
        for _ in 0..20 {
            let got = self.get(&url).await;
            let next = match got.status {
                302 | 303 => got.location.clone().unwrap(),
                200 => {
                    let action = got.body.split("action=\"").nth(1).unwrap().split('"').next().unwrap();
                    let action = url::Url::parse(&url).unwrap().join(action).unwrap().to_string();
                    let posted = if got.body.contains("value=\"login\"") {
                        self.post_form(&action, &[("prompt", "login"), ("login", login), ("password", "any")])
                            .await
                    } else {
                        self.post_form(&action, &[("prompt", "consent")]).await
                    };
                    assert!(matches!(posted.status, 302 | 303), "the form was refused: {}", posted.body);
                    posted.location.unwrap()
                }
                other => panic!("{url}: {other} {}", got.body),
            };
            if next.starts_with(callback_prefix) {
                return next;
            }
            url = next;
        }
        panic!("the provider never sent the browser back");
    }

    /// Signs in (or links) through the provider as `login`: where the
    /// server sent the browser back to.
    async fn sign_in(&mut self, public: &str, login: &str, link: bool) -> String {
        let start = format!("{public}/api/v1/oidc/club/start{}", if link { "?link=true" } else { "" });
        let callback =
            self.through_provider(&start, login, &format!("{public}/api/v1/oidc/club/callback")).await;
        let back = self.get(&callback).await;
        assert_eq!(back.status, 303, "{}", back.body);
        back.location.unwrap()
    }

    async fn json(&mut self, url: &str) -> (u16, Value) {
        let got = self.get(url).await;
        (got.status, serde_json::from_str(&got.body).unwrap_or(Value::Null))
    }
}

#[tokio::test]
async fn a_first_sign_in_makes_an_account_and_the_next_finds_it() {
    if !provider_here() {
        return;
    }
    let port = free_port();
    let issuer = format!("http://localhost:{port}");
    // The server is made first (its address is the provider's redirect).
    let (server, public) = server_with(&issuer, 1).await;
    let _provider = Provider::start(port, &public);
    let mut browser = Browser::new();
    // Discovered on a retry, once the provider answers.
    let methods = discovered(&public).await;
    assert_eq!(
        methods["providers"],
        json!([{"id": "club", "label": "Sign in with the Club", "available": true}]),
        "the provider, down at start-up, was discovered when it came up"
    );

    let back = browser.sign_in(&public, "alice", false).await;
    assert_eq!(back, format!("{public}/?oidc=created#/me"));
    assert!(!browser.cookies.contains_key("spades_oidc"), "the flow's cookie is cleared");
    let (status, me) = browser.json(&format!("{public}/api/v1/me")).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["account"]["name"], json!("alice"), "named as the provider names her");
    assert_eq!(me["account"]["kind"], json!("member"), "made by a provider, not a guest");
    let id = me["account"]["id"].clone();
    let (_, ways) = browser.json(&format!("{public}/api/v1/me/identities")).await;
    assert_eq!(ways.as_array().unwrap().len(), 1, "{ways}");
    assert_eq!((&ways[0]["kind"], &ways[0]["provider"]), (&json!("oidc"), &json!("club")));
    assert_eq!(ways[0]["label"], json!("Sign in with the Club: alice"));
    // Unlinking the only way in is refused.
    let unlink = server
        .http
        .delete(format!("{public}/api/v1/me/oidc/{}", ways[0]["id"].as_str().unwrap()))
        .header("cookie", browser.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(unlink.status(), 409);

    // Another browser, the same person: the same account.
    let mut other = Browser::new();
    let back = other.sign_in(&public, "alice", false).await;
    assert_eq!(back, format!("{public}/?oidc=signed_in#/me"));
    assert_eq!(other.json(&format!("{public}/api/v1/me")).await.1["account"]["id"], id);
    server.stop().await;
}

#[tokio::test]
async fn a_guest_links_an_identity_and_one_of_another_account_is_refused() {
    if !provider_here() {
        return;
    }
    let (server, public, _provider) = with_provider().await;
    let mut ann = Browser::guest(&public, 1, "Ann").await;
    let ann_id = ann.json(&format!("{public}/api/v1/me")).await.1["account"]["id"].clone();

    assert_eq!(ann.sign_in(&public, "bob", true).await, format!("{public}/?oidc=linked#/me"));
    let (_, ways) = ann.json(&format!("{public}/api/v1/me/identities")).await;
    let kinds: Vec<&str> = ways.as_array().unwrap().iter().map(|w| w["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["device", "oidc"]);
    // Signing in with it elsewhere is Ann.
    let mut elsewhere = Browser::new();
    assert_eq!(elsewhere.sign_in(&public, "bob", false).await, format!("{public}/?oidc=signed_in#/me"));
    assert_eq!(elsewhere.json(&format!("{public}/api/v1/me")).await.1["account"]["id"], ann_id);

    // Cy, another guest, cannot take it: refused, nothing merged.
    let mut cy = Browser::guest(&public, 2, "Cy").await;
    assert_eq!(cy.sign_in(&public, "bob", true).await, format!("{public}/?oidc_error=taken#/me"));
    let (_, cy_ways) = cy.json(&format!("{public}/api/v1/me/identities")).await;
    assert_eq!(cy_ways.as_array().unwrap().len(), 1, "Cy has only its device: {cy_ways}");
    assert_eq!(cy.json(&format!("{public}/api/v1/me")).await.1["account"]["name"], json!("Cy"));

    // A link asked by another site's page is refused before the provider
    // is asked; so is one whose session ends before it comes back.
    let req = ann
        .http
        .get(format!("{public}/api/v1/oidc/club/start?link=true"))
        .header("sec-fetch-site", "cross-site");
    let got = ann.send(&format!("{public}/api/v1/oidc/club/start"), req).await;
    assert_eq!(got.location.unwrap(), format!("{public}/?oidc_error=cross_site#/me"));
    let mut leaving = Browser::guest(&public, 3, "Leaver").await;
    let callback = format!("{public}/api/v1/oidc/club/callback");
    let start = format!("{public}/api/v1/oidc/club/start?link=true");
    let answer = leaving.through_provider(&start, "gina", &callback).await;
    let out = server
        .http
        .delete(format!("{public}/api/v1/me/sessions"))
        .header("cookie", leaving.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 204);
    assert_eq!(leaving.get(&answer).await.location.unwrap(), format!("{public}/?oidc_error=signed_out#/me"));

    // Linking without a session is refused before the provider is asked.
    let mut nobody = Browser::new();
    let got = nobody.get(&format!("{public}/api/v1/oidc/club/start?link=true")).await;
    assert_eq!(got.location.unwrap(), format!("{public}/?oidc_error=signed_out#/me"));

    // Unlinked (the device is left): bob then makes an account of his own.
    let bob = ways[1]["id"].as_str().unwrap();
    let unlink = server
        .http
        .delete(format!("{public}/api/v1/me/oidc/{bob}"))
        .header("cookie", ann.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(unlink.status(), 204);
    let mut fresh = Browser::new();
    assert_eq!(fresh.sign_in(&public, "bob", false).await, format!("{public}/?oidc=created#/me"));
    assert_ne!(fresh.json(&format!("{public}/api/v1/me")).await.1["account"]["id"], ann_id);
    server.stop().await;
}

#[tokio::test]
async fn a_wrong_state_a_replayed_callback_and_a_replayed_code_sign_nobody_in() {
    if !provider_here() {
        return;
    }
    let (server, public, _provider) = with_provider().await;
    let callback = format!("{public}/api/v1/oidc/club/callback");
    let start = format!("{public}/api/v1/oidc/club/start");

    // A wrong state: refused, and the flow is used up.
    let mut browser = Browser::new();
    let answer = browser.through_provider(&start, "eve", &callback).await;
    let flow = browser.cookies["spades_oidc"].clone();
    let state = answer.split("state=").nth(1).unwrap().split('&').next().unwrap().to_owned();
    let forged = answer.replace(&format!("state={state}"), "state=forged");
    let got = browser.get(&forged).await;
    assert_eq!(got.location.unwrap(), format!("{public}/?oidc_error=expired#/me"));
    browser.cookies.insert("spades_oidc".into(), flow);
    let got = browser.get(&answer).await;
    assert_eq!(got.location.unwrap(), format!("{public}/?oidc_error=expired#/me"), "the flow was taken");
    assert!(!browser.cookies.contains_key("spades_session"), "nobody signed in");
    // Without the flow's cookie (another browser), the right answer is refused.
    let mut browser = Browser::new();
    let answer = browser.through_provider(&start, "eve", &callback).await;
    let mut thief = Browser::new();
    assert_eq!(thief.get(&answer).await.location.unwrap(), format!("{public}/?oidc_error=expired#/me"));

    // A callback replayed, with its cookie: signed in once only.
    let mut browser = Browser::new();
    let answer = browser.through_provider(&start, "eve", &callback).await;
    let flow = browser.cookies["spades_oidc"].clone();
    assert_eq!(browser.get(&answer).await.location.unwrap(), format!("{public}/?oidc=created#/me"));
    let mut replay = Browser::new();
    replay.cookies.insert("spades_oidc".into(), flow);
    assert_eq!(replay.get(&answer).await.location.unwrap(), format!("{public}/?oidc_error=expired#/me"));
    // The code again, in a new flow of its own (its state and cookie): the
    // provider refuses a code used once (and made for another PKCE challenge).
    let mut again = Browser::new();
    let fresh = again.through_provider(&start, "eve", &callback).await;
    let fresh_state = fresh.split("state=").nth(1).unwrap().split('&').next().unwrap();
    let old_code = answer.split("code=").nth(1).unwrap().split('&').next().unwrap();
    let new_code = fresh.split("code=").nth(1).unwrap().split('&').next().unwrap();
    let spliced = fresh.replace(&format!("code={new_code}"), &format!("code={old_code}"));
    assert!(spliced.contains(&format!("state={fresh_state}")));
    assert_eq!(again.get(&spliced).await.location.unwrap(), format!("{public}/?oidc_error=failed#/me"));
    // An answer that names another issuer (RFC 9207's `iss`) is refused.
    let mut mixed = Browser::new();
    let answer = mixed.through_provider(&start, "eve", &callback).await;
    assert!(answer.contains("iss="), "the provider names itself: {answer}");
    let iss = answer.split("iss=").nth(1).unwrap().split('&').next().unwrap().to_owned();
    let other = answer.replace(&format!("iss={iss}"), "iss=https%3A%2F%2Fevil.example");
    assert_eq!(mixed.get(&other).await.location.unwrap(), format!("{public}/?oidc_error=failed#/me"));
    // The provider's refusal (the player said no) is said as such.
    let mut denied = Browser::new();
    let answer = denied.through_provider(&start, "eve", &callback).await;
    let state = answer.split("state=").nth(1).unwrap().split('&').next().unwrap();
    let no = format!("{callback}?error=access_denied&state={state}");
    assert_eq!(denied.get(&no).await.location.unwrap(), format!("{public}/?oidc_error=denied#/me"));
    server.stop().await;
}

#[tokio::test]
async fn a_provider_publishing_another_issuer_is_unavailable() {
    if !provider_here() {
        return;
    }
    let port = free_port();
    // Configured with a trailing slash: the provider publishes none.
    let (server, public) = server_with(&format!("http://localhost:{port}/"), 1).await;
    let provider = Provider::start(port, &public);
    assert_eq!(provider.issuer, format!("http://localhost:{port}"));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let mut browser = Browser::new();
    let (_, methods) = browser.json(&format!("{public}/api/v1/sign-in/methods")).await;
    assert_eq!(methods["providers"][0]["available"], json!(false), "{methods}");
    let got = browser.get(&format!("{public}/api/v1/oidc/club/start")).await;
    assert_eq!(got.location.unwrap(), format!("{public}/?oidc_error=unavailable#/me"));
    // An unknown provider is no flow at all.
    let got = browser.get(&format!("{public}/api/v1/oidc/nobody/start")).await;
    assert_eq!(got.location.unwrap(), format!("{public}/?oidc_error=expired#/me"));
    server.stop().await;
}

#[tokio::test]
async fn no_client_secret_code_or_state_reaches_the_log() {
    if !provider_here() {
        return;
    }
    let (port, provider_port) = (free_port(), free_port());
    let public = format!("http://localhost:{port}");
    let provider = Provider::start(provider_port, &public);
    let log = std::env::temp_dir().join(format!("spades-oidc-{}.log", uuid::Uuid::new_v4().simple()));
    let out = std::fs::File::create(&log).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_spades-server"))
        .env("SPADES_SERVER__BIND", format!("127.0.0.1:{port}"))
        .env("SPADES_SERVER__PUBLIC_URL", &public)
        .env("SPADES_STORAGE__IN_MEMORY", "true")
        .env("SPADES_OIDC__PROVIDERS__CLUB__ISSUER", &provider.issuer)
        .env("SPADES_OIDC__PROVIDERS__CLUB__CLIENT_ID", CLIENT_ID)
        .env("SPADES_OIDC__PROVIDERS__CLUB__CLIENT_SECRET", CLIENT_SECRET)
        .env("RUST_LOG", "trace")
        .stdout(Stdio::from(out.try_clone().unwrap()))
        .stderr(Stdio::from(out))
        .spawn()
        .unwrap();
    let http = reqwest::Client::new();
    assert!(ready(&http, &public).await, "the server did not start");
    let mut browser = Browser::new();
    let callback = format!("{public}/api/v1/oidc/club/callback");
    let answer =
        browser.through_provider(&format!("{public}/api/v1/oidc/club/start"), "frank", &callback).await;
    let back = browser.get(&answer).await;
    assert_eq!(back.location.unwrap(), format!("{public}/?oidc=created#/me"));
    let session = browser.cookies["spades_session"].clone();
    // A refused answer too (the code again).
    browser.get(&answer).await;
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    assert!(text.contains("signed in with OpenID"), "the log was written at all");
    let param =
        |name: &str| answer.split(&format!("{name}=")).nth(1).unwrap().split('&').next().unwrap().to_owned();
    for (what, secret) in [
        ("client secret", CLIENT_SECRET.to_owned()),
        ("code", param("code")),
        ("state", param("state")),
        ("session", session),
    ] {
        assert!(!text.contains(&secret), "the {what} is in the log");
    }
}

#[tokio::test]
async fn a_flow_begun_on_one_server_finishes_on_another_of_the_same_store() {
    if !provider_here() {
        return;
    }
    let Some(base) = crate::services::postgres() else { return };
    let db = crate::services::TestDatabase::create(&base, "oidc_nodes").await;
    let (first, second) = (
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
    );
    let second_port = second.local_addr().unwrap().port();
    // Both behind one public address (as the nodes of a cluster are).
    let public = format!("http://localhost:{}", first.local_addr().unwrap().port());
    let provider_port = free_port();
    let _provider = Provider::start(provider_port, &public);
    let issuer = format!("http://localhost:{provider_port}");
    let a = server_on(first, &public, &issuer, 1, Some(&db.url)).await;
    let b = server_on(second, &public, &issuer, 1, Some(&db.url)).await;
    let mut browser = Browser::new();
    let callback = format!("{public}/api/v1/oidc/club/callback");
    let answer =
        browser.through_provider(&format!("{public}/api/v1/oidc/club/start"), "grace", &callback).await;
    // The answer comes back to the other server: it finishes the flow.
    let elsewhere = answer.replace(&public, &format!("http://localhost:{second_port}"));
    let back = browser.get(&elsewhere).await;
    assert_eq!(back.location.unwrap(), format!("http://localhost:{second_port}/?oidc=created#/me"));
    let (status, me) = browser.json(&format!("{public}/api/v1/me")).await;
    assert_eq!((status, &me["account"]["name"]), (200, &json!("grace")), "{me}");
    // And the first cannot take it again.
    let again = browser.get(&answer).await;
    assert_eq!(again.location.unwrap(), format!("{public}/?oidc_error=expired#/me"));
    a.stop().await;
    b.stop().await;
    db.remove().await.unwrap();
}
