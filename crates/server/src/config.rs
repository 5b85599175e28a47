//! Configuration: built-in defaults, then a TOML file (`config/default.toml`
//! by default), then environment variables prefixed `SPADES_` with `__`
//! between section and key (`SPADES_SERVER__BIND=0.0.0.0:9000`). Variables
//! without `__` are not settings.
//!
//! Unknown keys and bad values refuse to start with a message naming them.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Deserializer, Serialize};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

/// The prefix of every environment override.
pub const ENV_PREFIX: &str = "SPADES_";

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Listening and HTTP.
    pub server: ServerConfig,
    /// Where matches are stored.
    pub storage: StorageConfig,
    /// Table behaviour: bots, grace periods, clean-up.
    pub tables: TablesConfig,
    /// Limits that protect the server.
    pub limits: LimitsConfig,
    /// Logging.
    pub log: LogConfig,
    /// Several nodes on one PostgreSQL and NATS (off by default).
    pub cluster: ClusterConfig,
    /// Accounts, names and sessions.
    pub accounts: AccountsConfig,
    /// OpenID Connect providers players may sign in with (none by
    /// default).
    pub oidc: OidcConfig,
    /// Moderation: how long what is said at the tables is kept, how many
    /// reports a player may make.
    pub moderation: ModerationConfig,
}

/// Moderation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModerationConfig {
    /// Days a chat message is kept, for operators and the writer's export
    /// (90); then it is forgotten.
    pub chat_days: u32,
    /// Reports one account may make in an hour (10); 0: no limit.
    pub reports_per_hour: u32,
}

impl Default for ModerationConfig {
    fn default() -> ModerationConfig {
        ModerationConfig { chat_days: 90, reports_per_hour: 10 }
    }
}

/// OpenID Connect: the providers, by the id that names them in URLs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OidcConfig {
    /// Each provider under its id (`[oidc.providers.club]`: 1 to 32 of
    /// `a-z 0-9 - _`, used in `/api/v1/oidc/<id>/…`).
    pub providers: std::collections::BTreeMap<String, OidcProviderConfig>,
    /// Seconds between two tries to discover a provider that could not be
    /// reached (at start-up, or since).
    pub retry_secs: u64,
}

impl Default for OidcConfig {
    fn default() -> OidcConfig {
        OidcConfig { providers: std::collections::BTreeMap::new(), retry_secs: 30 }
    }
}

/// One OpenID provider. `Debug` never shows the client secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcProviderConfig {
    /// The issuer, exactly as the provider publishes it (its discovery
    /// document is `<issuer>/.well-known/openid-configuration`).
    pub issuer: String,
    /// The client id the provider gave this server.
    pub client_id: String,
    /// The client secret it gave (set it in the environment:
    /// `SPADES_OIDC__PROVIDERS__<ID>__CLIENT_SECRET`).
    #[serde(default)]
    pub client_secret: String,
    /// The words of its button ("Sign in with Club"); empty: "Sign in
    /// with <id>".
    #[serde(default)]
    pub label: String,
}

impl std::fmt::Debug for OidcProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcProviderConfig")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &if self.client_secret.is_empty() { "" } else { "***" })
            .field("label", &self.label)
            .finish()
    }
}

/// Accounts, names and sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AccountsConfig {
    /// Seconds a session lasts unused; every use renews it (30 days).
    pub session_secs: u64,
    /// Seconds an account waits between two renames (one day).
    pub rename_interval_secs: u64,
    /// Seconds a name given up by a rename stays kept for its account:
    /// nobody else may take it meanwhile (30 days).
    pub name_kept_secs: u64,
    /// Players may set a password and sign in with their name and it
    /// (off: passkeys and device secrets only).
    pub passwords: bool,
}

impl Default for AccountsConfig {
    fn default() -> AccountsConfig {
        AccountsConfig {
            session_secs: 30 * 86_400,
            rename_interval_secs: 86_400,
            name_kept_secs: 30 * 86_400,
            passwords: false,
        }
    }
}

/// Cluster mode: on when `nats_url` is set.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterConfig {
    /// `nats://host:4222` to run as one node of a cluster; empty: a single
    /// server.
    pub nats_url: String,
    /// This node's id, unique in the cluster: letters, digits, `-` and `_`,
    /// at most 64. Empty: the host name.
    pub node_id: String,
    /// How long a table's lease lasts without renewal, in ms: a dead node's
    /// tables move after about this long. Renewed every quarter of it.
    pub lease_ms: u64,
    /// The first part of every NATS subject, so that several clusters can
    /// share one NATS.
    pub subject_prefix: String,
    /// The address other nodes' operators see for this node (the nodes
    /// table); empty: `server.bind`.
    pub advertise: String,
}

impl Default for ClusterConfig {
    fn default() -> ClusterConfig {
        ClusterConfig {
            nats_url: String::new(),
            node_id: String::new(),
            lease_ms: 5000,
            subject_prefix: "spades".into(),
            advertise: String::new(),
        }
    }
}

