//! `spades-tui`: play Spades in a terminal.
//!
//! ```sh
//! spades-tui --url http://127.0.0.1:8080 --name Ann
//! spades-tui --url https://cards.example --name Ann
//! spades-tui --url https://cards.example --name Bo --join 67e55044-10b1-426f-9247-bb680e5fe0c8
//! spades-tui --url https://cards.example --guest --name Ann   # a guest account, kept in ~/.config/spades/device
//! SPADES_TOKEN=… spades-tui --url https://cards.example       # a session made elsewhere
//! ```
//!
//! The lobby lists the tables (↑/↓, Enter sits, w watches, c creates one);
//! at a table, type a bid, or choose a card with ←/→ and Enter (or type it:
//! `QS`, `10H`). The clock shows the time left; refusals are explained on
//! the status line; a dropped connection is re-established and the seat
//! resumed on its own. `?` shows every key.

use std::io::Write;
use std::time::{Duration, Instant};

use clap::Parser;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::widgets::{Paragraph, Wrap};
use spades_client::tui::{App, Driver, Effect, Input, Key};
use spades_client::{Client, SessionOptions, Tls};
use tokio::sync::mpsc;

/// Play Spades in a terminal.
#[derive(Debug, Parser)]
#[command(name = "spades-tui", version)]
struct Args {
    /// The server: `http://host:port`, or `https://host` behind a TLS proxy.
    #[arg(long, default_value = "http://127.0.0.1:8080", env = "SPADES_URL")]
    url: String,
    /// Also trust the certificates in this PEM file for an `https://`
    /// server (a private CA or a self-signed certificate).
    #[arg(long, env = "SPADES_CA_FILE")]
    ca_file: Option<std::path::PathBuf>,
    /// Your name at the table (1 to 24 characters).
    #[arg(long, env = "USER", default_value = "Player")]
    name: String,
    /// Sit straight down at this table (the id a friend's invitation shows).
    #[arg(long, value_name = "TABLE")]
    join: Option<uuid::Uuid>,
    /// Play as a guest account: a device secret kept in this file (made,
    /// mode 0600, when missing) signs it in; `--name` names a new account.
    /// Default file: `$XDG_CONFIG_HOME/spades/device` or
    /// `~/.config/spades/device`.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "")]
    guest: Option<std::path::PathBuf>,
    /// Play as the account of this session token (a bearer token).
    #[arg(long, env = "SPADES_TOKEN", hide_env_values = true, conflicts_with = "guest")]
    token: Option<String>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut client = Client::new(&args.url)?;
    if let Some(path) = &args.ca_file {
        client = client.with_tls(Tls::with_pem_file(path)?);
    }
    let mut name: String = args.name.chars().take(24).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let mut session = args.token.clone().map(spades_client::account::SessionToken);
    if let Some(file) = &args.guest {
        let file = if file.as_os_str().is_empty() {
            spades_client::account::default_device_file()
                .ok_or_else(|| anyhow::anyhow!("no configuration directory: pass --guest FILE"))?
        } else {
            file.clone()
        };
        let device = spades_client::account::DeviceSecret::load_or_create(&file)?;
        let (signed, token) = runtime.block_on(client.sign_in_guest(&device, Some(&name)))?;
        name = signed.account.name;
        session = Some(token);
    }
    let mut options = SessionOptions::default();
    if let Some(session) = session {
        client = client.with_session(session.clone());
        options.connect.session = Some(session);
    }

    enable_raw_mode()?;
    let mut stdout = std::io::stdout();
    execute!(stdout, EnterAlternateScreen)?;
    let result = runtime.block_on(run(client, args.url, name, args.join, options));
    let _ = disable_raw_mode();
    let _ = execute!(std::io::stdout(), LeaveAlternateScreen);
    let _ = std::io::stdout().flush();
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

async fn run(
    client: Client,
    url: String,
    name: String,
    join: Option<uuid::Uuid>,
    options: SessionOptions,
) -> anyhow::Result<()> {
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    terminal.clear()?;
    let mut app = App::new(url, name.clone());
    let mut driver = Driver::new(client, name, options);
    if let Some(table) = join {
        for effect in app.sit_at(table) {
            driver.perform(effect).await;
        }
    }
    let mut keys = spawn_key_reader();
    let started = Instant::now();
    let now = || started.elapsed().as_millis() as u64;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        terminal.draw(|f| {
            let text = ratatui::text::Text::from(app.lines());
            f.render_widget(Paragraph::new(text).wrap(Wrap { trim: false }), f.area());
        })?;
        let input = tokio::select! {
            k = keys.recv() => match k {
                Some(k) => Input::Key(k),
                None => Input::Key(Key::CtrlC),
            },
            i = driver.next_input() => i,
            _ = tick.tick() => Input::Tick,
        };
        for effect in app.update(now(), input) {
            if effect == Effect::Quit {
                driver.perform(Effect::CloseSession).await;
                return Ok(());
            }
            driver.perform(effect).await;
        }
    }
}

/// Reads the terminal's key presses on a thread of its own.
fn spawn_key_reader() -> mpsc::UnboundedReceiver<Key> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        while let Ok(ev) = event::read() {
            let TermEvent::Key(k) = ev else { continue };
            if k.kind == KeyEventKind::Release {
                continue;
            }
            let key = match k.code {
                KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Key::CtrlC,
                KeyCode::Char(c) => Key::Char(c),
                KeyCode::Enter => Key::Enter,
                KeyCode::Backspace => Key::Backspace,
                KeyCode::Esc => Key::Esc,
                KeyCode::Up => Key::Up,
                KeyCode::Down => Key::Down,
                KeyCode::Left => Key::Left,
                KeyCode::Right => Key::Right,
                _ => continue,
            };
            if tx.send(key).is_err() {
                break;
            }
        }
    });
    rx
}
