//! `spades-server`: runs the Spades table server.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use spades_server::Config;
use spades_server::config::LogFormat;
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
    init_logging(&config);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?
        .block_on(run(config))
}

fn init_logging(config: &Config) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&config.log.filter));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match config.log.format {
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(true).init(),
        LogFormat::Text => builder.init(),
    }
}

async fn run(config: Config) -> anyhow::Result<()> {
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