/// The NATS URL's password is never shown.
impl std::fmt::Debug for ClusterConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterConfig")
            .field("nats_url", &redact_url(&self.nats_url))
            .field("node_id", &self.node_id)
            .field("lease_ms", &self.lease_ms)
            .field("subject_prefix", &self.subject_prefix)
            .field("advertise", &self.advertise)
            .finish()
    }
}

impl ClusterConfig {
    /// True when this server is one node of a cluster.
    pub fn enabled(&self) -> bool {
        !self.nats_url.is_empty()
    }
}

/// True for a node id or subject prefix that is safe in a NATS subject.
fn subject_safe(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Listening and HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address and port to listen on.
    pub bind: SocketAddr,
    /// Origins allowed to open WebSockets, to call the REST API from a
    /// browser on another site (CORS) and to frame the pages (the policy's
    /// `frame-ancestors`). Empty: same-origin pages and non-browser clients
    /// only.
    /// From the environment: a comma-separated list.
    #[serde(deserialize_with = "list_or_commas")]
    pub allowed_origins: Vec<String>,
    /// Seconds to wait for connections and tables to finish on shutdown.
    pub shutdown_grace_secs: u64,
    /// Reverse proxies (IP addresses or CIDR blocks, `10.0.0.0/8`, `::1`)
    /// whose `X-Forwarded-For` header names the client. Empty: the TCP
    /// peer is the client. From the environment: a comma-separated list.
    #[serde(deserialize_with = "list_or_commas")]
    pub trusted_proxies: Vec<String>,
    /// Address and port to serve `/metrics` on instead of `bind`; then the
    /// main address does not answer `/metrics`. `None` (an empty string in
    /// the file or the environment): `/metrics` on the main address.
    #[serde(with = "optional_addr")]
    pub metrics_bind: Option<SocketAddr>,
    /// The address players open the server at (`https://cards.example.org`):
    /// passkeys belong to its domain. Empty: `localhost` on any port, for
    /// development; a server reached by another name then cannot use
    /// passkeys.
    pub public_url: String,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            bind: SocketAddr::from(([0, 0, 0, 0], 8080)),
            allowed_origins: Vec::new(),
            shutdown_grace_secs: 10,
            trusted_proxies: Vec::new(),
            metrics_bind: None,
            public_url: String::new(),
        }
    }
}

/// An optional socket address written as a string, empty for none (TOML
/// has no null).
mod optional_addr {
    use std::net::SocketAddr;

    use serde::{Deserialize, Deserializer, Serializer};

    // serde's `with` passes a reference to the field.
    #[allow(clippy::ref_option)]
    pub fn serialize<S: Serializer>(addr: &Option<SocketAddr>, ser: S) -> Result<S::Ok, S::Error> {
        match addr {
            Some(addr) => ser.collect_str(addr),
            None => ser.serialize_str(""),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(de: D) -> Result<Option<SocketAddr>, D::Error> {
        let text = String::deserialize(de)?;
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        text.parse().map(Some).map_err(|_| {
            serde::de::Error::custom(format!("{text:?} is not an address and port (e.g. 127.0.0.1:9100)"))
        })
    }
}

/// A list of strings, or one string of comma-separated items (how a list
/// arrives from an environment variable).
fn list_or_commas<'de, D: Deserializer<'de>>(de: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ListOrCommas {
        List(Vec<String>),
        Commas(String),
    }
    Ok(match ListOrCommas::deserialize(de)? {
        ListOrCommas::List(items) => items,
        ListOrCommas::Commas(text) => {
            text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
        }
    })
}

/// An IP address block: an address and the length of its prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// True when `ip` lies in the block (IPv4-mapped IPv6 addresses count
    /// as their IPv4 address).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.prefix)).unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(self.prefix)).unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl std::str::FromStr for Cidr {
    type Err = String;

    /// `10.0.0.0/8`, `fd00::/8`, or a bare address (a block of one).
    fn from_str(text: &str) -> Result<Cidr, String> {
        let bad = || format!("{text:?} is not an IP address or CIDR block");
        let (addr, prefix) = match text.trim().split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (text.trim(), None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| bad())?;
        let addr = addr.to_canonical();
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max).ok_or_else(bad)?,
            None => max,
        };
        Ok(Cidr { addr, prefix })
    }
}

/// Where matches are stored.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageConfig {
    /// Directory for the embedded SQLite database (created if missing).
    pub data_dir: PathBuf,
    /// A `postgres://` URL to store matches in PostgreSQL instead, or a
    /// `sqlite://` URL for a SQLite file elsewhere. Empty: the SQLite file
    /// `spades.db` in `data_dir`.
    pub database_url: String,
    /// Test and benchmark setting: keep the event log in memory only
    /// (nothing survives a restart). Never for real use.
    pub in_memory: bool,
    /// Under load, the event log commits at most once per this many
    /// milliseconds, each commit taking every write queued meanwhile (0:
    /// commit whenever the last commit is done). A write after a quiet spell
    /// commits at once; only a busy log waits, and fewer, larger
    /// transactions cost the database far less per move.
    pub commit_interval_ms: u64,
}

