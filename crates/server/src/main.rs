//! `spades-server`: runs the Spades table server.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use spades_server::Config;
use spades_server::config::{LogFormat, RUST_LOG};
use std::io::IsTerminal;
use tokio_util::sync::CancellationToken;
use tracing_subscriber::EnvFilter;

/// The Spades table server.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    /// Configuration file (TOML). Without one, `config/default.toml` is used
    /// if present, else the built-in defaults; `SPADES_*` variables override
    /// either.
    #[arg(long, short, env = "SPADES_CONFIG_FILE")]
    config: Option<PathBuf>,
    /// Check that a server with this configuration answers on its port
    /// (GET /healthz on the loopback address) and exit 0 if it does: for
    /// container health checks.
    #[arg(long)]
    healthcheck: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Operators, run on the server's machine against its store (the
    /// server may be running): the first operator is made here.
    Admin {
        #[command(subcommand)]
        action: Admin,
    },
}

#[derive(Debug, clap::Subcommand)]
enum Admin {
    /// Makes the account that goes by NAME an operator.
    Grant {
        /// The account's display name (case and look-alikes aside).
        name: String,
        /// Why, for the audit log.
        #[arg(long, default_value = "granted on the server's command line")]
        reason: String,
    },
    /// Takes the operator role from the account that goes by NAME.
    Revoke {
        /// The account's display name (case and look-alikes aside).
        name: String,
        /// Why, for the audit log.
        #[arg(long, default_value = "revoked on the server's command line")]
        reason: String,
    },
    /// Lists the operators.
    List,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let file = cli.config.or_else(|| {
        let default = PathBuf::from("config/default.toml");
        default.exists().then_some(default)
    });
    let config = match Config::load(file.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("spades-server: {e}");
            std::process::exit(2);
        }
    };
    if cli.healthcheck {
        std::process::exit(if healthcheck(&config) { 0 } else { 1 });
    }
    if let Some(Command::Admin { action }) = cli.command {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the runtime")?;
        match runtime.block_on(admin(&config, action)) {
            Ok(said) => println!("{said}"),
            Err(e) => {
                eprintln!("spades-server: {e}");
                std::process::exit(1);
            }
        }
        return Ok(());
    }
    let filter = match config.log.env_filter(std::env::var(RUST_LOG).ok().as_deref()) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("spades-server: {e}");
            std::process::exit(2);
        }
    };
    init_logging(config.log.format, filter);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?
        .block_on(run(config))
}

/// `spades-server admin …`: what to print, or why it failed.
async fn admin(config: &Config, action: Admin) -> Result<String, String> {
    use spades_server::accounts::Accounts;
    if config.storage.in_memory {
        return Err("storage.in_memory is set: the server keeps no operators between runs".into());
    }
    let journal = spades_server::app::open_journal(config).await.map_err(|e| format!("{e:#}"))?;
    let store = journal.accounts().moderation();
    let accounts = Accounts::new(journal.accounts(), config.accounts.clone());
    match action {
        Admin::Grant { name, reason } => {
            spades_server::moderation::command_line(&accounts, &store, true, &name, &reason).await
        }
        Admin::Revoke { name, reason } => {
            spades_server::moderation::command_line(&accounts, &store, false, &name, &reason).await
        }
        Admin::List => {
            let operators = store.operators().await.map_err(|e| e.to_string())?;
            if operators.is_empty() {
                return Ok("no operators yet: `spades-server admin grant NAME` makes one".into());
            }
            Ok(operators
                .iter()
                .map(|o| format!("{} ({})", o.account.name, o.account.id))
                .collect::<Vec<_>>()
                .join("\n"))
        }
    }
}

/// GET /healthz on the configured port over loopback, with a short
/// timeout; no HTTP client needed.
fn healthcheck(config: &Config) -> bool {
    use std::io::{Read, Write};
    use std::time::Duration;
    let mut addr = config.server.bind;
    if addr.ip().is_unspecified() {
        addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    let Ok(mut stream) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.starts_with("HTTP/1.1 200")
}

/// Logs to standard output; text lines carry colour codes only when it is
/// a terminal (not in files, pipes or a container's log collector).
fn init_logging(format: LogFormat, filter: EnvFilter) {
    let ansi = std::io::stdout().is_terminal();
    tracing::subscriber::set_global_default(subscriber(format, filter, ansi, std::io::stdout))
        .expect("no other logger was installed");
}

/// The log subscriber writing to `writer`.
fn subscriber<W>(
    format: LogFormat,
    filter: EnvFilter,
    ansi: bool,
    writer: W,
) -> Box<dyn tracing::Subscriber + Send + Sync>
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    match format {
        LogFormat::Json => Box::new(builder.json().flatten_event(true).with_current_span(true).finish()),
        LogFormat::Text => Box::new(builder.with_ansi(ansi).finish()),
    }
}

async fn run(config: Config) -> anyhow::Result<()> {
    // Config's Debug output hides the database password.
    tracing::debug!(?config, "configuration");
    let listener = tokio::net::TcpListener::bind(config.server.bind)
        .await
        .with_context(|| format!("binding {}", config.server.bind))?;
    let shutdown = CancellationToken::new();
    tokio::spawn(on_signal(shutdown.clone()));
    spades_server::serve(listener, config, shutdown).await
}

/// Cancels `shutdown` on Ctrl-C or SIGTERM.
async fn on_signal(shutdown: CancellationToken) {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down");
    shutdown.cancel();
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A writer that keeps what was logged.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn logged(format: LogFormat, ansi: bool) -> String {
        let buffer = Buffer::default();
        let out = buffer.clone();
        let filter = EnvFilter::new("info");
        let subscriber = subscriber(format, filter, ansi, move || out.clone());
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(table = "t1", "table created");
            tracing::debug!("filtered out");
        });
        String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn text_logs_carry_colour_codes_only_on_a_terminal() {
        let plain = logged(LogFormat::Text, false);
        assert!(plain.contains("table created") && plain.contains("table=\"t1\""), "{plain}");
        assert!(!plain.contains('\x1b'), "colour codes in a non-terminal log: {plain:?}");
        assert!(!plain.contains("filtered out"), "{plain}");
        // The same line on a terminal is coloured (so the check above means something).
        assert!(logged(LogFormat::Text, true).contains('\x1b'));
        let json = logged(LogFormat::Json, false);
        let line: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
        assert_eq!(line["message"], "table created");
        assert!(!json.contains('\x1b'), "{json:?}");
    }
}
