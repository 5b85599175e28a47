//! Configuration: built-in defaults, then a TOML file (`config/default.toml`
//! by default), then environment variables prefixed `SPADES_` with `__`
//! between section and key (`SPADES_SERVER__BIND=0.0.0.0:9000`). Variables
//! without `__` are not settings.
//!
//! Unknown keys and bad values refuse to start with a message naming them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

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
}

/// Listening and HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address and port to listen on.
    pub bind: SocketAddr,
    /// Origins allowed to open WebSockets and to call the REST API from a
    /// browser on another site (CORS). Empty: same-origin pages and
    /// non-browser clients only.
    pub allowed_origins: Vec<String>,
    /// Seconds to wait for connections and tables to finish on shutdown.
    pub shutdown_grace_secs: u64,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            bind: SocketAddr::from(([0, 0, 0, 0], 8080)),
            allowed_origins: Vec::new(),
            shutdown_grace_secs: 10,
        }
    }
}

/// Where matches are stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl Default for StorageConfig {
    fn default() -> StorageConfig {
        StorageConfig { data_dir: PathBuf::from("data"), database_url: String::new(), in_memory: false }
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
    /// Messages a connection may send per 10 seconds.
    pub messages_per_10s: u32,
    /// Tables one IP address may create per minute (0: no limit).
    pub tables_per_minute_per_ip: u32,
    /// WebSocket connections one IP address may open per minute (0: no
    /// limit).
    pub connections_per_minute_per_ip: u32,
}

impl Default for LimitsConfig {
    fn default() -> LimitsConfig {
        LimitsConfig {
            max_tables: 10_000,
            max_connections: 50_000,
            max_frame_bytes: spades_protocol::MAX_FRAME_BYTES,
            outbox_frames: 64,
            ping_interval_secs: 15,
            messages_per_10s: 100,
            tables_per_minute_per_ip: 30,
            connections_per_minute_per_ip: 120,
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
    /// A tracing filter (`RUST_LOG` syntax); `RUST_LOG` overrides it.
    pub filter: String,
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
                "storage.database_url must be empty, postgres://… or sqlite:… (got {url:?})"
            )));
        }
        Ok(())
    }
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
}