/// The database URL's password is never shown.
impl std::fmt::Debug for StorageConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageConfig")
            .field("data_dir", &self.data_dir)
            .field("database_url", &redact_url(&self.database_url))
            .field("in_memory", &self.in_memory)
            .field("commit_interval_ms", &self.commit_interval_ms)
            .finish()
    }
}

/// `url` with the password (in the user part, or a `password=` query
/// parameter) replaced by `***`: `postgres://user:***@host:5432/db`.
pub fn redact_url(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let rest = scheme_end + 3;
        let authority_end = out[rest..].find(['/', '?', '#']).map_or(out.len(), |i| rest + i);
        if let Some(at) = out[rest..authority_end].rfind('@')
            && let Some(colon) = out[rest..rest + at].find(':')
        {
            out.replace_range(rest + colon + 1..rest + at, "***");
        }
    }
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        let query: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        out = format!("{head}{}", query.join("&"));
    }
    out
}

impl Default for StorageConfig {
    fn default() -> StorageConfig {
        StorageConfig {
            data_dir: PathBuf::from("data"),
            database_url: String::new(),
            in_memory: false,
            commit_interval_ms: 5,
        }
    }
}

/// Table behaviour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TablesConfig {
    /// How long a bot (or autopilot) waits before acting, in milliseconds,
    /// so people can follow the play.
    pub bot_delay_ms: u64,
    /// Seconds a seat is held after its connection drops.
    pub grace_secs: u64,
    /// Seconds a seat is held when the client said it was closing on purpose.
    pub closing_grace_secs: u64,
    /// Timeouts in a row that put a seat on autopilot.
    pub autopilot_after: u8,
    /// Minutes an unused table (nobody connected, not in play) is kept.
    pub idle_minutes: u64,
    /// Test setting: replace every tempo's clock with this many
    /// milliseconds (per card and per bid). 0 = off; never for real use.
    pub test_tempo_ms: u64,
    /// The bot that plays on timeouts, for the autopilot, after a player's
    /// grace and in bot seats: `search` (strongest) or `rule` (cheapest).
    pub bot: spades_bots::Strength,
    /// Bot searches that may run at once on the whole server; when all are
    /// busy the rule bot answers. 0: one per core.
    pub bot_searches: usize,
    /// Milliseconds the seats have, after the owner's start, to reveal the
    /// seeds they committed to; a seat that has not by then deals without
    /// its seed. The match is dealt as soon as every committed seat has.
    pub reveal_ms: u64,
}

impl Default for TablesConfig {
    fn default() -> TablesConfig {
        TablesConfig {
            bot_delay_ms: 700,
            grace_secs: 60,
            closing_grace_secs: 10,
            autopilot_after: 3,
            idle_minutes: 30,
            test_tempo_ms: 0,
            bot: spades_bots::Strength::Search,
            bot_searches: 0,
            reveal_ms: 5000,
        }
    }
}

/// Limits that protect the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Tables hosted at once; creating more is refused.
    pub max_tables: usize,
    /// WebSocket connections at once; more are refused.
    pub max_connections: usize,
    /// Largest WebSocket text frame read, in bytes.
    pub max_frame_bytes: usize,
    /// Frames queued for one connection before it counts as too slow and
    /// is disconnected (it can resume).
    pub outbox_frames: usize,
    /// Seconds between keep-alive pings; a connection silent for three
    /// intervals is dropped.
    pub ping_interval_secs: u64,
    /// Once a connection has sent a `ping` frame (a client's own
    /// heartbeat), seconds without any frame from it after which it is
    /// dropped as silent, so its seat shows away at once (0: no such check).
    pub heartbeat_silence_secs: u64,
    /// Messages a connection may send per 10 seconds.
    pub messages_per_10s: u32,
    /// Tables one IP address may create per minute (0: no limit).
    pub tables_per_minute_per_ip: u32,
    /// Accounts one IP address may make per hour (0: no limit).
    pub accounts_per_hour_per_ip: u32,
    /// Sign-in attempts (a passkey's or a password's) one IP address may
    /// make per minute (0: no limit).
    pub sign_ins_per_minute_per_ip: u32,
    /// Sign-in attempts (a passkey's, a password's, a wrong current
    /// password) per minute for one account, from anywhere (0: no limit).
    pub sign_ins_per_minute_per_account: u32,
    /// WebSocket connections one IP address may open per minute (0: no
    /// limit).
    pub connections_per_minute_per_ip: u32,
    /// WebSocket connections one IP address may hold open at once (0: no
    /// limit). IPv6 addresses count by their /64.
    pub connections_per_ip: usize,
    /// Connections attached to one seat at once.
    pub connections_per_seat: u16,
    /// Seconds a connection may stay without joining, resuming or watching
    /// a table before it is closed (code 4004).
    pub attach_timeout_secs: u64,
    /// Seconds one write to a connection may take before the connection is
    /// dropped as too slow.
    pub write_timeout_secs: u64,
    /// REST requests one IP address may make per minute (0: no limit).
    pub requests_per_minute_per_ip: u32,
    /// Seconds a REST request may take before it is answered 503.
    pub request_timeout_secs: u64,
    /// REST requests handled at once; more are answered 503 at once.
    pub max_concurrent_requests: usize,
}

impl Default for LimitsConfig {
    fn default() -> LimitsConfig {
        LimitsConfig {
            max_tables: 10_000,
            max_connections: 50_000,
            max_frame_bytes: spades_protocol::MAX_FRAME_BYTES,
            outbox_frames: 64,
            ping_interval_secs: 5,
            heartbeat_silence_secs: 6,
            messages_per_10s: 100,
            tables_per_minute_per_ip: 30,
            accounts_per_hour_per_ip: 20,
            sign_ins_per_minute_per_ip: 10,
            sign_ins_per_minute_per_account: 5,
            connections_per_minute_per_ip: 120,
            connections_per_ip: 32,
            connections_per_seat: 4,
            attach_timeout_secs: 10,
            write_timeout_secs: 10,
            requests_per_minute_per_ip: 600,
            request_timeout_secs: 10,
            max_concurrent_requests: 256,
        }
    }
}

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Logging.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    /// Text or JSON lines.
    pub format: LogFormat,
    /// A tracing filter (`RUST_LOG` syntax). A non-empty `RUST_LOG`
    /// variable takes its place (see [`LogConfig::env_filter`]).
    pub filter: String,
}

/// The environment variable whose filter replaces `log.filter`.
pub const RUST_LOG: &str = "RUST_LOG";

impl LogConfig {
    /// The filter in force: `rust_log` (the `RUST_LOG` variable) when it is
    /// set and not blank, else `log.filter`. `RUST_LOG` wins so that one
    /// run can be made more verbose without editing the file.
    ///
    /// # Errors
    /// A filter that does not parse, naming where it came from.
    pub fn env_filter(&self, rust_log: Option<&str>) -> Result<EnvFilter, ConfigError> {
        let (source, text) = match rust_log.map(str::trim) {
            Some(text) if !text.is_empty() => (RUST_LOG, text),
            _ => ("log.filter", self.filter.as_str()),
        };
        parse_filter(text)
            .map_err(|e| ConfigError(format!("{source} {text:?} is not a valid log filter: {e}")))
    }
}

/// A filter parsed strictly: any directive that does not parse is an error
/// (`EnvFilter::new` would skip it and only warn).
fn parse_filter(text: &str) -> Result<EnvFilter, tracing_subscriber::filter::ParseError> {
    EnvFilter::builder().with_default_directive(LevelFilter::ERROR.into()).parse(text)
}

impl Default for LogConfig {
    fn default() -> LogConfig {
        LogConfig { format: LogFormat::Text, filter: "info,spades_server=info,tower_http=warn".into() }
    }
}

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {0}")]
pub struct ConfigError(String);

impl Config {
    /// Loads the defaults, then `file` (if given; it must exist), then the
    /// `SPADES_` environment.
    ///
    /// # Errors
    /// An unreadable file, an unknown key or a bad value, named.
    pub fn load(file: Option<&Path>) -> Result<Config, ConfigError> {
        Config::load_from(file, Config::env())
    }

    /// The environment provider: `SPADES_<SECTION>__<KEY>` variables only,
    /// so other `SPADES_*` variables (`SPADES_CONFIG_FILE`, a test
    /// harness's own) are not mistaken for settings.
    pub fn env() -> Env {
        Env::prefixed(ENV_PREFIX).filter(|key| key.as_str().contains("__")).split("__")
    }

    /// Like [`Config::load`], with the environment given explicitly (tests).
    ///
    /// # Errors
    /// As [`Config::load`].
    pub fn load_from(file: Option<&Path>, env: Env) -> Result<Config, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        if let Some(path) = file {
            if !path.exists() {
                return Err(ConfigError(format!("config file {} not found", path.display())));
            }
            figment = figment.merge(Toml::file(path));
        }
        let config: Config = figment.merge(env).extract().map_err(|e| ConfigError(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let l = &self.limits;
        let checks = [
            (l.max_frame_bytes >= 256, "limits.max_frame_bytes must be at least 256"),
            (l.outbox_frames >= 4, "limits.outbox_frames must be at least 4"),
            (l.ping_interval_secs >= 1, "limits.ping_interval_secs must be at least 1"),
            (l.messages_per_10s >= 1, "limits.messages_per_10s must be at least 1"),
            (
                l.max_connections >= 1 && l.max_tables >= 1,
                "limits.max_tables and max_connections must be at least 1",
            ),
            (self.tables.autopilot_after >= 1, "tables.autopilot_after must be at least 1"),
            (l.connections_per_seat >= 1, "limits.connections_per_seat must be at least 1"),
            (self.accounts.session_secs >= 1, "accounts.session_secs must be at least 1"),
            (self.moderation.chat_days >= 1, "moderation.chat_days must be at least 1"),
            (l.attach_timeout_secs >= 1, "limits.attach_timeout_secs must be at least 1"),
            (l.write_timeout_secs >= 1, "limits.write_timeout_secs must be at least 1"),
            (l.request_timeout_secs >= 1, "limits.request_timeout_secs must be at least 1"),
            (l.max_concurrent_requests >= 1, "limits.max_concurrent_requests must be at least 1"),
            (self.storage.commit_interval_ms <= 1000, "storage.commit_interval_ms must be at most 1000"),
        ];
        for (ok, message) in checks {
            if !ok {
                return Err(ConfigError(message.into()));
            }
        }
        let url = &self.storage.database_url;
        if !(url.is_empty()
            || url.starts_with("postgres://")
            || url.starts_with("postgresql://")
            || url.starts_with("sqlite:"))
        {
            return Err(ConfigError(format!(
                "storage.database_url must be empty, postgres://… or sqlite:… (got {:?})",
                redact_url(url)
            )));
        }
        parse_filter(&self.log.filter).map_err(|e| {
            ConfigError(format!("log.filter {:?} is not a valid log filter: {e}", self.log.filter))
        })?;
        for entry in &self.server.trusted_proxies {
            entry.parse::<Cidr>().map_err(|e| ConfigError(format!("server.trusted_proxies: {e}")))?;
        }
        if !self.server.public_url.is_empty() && !is_public_url(&self.server.public_url) {
            return Err(ConfigError(format!(
                "server.public_url {:?} must be http(s)://<a domain name>[:port], with no path: passkeys \
                 belong to a domain name, never to an IP address",
                self.server.public_url
            )));
        }
        if let Some(bad) = self.server.allowed_origins.iter().find(|o| !is_origin(o)) {
            return Err(ConfigError(format!(
                "server.allowed_origins: {bad:?} is not an origin (scheme://host or scheme://host:port, \
                 http or https, no path, as a browser sends it in Origin)"
            )));
        }
        self.validate_oidc()?;
        self.validate_cluster()
    }

    fn validate_oidc(&self) -> Result<(), ConfigError> {
        let o = &self.oidc;
        if o.retry_secs < 1 {
            return Err(ConfigError("oidc.retry_secs must be at least 1".into()));
        }
        if !o.providers.is_empty() && self.server.public_url.is_empty() {
            return Err(ConfigError(
                "oidc.providers need server.public_url: each provider sends players back to \
                 <public_url>/api/v1/oidc/<id>/callback, which must be registered with it"
                    .into(),
            ));
        }
        for (id, p) in &o.providers {
            let id_ok = (1..=32).contains(&id.len())
                && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
            if !id_ok {
                return Err(ConfigError(format!(
                    "oidc.providers: the id {id:?} must be 1 to 32 of a-z 0-9 - _ (it is part of a URL)"
                )));
            }
            let issuer_ok = url::Url::parse(&p.issuer)
                .is_ok_and(|u| matches!(u.scheme(), "https" | "http") && u.host().is_some());
            if !issuer_ok {
                return Err(ConfigError(format!(
                    "oidc.providers.{id}.issuer {:?} must be an http(s) URL, written exactly as the provider \
                     publishes it",
                    p.issuer
                )));
            }
            if p.client_id.is_empty() {
                return Err(ConfigError(format!("oidc.providers.{id}.client_id is empty")));
            }
        }
        Ok(())
    }

    fn validate_cluster(&self) -> Result<(), ConfigError> {
        let c = &self.cluster;
        if !c.enabled() {
            return Ok(());
        }
        let url = &self.storage.database_url;
        if self.storage.in_memory || !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(ConfigError(
                "cluster.nats_url is set, but cluster mode needs PostgreSQL: set storage.database_url to a \
                 postgres:// URL shared by every node (SQLite and in_memory are for a single server)"
                    .into(),
            ));
        }
        if !(c.nats_url.starts_with("nats://") || c.nats_url.starts_with("tls://")) {
            return Err(ConfigError(format!(
                "cluster.nats_url must be nats://host:port or tls://host:port (got {:?})",
                redact_url(&c.nats_url)
            )));
        }
        if !c.node_id.is_empty() && !subject_safe(&c.node_id) {
            return Err(ConfigError(format!(
                "cluster.node_id {:?} must be 1 to 64 letters, digits, '-' or '_'",
                c.node_id
            )));
        }
        if !subject_safe(&c.subject_prefix) {
            return Err(ConfigError(
                "cluster.subject_prefix must be 1 to 64 letters, digits, '-' or '_'".into(),
            ));
        }
        if !(1000..=600_000).contains(&c.lease_ms) {
            return Err(ConfigError("cluster.lease_ms must be from 1000 to 600000".into()));
        }
        Ok(())
    }

    /// This node's id: `cluster.node_id`, else the host name made safe for
    /// NATS subjects.
    pub fn node_id(&self) -> String {
        if !self.cluster.node_id.is_empty() {
            return self.cluster.node_id.clone();
        }
        let host = std::fs::read_to_string("/etc/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| "node".into());
        let safe: String = host
            .trim()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .take(64)
            .collect();
        if safe.is_empty() { "node".into() } else { safe }
    }

    /// The trusted proxies, parsed (entries were checked at load).
    pub fn trusted_proxies(&self) -> Vec<Cidr> {
        self.server.trusted_proxies.iter().filter_map(|p| p.parse().ok()).collect()
    }
}

/// True for an origin as a browser sends it: `http://` or `https://`, a
/// host (a name, an IPv4 address or a bracketed IPv6 one) and an optional
/// port; nothing else (it also goes into the Content-Security-Policy).
/// `http(s)://host[:port]` with a domain name for host (not an IP address).
fn is_public_url(s: &str) -> bool {
    let Ok(url) = url::Url::parse(s) else { return false };
    matches!(url.scheme(), "http" | "https")
        && matches!(url.host(), Some(url::Host::Domain(_)))
        && matches!(url.path(), "" | "/")
        && url.query().is_none()
        && url.username().is_empty()
}

fn is_origin(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("https://").or_else(|| s.strip_prefix("http://")) else {
        return false;
    };
    !rest.is_empty()
        && !rest.starts_with(':')
        && rest.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
}

#[cfg(test)]
// figment's `Jail` closures return figment's own (large) error type.
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;

    fn no_env() -> Env {
        Env::prefixed("SPADES_UNUSED_TEST_PREFIX_")
    }

    #[test]
    fn openid_providers_are_checked_and_their_secret_never_shown() {
        let provider = |issuer: &str| OidcProviderConfig {
            issuer: issuer.into(),
            client_id: "spades".into(),
            client_secret: "s3cret-value".into(),
            label: String::new(),
        };
        let with = |id: &str, p: OidcProviderConfig, public: &str| {
            let mut c = Config::default();
            c.server.public_url = public.into();
            c.oidc.providers.insert(id.into(), p);
            c.validate().map_err(|e| e.to_string())
        };
        assert!(with("club", provider("https://id.example/realms/x/"), "https://cards.example").is_ok());
        let err = with("club", provider("https://id.example"), "").unwrap_err();
        assert!(err.contains("server.public_url"), "{err}");
        let err = with("Club!", provider("https://id.example"), "https://cards.example").unwrap_err();
        assert!(err.contains("a-z 0-9"), "{err}");
        let err = with("club", provider("id.example"), "https://cards.example").unwrap_err();
        assert!(err.contains("oidc.providers.club.issuer"), "{err}");
        let mut no_client = provider("https://id.example");
        no_client.client_id.clear();
        assert!(with("club", no_client, "https://cards.example").unwrap_err().contains("client_id"));
        assert!(!format!("{:?}", provider("https://id.example")).contains("s3cret"));
        // From the environment, secret and all.
        figment::Jail::expect_with(|jail| {
            jail.set_env("SPADES_SERVER__PUBLIC_URL", "https://cards.example");
            jail.set_env("SPADES_OIDC__PROVIDERS__CLUB__ISSUER", "https://id.example");
            jail.set_env("SPADES_OIDC__PROVIDERS__CLUB__CLIENT_ID", "spades");
            jail.set_env("SPADES_OIDC__PROVIDERS__CLUB__CLIENT_SECRET", "from-env");
            let c = Config::load_from(None, Config::env()).unwrap();
            assert_eq!(c.oidc.providers["club"].client_secret, "from-env");
            Ok(())
        });
    }

    #[test]
    fn the_public_url_is_a_domain_for_passkeys() {
        let with = |url: &str| {
            let mut c = Config::default();
            c.server.public_url = url.into();
            c.validate()
        };
        for ok in ["", "https://cards.example.org", "http://localhost:8080", "https://cards.example.org/"] {
            assert!(with(ok).is_ok(), "{ok}: {:?}", with(ok));
        }
        for bad in [
            "cards.example.org",
            "https://127.0.0.1",
            "https://[::1]:8080",
            "ftp://a.example",
            "https://a.example/spades",
            "https://a.example?x=1",
        ] {
            let err = with(bad).unwrap_err().to_string();
            assert!(err.contains("server.public_url") && err.contains("domain name"), "{bad}: {err}");
        }
    }

    #[test]
    fn checked_in_default_file_matches_the_code() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/default.toml");
        let loaded = Config::load_from(Some(&path), no_env()).unwrap();
        assert_eq!(loaded, Config::default(), "config/default.toml and Config::default() disagree");
        // Every key in the file has a comment line just above it.
        let text = std::fs::read_to_string(&path).unwrap();
        let mut previous = "";
        for line in text.lines() {
            let t = line.trim();
            if !t.is_empty() && !t.starts_with('#') && !t.starts_with('[') {
                assert!(previous.starts_with('#'), "undocumented setting: {t}");
            }
            previous = t;
        }
        // And every field of the code appears in the file.
        let defaults = toml_keys(&Config::default());
        for key in defaults {
            assert!(text.contains(&format!("\n{key} =")), "config/default.toml does not document {key}");
        }
    }

    fn toml_keys(config: &Config) -> Vec<String> {
        let value = serde_json::to_value(config).unwrap();
        let mut keys = Vec::new();
        for (_, section) in value.as_object().unwrap() {
            for (key, _) in section.as_object().unwrap() {
                keys.push(key.clone());
            }
        }
        keys
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("bad.toml", "[server]\nbindd = \"0.0.0.0:1\"\n")?;
            let err = Config::load_from(Some(Path::new("bad.toml")), no_env()).unwrap_err().to_string();
            assert!(err.contains("bindd"), "{err}");
            jail.create_file("bad.toml", "[server]\nbind = \"not an address\"\n")?;
            let err = Config::load_from(Some(Path::new("bad.toml")), no_env()).unwrap_err().to_string();
            assert!(err.contains("bind"), "{err}");
            jail.create_file("bad.toml", "[limits]\noutbox_frames = 1\n")?;
            let err = Config::load_from(Some(Path::new("bad.toml")), no_env()).unwrap_err().to_string();
            assert!(err.contains("outbox_frames"), "{err}");
            jail.create_file("bad.toml", "[storage]\ndatabase_url = \"mysql://x\"\n")?;
            let err = Config::load_from(Some(Path::new("bad.toml")), no_env()).unwrap_err().to_string();
            assert!(err.contains("database_url"), "{err}");
            // An origin goes into the Content-Security-Policy: a path, a
            // `;` or a space there would be another directive.
            for bad in
                ["https://a.example/", "https://a.example; script-src *", "a.example", "ftp://a", "https://"]
            {
                jail.create_file("bad.toml", &format!("[server]\nallowed_origins = [{bad:?}]\n"))?;
                let err = Config::load_from(Some(Path::new("bad.toml")), no_env()).unwrap_err().to_string();
                assert!(err.contains("allowed_origins"), "{bad}: {err}");
            }
            jail.create_file(
                "ok.toml",
                "[server]\nallowed_origins = [\"https://a.example\", \"http://[::1]:8080\"]\n",
            )?;
            assert!(Config::load_from(Some(Path::new("ok.toml")), no_env()).is_ok());
            assert!(Config::load_from(Some(Path::new("missing.toml")), no_env()).is_err());
            Ok(())
        });
    }

    #[test]
    fn environment_overrides_the_file() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("c.toml", "[server]\nbind = \"127.0.0.1:7000\"\n[tables]\ngrace_secs = 5\n")?;
            jail.set_env("SPADES_SERVER__BIND", "127.0.0.1:9999");
            jail.set_env("SPADES_LOG__FORMAT", "json");
            let config = Config::load(Some(Path::new("c.toml"))).unwrap();
            assert_eq!(config.server.bind, "127.0.0.1:9999".parse().unwrap());
            assert_eq!(config.log.format, LogFormat::Json);
            assert_eq!(config.tables.grace_secs, 5);
            // Variables that are not SECTION__KEY are not settings.
            jail.set_env("SPADES_CONFIG_FILE", "c.toml");
            jail.set_env("SPADES_SERVER_BIN", "/bin/true");
            assert!(Config::load(None).is_ok());
            jail.set_env("SPADES_TABLES__GRACE", "5");
            let err = Config::load(None).unwrap_err().to_string();
            assert!(err.contains("grace"), "{err}");
            Ok(())
        });
    }

    #[test]
    fn debug_output_never_shows_the_database_password() {
        let mut config = Config::default();
        config.storage.database_url = "postgres://spades:hunter2@db.internal:5432/spades".into();
        let debug = format!("{config:?}");
        assert!(!debug.contains("hunter2"), "{debug}");
        assert!(debug.contains("postgres://spades:***@db.internal:5432/spades"), "{debug}");
        let pretty = format!("{config:#?}");
        assert!(!pretty.contains("hunter2"), "{pretty}");
        assert_eq!(
            redact_url("postgresql://u:p%40ss@h/db?sslmode=require&password=x2"),
            "postgresql://u:***@h/db?sslmode=require&password=***"
        );
        assert_eq!(redact_url("postgres://spades@db/spades"), "postgres://spades@db/spades");
        assert_eq!(redact_url("sqlite:data/x.db"), "sqlite:data/x.db");
        // An invalid URL's error message does not repeat the password.
        figment::Jail::expect_with(|jail| {
            jail.create_file("bad.toml", "[storage]\ndatabase_url = \"mysql://root:s3cret@db/x\"\n")?;
            let err = Config::load_from(Some(Path::new("bad.toml")), no_env()).unwrap_err().to_string();
            assert!(err.contains("database_url") && !err.contains("s3cret"), "{err}");
            Ok(())
        });
    }

    #[test]
    fn cidr_blocks_parse_and_match() {
        let net: Cidr = "10.0.0.0/8".parse().unwrap();
        assert!(net.contains("10.200.3.4".parse().unwrap()));
        assert!(!net.contains("11.0.0.1".parse().unwrap()));
        assert!(net.contains("::ffff:10.1.2.3".parse().unwrap()), "IPv4-mapped addresses count as IPv4");
        let one: Cidr = "127.0.0.1".parse().unwrap();
        assert!(one.contains("127.0.0.1".parse().unwrap()));
        assert!(!one.contains("127.0.0.2".parse().unwrap()));
        let v6: Cidr = "fd00:1::/32".parse().unwrap();
        assert!(v6.contains("fd00:1:ffff::9".parse().unwrap()));
        assert!(!v6.contains("fd00:2::1".parse().unwrap()));
        assert!(!v6.contains("10.0.0.1".parse().unwrap()));
        let loopback: Cidr = "::1".parse().unwrap();
        assert!(loopback.contains("::1".parse().unwrap()));
        let all: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains("8.8.8.8".parse().unwrap()));
        for bad in ["10.0.0.0/33", "::/129", "nonsense", "10.0.0/8", "1.2.3.4/x", ""] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn trusted_proxies_come_from_a_list_or_commas_and_are_checked() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("c.toml", "[server]\ntrusted_proxies = [\"127.0.0.1\", \"10.0.0.0/8\"]\n")?;
            let config = Config::load_from(Some(Path::new("c.toml")), no_env()).unwrap();
            assert_eq!(config.server.trusted_proxies, vec!["127.0.0.1", "10.0.0.0/8"]);
            assert_eq!(config.trusted_proxies().len(), 2);
            jail.set_env("SPADES_SERVER__TRUSTED_PROXIES", "10.0.0.0/8, ::1,192.168.0.0/16");
            jail.set_env("SPADES_SERVER__ALLOWED_ORIGINS", "https://a.example,https://b.example");
            let config = Config::load(None).unwrap();
            assert_eq!(config.server.trusted_proxies, vec!["10.0.0.0/8", "::1", "192.168.0.0/16"]);
            assert_eq!(config.server.allowed_origins, vec!["https://a.example", "https://b.example"]);
            assert!(config.trusted_proxies()[1].contains("::1".parse().unwrap()));
            jail.set_env("SPADES_SERVER__TRUSTED_PROXIES", "127.0.0.1");
            assert_eq!(Config::load(None).unwrap().server.trusted_proxies, vec!["127.0.0.1"]);
            jail.set_env("SPADES_SERVER__TRUSTED_PROXIES", "");
            assert!(Config::load(None).unwrap().server.trusted_proxies.is_empty());
            jail.set_env("SPADES_SERVER__TRUSTED_PROXIES", "10.0.0.0/8,proxy.internal");
            let err = Config::load(None).unwrap_err().to_string();
            assert!(err.contains("trusted_proxies") && err.contains("proxy.internal"), "{err}");
            Ok(())
        });
    }

    #[test]
    fn an_invalid_log_filter_is_refused_and_rust_log_takes_precedence() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("bad.toml", "[log]\nfilter = \"info,spades_server=loud\"\n")?;
            let err = Config::load_from(Some(Path::new("bad.toml")), no_env()).unwrap_err().to_string();
            assert!(err.contains("log.filter") && err.contains("loud"), "{err}");
            jail.set_env("SPADES_LOG__FILTER", "warn,=");
            let err = Config::load(None).unwrap_err().to_string();
            assert!(err.contains("log.filter"), "{err}");
            Ok(())
        });
        let log = LogConfig { format: LogFormat::Text, filter: "warn,spades_server=debug".into() };
        // Without RUST_LOG (or with a blank one) the file's filter is used.
        for rust_log in [None, Some(""), Some("  ")] {
            assert_eq!(log.env_filter(rust_log).unwrap().to_string(), "spades_server=debug,warn");
        }
        // RUST_LOG replaces it whole.
        assert_eq!(log.env_filter(Some("trace")).unwrap().to_string(), "trace");
        // A bad RUST_LOG is named as such, not ignored.
        let err = log.env_filter(Some("spades_server=chatty")).unwrap_err().to_string();
        assert!(err.contains("RUST_LOG") && err.contains("chatty"), "{err}");
    }

    #[test]
    fn metrics_bind_is_empty_or_an_address() {
        figment::Jail::expect_with(|jail| {
            assert_eq!(Config::load(None).unwrap().server.metrics_bind, None);
            jail.create_file("c.toml", "[server]\nmetrics_bind = \"127.0.0.1:9100\"\n")?;
            let config = Config::load_from(Some(Path::new("c.toml")), no_env()).unwrap();
            assert_eq!(config.server.metrics_bind, Some("127.0.0.1:9100".parse().unwrap()));
            jail.set_env("SPADES_SERVER__METRICS_BIND", "");
            assert_eq!(Config::load(Some(Path::new("c.toml"))).unwrap().server.metrics_bind, None);
            jail.set_env("SPADES_SERVER__METRICS_BIND", "[::1]:9200");
            assert_eq!(Config::load(None).unwrap().server.metrics_bind, Some("[::1]:9200".parse().unwrap()));
            jail.set_env("SPADES_SERVER__METRICS_BIND", "localhost");
            let err = Config::load(None).unwrap_err().to_string().to_lowercase();
            assert!(err.contains("metrics_bind") && err.contains("localhost"), "{err}");
            Ok(())
        });
    }
}
