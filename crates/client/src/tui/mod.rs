//! The terminal client's state machine, screen and driver.
//!
//! [`App`] is pure: [`Input`]s (keys, ticks, REST answers, session events)
//! go in through [`App::update`], [`Effect`]s (requests to make) come out,
//! and [`App::lines`] renders the state as lines of styled text. No terminal
//! and no network are involved, so it is tested directly. [`Driver`]
//! carries out the effects with the client library and turns their answers
//! into inputs; the `spades-tui` binary adds the terminal.

mod driver;
mod options;
mod render;

use spades_engine::{Card, Legal, Seat};
use spades_protocol::{CreatedTable, TableOptions, TablePhase, TableSummary, TableView};
use uuid::Uuid;

pub use driver::Driver;
pub use render::plain;

use crate::{Command, Event};

/// A key press, as the state machine sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable character.
    Char(char),
    /// Enter.
    Enter,
    /// Backspace.
    Backspace,
    /// Escape.
    Esc,
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
    /// Ctrl-C.
    CtrlC,
}

/// A table this client sits at (or watches), as attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    /// The table.
    pub table: Uuid,
    /// The seat, `None` when watching.
    pub seat: Option<Seat>,
    /// The owner token, when this client created the table.
    pub owner_token: Option<String>,
}

/// Everything that can happen to the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A key press.
    Key(Key),
    /// Time passes (the clock is redrawn).
    Tick,
    /// The answer to [`Effect::ListTables`].
    Tables(Result<Vec<TableSummary>, String>),
    /// The answer to [`Effect::CreateTable`].
    Created(Result<CreatedTable, String>),
    /// The answer to [`Effect::Join`] or [`Effect::Watch`].
    Attached(Result<Attached, String>),
    /// Something happened in the session.
    Session(Event),
}

/// What the client asks the outside world to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// `GET /api/v1/tables`.
    ListTables,
    /// `POST /api/v1/tables`.
    CreateTable {
        /// The table's name.
        name: String,
        /// Its options.
        options: TableOptions,
    },
    /// Open a session that takes a seat.
    Join {
        /// The table.
        table: Uuid,
        /// The seat wanted (`None`: the first empty one).
        seat: Option<Seat>,
        /// The owner token, when this client created the table.
        owner_token: Option<String>,
    },
    /// Open a session that watches.
    Watch {
        /// The table.
        table: Uuid,
    },
    /// Send a command in the session.
    Send(Command),
    /// Close the session (the seat is held for the short grace).
    CloseSession,
    /// Leave the program.
    Quit,
}

/// How an informational line looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Neutral news.
    Info,
    /// Something refused or failed.
    Error,
}

/// The connection as the table screen shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// Connected and attached.
    Up,
    /// Lost; reconnecting.
    Reconnecting {
        /// The attempt about to be made.
        attempt: u32,
        /// When (client ms).
        at_ms: u64,
        /// What happened.
        reason: String,
    },
    /// Over for good.
    Ended(String),
}

/// The lobby: the list of tables.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lobby {
    /// Tables, newest first.
    pub tables: Vec<TableSummary>,
    /// The highlighted row.
    pub selected: usize,
    /// A list request is out.
    pub loading: bool,
    /// When the list was last asked for (client ms).
    pub listed_at_ms: Option<u64>,
    /// The "new table" name being typed, if any.
    pub naming: Option<String>,
    /// The new table's name and options, being chosen after its name.
    pub choosing: Option<(String, TableOptions)>,
}

/// A table: the latest view and what is being typed.
#[derive(Debug, Clone, PartialEq)]
pub struct TableScreen {
    /// The table.
    pub table: Uuid,
    /// The seat, `None` when watching.
    pub seat: Option<Seat>,
    /// The owner token, when this client created the table.
    pub owner_token: Option<String>,
    /// The latest view.
    pub view: Option<Box<TableView>>,
    /// When it arrived (client ms).
    pub view_at_ms: u64,
    /// What is typed (a bid, a card or a /command).
    pub input: String,
    /// The highlighted card of the hand.
    pub cursor: usize,
    /// The connection.
    pub link: Link,
    /// Esc was pressed once: the next Esc leaves.
    pub confirm_leave: bool,
    /// A move was sent and its answer (a view or a refusal) has not come
    /// yet: another is not sent meanwhile.
    pub awaiting: bool,
    /// The `seq` of the latest view.
    pub seq: u64,
    /// Reconnected: the `seq` of the last view before; the next view says
    /// what the table played for the player since.
    pub returning: Option<u64>,
}

/// Which screen is up.
#[derive(Debug, Clone, PartialEq)]
pub enum Screen {
    /// The list of tables.
    Lobby(Lobby),
    /// At a table.
    Table(Box<TableScreen>),
}

/// The terminal client's whole state.
#[derive(Debug, Clone, PartialEq)]
pub struct App {
    /// The server's address, for the title.
    pub server: String,
    /// The player's name.
    pub name: String,
    /// The screen.
    pub screen: Screen,
    /// The status line: the latest news or refusal.
    pub status: Option<(Tone, String)>,
    /// The key help is shown.
    pub help: bool,
    /// The client's clock (ms, monotonic), as of the latest input.
    pub now_ms: u64,
}

/// How often the lobby list refreshes itself, ms.
const LIST_EVERY_MS: u64 = 5_000;

impl App {
    /// A client for `server`, playing as `name`, in the lobby. The first
    /// [`App::update`] asks for the table list.
    pub fn new(server: impl Into<String>, name: impl Into<String>) -> App {
        App {
            server: server.into(),
            name: name.into(),
            screen: Screen::Lobby(Lobby::default()),
            status: None,
            help: false,
            now_ms: 0,
        }
    }

    fn info(&mut self, text: impl Into<String>) {
        self.status = Some((Tone::Info, text.into()));
    }

    fn error(&mut self, text: impl Into<String>) {
        self.status = Some((Tone::Error, text.into()));
    }

    /// Sits down at `table` straight away (`spades-tui --join`): the first
    /// empty seat, or one a bot holds in the lobby.
    pub fn sit_at(&mut self, table: Uuid) -> Vec<Effect> {
        self.info("taking a seat…");
        vec![Effect::Join { table, seat: None, owner_token: None }]
    }

    /// The table screen, if at a table.
    pub fn table(&self) -> Option<&TableScreen> {
        match &self.screen {
            Screen::Table(t) => Some(t),
            Screen::Lobby(_) => None,
        }
    }

    /// Feeds one input at client time `now_ms`; returns what to do.
    pub fn update(&mut self, now_ms: u64, input: Input) -> Vec<Effect> {
        self.now_ms = now_ms;
        let mut fx = Vec::new();
        if let Input::Key(Key::CtrlC) = input {
            if matches!(self.screen, Screen::Table(_)) {
                fx.push(Effect::CloseSession);
            }
            fx.push(Effect::Quit);
            return fx;
        }
        if let Input::Key(Key::Char('?')) = input
            && !self.typing()
        {
            self.help = !self.help;
            return fx;
        }
        match input {
            Input::Key(k) => {
                let before = self.status.clone();
                match &self.screen {
                    Screen::Lobby(_) => self.lobby_key(k, &mut fx),
                    Screen::Table(_) => self.table_key(k, &mut fx),
                }
                // The next action clears an old refusal: it is about a move
                // that is no longer being made.
                let acted = fx.iter().any(|f| {
                    matches!(
                        f,
                        Effect::Send(_)
                            | Effect::CreateTable { .. }
                            | Effect::Join { .. }
                            | Effect::Watch { .. }
                    )
                });
                if acted && self.status == before && matches!(before, Some((Tone::Error, _))) {
                    self.status = None;
                }
            }
            Input::Tick => {
                if let Screen::Lobby(l) = &mut self.screen
                    && !l.loading
                    && l.listed_at_ms.is_none_or(|t| now_ms >= t + LIST_EVERY_MS)
                {
                    l.loading = true;
                    l.listed_at_ms = Some(now_ms);
                    fx.push(Effect::ListTables);
                }
            }
            Input::Tables(result) => {
                if let Screen::Lobby(l) = &mut self.screen {
                    l.loading = false;
                    match result {
                        Ok(tables) => {
                            l.tables = tables;
                            l.selected = l.selected.min(l.tables.len().saturating_sub(1));
                        }
                        Err(e) => self.error(format!("could not list the tables: {e}")),
                    }
                }
            }
            Input::Created(result) => match result {
                Ok(created) => {
                    self.info("table created: taking a seat");
                    fx.push(Effect::Join {
                        table: created.table,
                        seat: None,
                        owner_token: Some(created.owner_token),
                    });
                }
                Err(e) => self.error(format!("could not create the table: {e}")),
            },
            Input::Attached(result) => match result {
                Ok(a) => {
                    let owner = a.owner_token.is_some();
                    self.screen = Screen::Table(Box::new(TableScreen {
                        table: a.table,
                        seat: a.seat,
                        owner_token: a.owner_token,
                        view: None,
                        view_at_ms: now_ms,
                        input: String::new(),
                        cursor: 0,
                        link: Link::Up,
                        confirm_leave: false,
                        awaiting: false,
                        seq: 0,
                        returning: None,
                    }));
                    match a.seat {
                        Some(seat) if owner => self.info(format!(
                            "you sit {seat} and own the table: b fills empty seats with bots, s starts"
                        )),
                        Some(seat) => self.info(format!("you sit {seat}: the owner starts the match")),
                        None => self.info("watching"),
                    }
                }
                Err(e) => self.error(format!("could not sit down: {e}")),
            },
            Input::Session(event) => self.session_event(event, &mut fx),
        }
        fx
    }

    /// True while text is being typed (keys are text, not commands).
    fn typing(&self) -> bool {
        match &self.screen {
            Screen::Lobby(l) => l.naming.is_some() || l.choosing.is_some(),
            Screen::Table(t) => !t.input.is_empty(),
        }
    }

    fn lobby_key(&mut self, key: Key, fx: &mut Vec<Effect>) {
        let Screen::Lobby(l) = &mut self.screen else { return };
        if let Some(name) = &mut l.naming {
            match key {
                Key::Char(c) if !c.is_control() && name.chars().count() < 40 => name.push(c),
                Key::Backspace => {
                    name.pop();
                }
                Key::Esc => l.naming = None,
                Key::Enter => {
                    let name = name.trim().to_owned();
                    l.naming = None;
                    let name = if name.is_empty() { format!("{}'s table", self.name) } else { name };
                    l.choosing = Some((name, TableOptions::default()));
                    self.info("choose the options: each key changes one; Enter creates the table");
                }
                _ => {}
            }
            return;
        }
        if let Some((name, options)) = &mut l.choosing {
            match key {
                Key::Char(c) => {
                    options::cycle(options, c.to_ascii_lowercase());
                }
                Key::Esc => {
                    l.choosing = None;
                    self.status = None;
                }
                Key::Enter => {
                    let (name, options) = (name.clone(), *options);
                    l.choosing = None;
                    fx.push(Effect::CreateTable { name, options });
                    self.info("creating the table…");
                }
                _ => {}
            }
            return;
        }
        let selected = l.tables.get(l.selected).map(|t| t.table);
        match key {
            Key::Up | Key::Char('k') => l.selected = l.selected.saturating_sub(1),
            Key::Down | Key::Char('j') => {
                l.selected = (l.selected + 1).min(l.tables.len().saturating_sub(1));
            }
            Key::Char('r') if !l.loading => {
                l.loading = true;
                l.listed_at_ms = Some(self.now_ms);
                fx.push(Effect::ListTables);
            }
            Key::Char('c') => l.naming = Some(String::new()),
            Key::Enter => match selected {
                Some(table) => {
                    fx.push(Effect::Join { table, seat: None, owner_token: None });
                    self.info("taking a seat…");
                }
                None => self.error("no table selected: press c to create one"),
            },
            Key::Char('w') => match selected {
                Some(table) => fx.push(Effect::Watch { table }),
                None => self.error("no table selected"),
            },
            Key::Char('q') | Key::Esc => fx.push(Effect::Quit),
            _ => {}
        }
    }

    fn table_key(&mut self, key: Key, fx: &mut Vec<Effect>) {
        let Screen::Table(t) = &mut self.screen else { return };
        let esc_armed = std::mem::take(&mut t.confirm_leave);
        let finished = t.view.as_ref().is_some_and(|v| v.phase == TablePhase::Finished);
        match key {
            Key::Esc if !t.input.is_empty() => t.input.clear(),
            Key::Esc if esc_armed || finished || t.seat.is_none() || matches!(t.link, Link::Ended(_)) => {
                fx.push(Effect::CloseSession);
                self.back_to_lobby(fx);
            }
            Key::Esc => {
                t.confirm_leave = true;
                self.info(
                    "press Esc again to go back to the lobby (your seat is held 10 s, then a bot plays it)",
                );
            }
            Key::Left => t.cursor = t.cursor.saturating_sub(1),
            Key::Right => {
                let n = hand_cards(t).len();
                t.cursor = (t.cursor + 1).min(n.saturating_sub(1));
            }
            Key::Backspace => {
                t.input.pop();
            }
            Key::Char(c) if t.input.is_empty() && in_lobby(t) && (c == 'b' || c == 's') => {
                let cmd = if c == 'b' { "/bots" } else { "/start" };
                self.command(cmd, fx);
            }
            Key::Char(c) if !c.is_control() && t.input.chars().count() < 24 => t.input.push(c),
            Key::Enter => {
                let text = std::mem::take(&mut t.input);
                let text = text.trim();
                if text.starts_with('/') {
                    self.command(text, fx);
                    return;
                }
                if t.awaiting {
                    self.info("waiting for the server's answer to your move");
                    return;
                }
                if text.is_empty() {
                    self.enter_without_text(fx);
                } else {
                    self.typed_move(text, fx);
                }
                if fx.iter().any(|f| matches!(f, Effect::Send(Command::Bid(_) | Command::Play(_))))
                    && let Screen::Table(t) = &mut self.screen
                {
                    t.awaiting = true;
                }
            }
            _ => {}
        }
    }

    fn back_to_lobby(&mut self, fx: &mut Vec<Effect>) {
        self.screen =
            Screen::Lobby(Lobby { loading: true, listed_at_ms: Some(self.now_ms), ..Lobby::default() });
        fx.push(Effect::ListTables);
    }

    /// Enter with nothing typed: play the highlighted card.
    fn enter_without_text(&mut self, fx: &mut Vec<Effect>) {
        let Screen::Table(t) = &self.screen else { return };
        let Some(view) = t.view.as_deref() else { return };
        let Some(game) = view.game.as_ref() else { return };
        if view.phase == TablePhase::Finished {
            fx.push(Effect::CloseSession);
            self.back_to_lobby(fx);
            return;
        }
        if t.seat.is_none() {
            return;
        }
        match game.legal {
            Legal::Play { .. } => {
                if let Some(card) = hand_cards(t).get(t.cursor).copied() {
                    fx.push(Effect::Send(Command::Play(card)));
                }
            }
            Legal::Bid { min, max } => {
                self.info(format!("type your bid ({min}–{max}{}) and press Enter", nil_hint(min)));
            }
            Legal::None => {
                let turn = game.turn.map_or("nobody".to_owned(), |s| s.name().to_owned());
                self.info(format!("it is {turn}'s turn"));
            }
        }
    }

    /// A bid or a card typed by the player.
    fn typed_move(&mut self, text: &str, fx: &mut Vec<Effect>) {
        let Screen::Table(t) = &self.screen else { return };
        let phase = t.view.as_ref().map(|v| v.phase);
        match phase {
            Some(TablePhase::Bidding) => {
                let lower = text.to_ascii_lowercase();
                let bid = if lower == "nil" || lower == "n" { Ok(0) } else { lower.parse::<u8>() };
                match bid {
                    Ok(bid) => fx.push(Effect::Send(Command::Bid(bid))),
                    Err(_) => self.error(format!(
                        "{text:?} is not a bid: type a number from 0 (nil) to 13 and press Enter"
                    )),
                }
            }
            Some(TablePhase::Playing) => match text.parse::<Card>() {
                Ok(card) => fx.push(Effect::Send(Command::Play(card))),
                Err(_) => self.error(format!(
                    "{text:?} is not a card: type the rank then the suit, e.g. QS, 10H, 2C (or use ←/→ and Enter)"
                )),
            },
            Some(TablePhase::Lobby) | None => {
                self.error("the match has not started: the owner fills empty seats with b and starts with s");
            }
            Some(TablePhase::Finished) => self.info("the match is over: Esc goes back to the lobby"),
        }
    }

    fn command(&mut self, text: &str, fx: &mut Vec<Effect>) {
        let Screen::Table(t) = &self.screen else { return };
        let owner = t.owner_token.clone();
        match text.trim_start_matches('/').to_ascii_lowercase().as_str() {
            "bots" | "b" => match owner {
                Some(owner_token) => fx.push(Effect::Send(Command::AddBots { owner_token })),
                None => self.error("only the table's owner can add bots"),
            },
            "start" | "s" => match owner {
                Some(owner_token) => fx.push(Effect::Send(Command::Start { owner_token })),
                None => self.error("only the table's owner can start the match"),
            },
            "takeover" | "take" => fx.push(Effect::Send(Command::TakeOver)),
            "leave" => {
                fx.push(Effect::Send(Command::Leave));
                self.info("you left the match: a bot plays your seat from now on");
            }
            "lobby" => {
                fx.push(Effect::CloseSession);
                self.back_to_lobby(fx);
            }
            "quit" | "q" => {
                fx.push(Effect::CloseSession);
                fx.push(Effect::Quit);
            }
            "help" | "h" => self.help = !self.help,
            other => self.error(format!(
                "unknown command /{other}: try /bots, /start, /takeover, /leave, /lobby, /quit, /help"
            )),
        }
    }

    fn session_event(&mut self, event: Event, fx: &mut Vec<Effect>) {
        let now = self.now_ms;
        let Screen::Table(t) = &mut self.screen else { return };
        match event {
            Event::View { seq, view } => {
                t.awaiting = false;
                let was_my_turn = my_turn(t);
                let hand_before = t.view.as_ref().and_then(|v| v.game.as_ref()).map(|g| g.hand_number);
                let away = t.returning.take().and_then(|seen| away_news(&view, seen));
                let news = away.or_else(|| timeout_news(t.view.as_deref(), &view));
                t.seq = seq;
                t.view = Some(view);
                t.view_at_ms = now;
                let n = hand_cards(t).len();
                let legal = legal_cards(t);
                let on_legal = hand_cards(t).get(t.cursor).is_some_and(|c| legal.contains(c));
                if my_turn(t) && (!was_my_turn || !on_legal) {
                    // Highlight the first playable card: on a new turn, and
                    // when the highlighted one is not playable now (the hand
                    // moved under it, or a trick won brought the lead).
                    t.cursor = hand_cards(t).iter().position(|c| legal.contains(c)).unwrap_or(0);
                }
                t.cursor = t.cursor.min(n.saturating_sub(1));
                let hand_now = t.view.as_ref().and_then(|v| v.game.as_ref()).map(|g| g.hand_number);
                if hand_before.is_some() && hand_now != hand_before {
                    self.info("a new hand is dealt");
                }
                if let Some(news) = news {
                    self.info(news);
                }
            }
            Event::Ack { .. } => {
                if self.status.as_ref().is_some_and(|(tone, _)| *tone == Tone::Error) {
                    self.status = None;
                }
            }
            Event::Refused { message, .. } => {
                t.awaiting = false;
                self.error(message);
            }
            Event::Pong { .. } => {}
            Event::Chat { name, text, .. } => {
                // The server refuses control characters; a terminal is kept safe anyway.
                let text: String = text.chars().filter(|c| !c.is_control()).collect();
                self.info(format!("{name}: {text}"));
            }
            Event::ChatRemoved { .. } => self.info("a moderator removed a chat message"),
            Event::Disconnected { reason, attempt, retry_in } => {
                t.link = Link::Reconnecting { attempt, at_ms: now + retry_in.as_millis() as u64, reason };
            }
            Event::Reconnected { .. } => {
                t.link = Link::Up;
                t.awaiting = false;
                t.returning = Some(t.seq);
                let what = if t.seat.is_some() { "reconnected: your seat is back" } else { "reconnected" };
                self.info(what);
            }
            Event::Unsent { .. } => {
                t.awaiting = false;
                self.error("not sent: the connection is down; try again once reconnected");
            }
            Event::Ended { reason } => {
                t.link = Link::Ended(reason.clone());
                self.error(format!("disconnected for good: {reason} (Esc: back to the lobby)"));
            }
        }
        let _ = fx;
    }

    /// The screen as lines of styled text.
    pub fn lines(&self) -> Vec<ratatui::text::Line<'static>> {
        render::lines(self)
    }
}

fn in_lobby(t: &TableScreen) -> bool {
    t.view.as_ref().is_none_or(|v| v.phase == TablePhase::Lobby)
}

fn nil_hint(min: u8) -> &'static str {
    if min == 0 { ", 0 is nil" } else { "" }
}

/// The cards of the player's hand, in display order.
pub fn hand_cards(t: &TableScreen) -> Vec<Card> {
    t.view
        .as_ref()
        .and_then(|v| v.game.as_ref())
        .and_then(|g| g.hand)
        .map(|h| h.into_iter().collect())
        .unwrap_or_default()
}

fn legal_cards(t: &TableScreen) -> Vec<Card> {
    match t.view.as_ref().and_then(|v| v.game.as_ref()).map(|g| g.legal) {
        Some(Legal::Play { cards }) => cards.into_iter().collect(),
        _ => Vec::new(),
    }
}

/// True when the player's seat is on turn.
pub fn my_turn(t: &TableScreen) -> bool {
    let Some(v) = t.view.as_ref() else { return false };
    v.you.is_some() && v.game.as_ref().and_then(|g| g.turn) == v.you
}

/// Milliseconds left on the turn clock at client time `now_ms`, from the
/// view's deadline and server time (so the client's own clock does not
/// matter).
pub fn clock_left_ms(t: &TableScreen, now_ms: u64) -> Option<u64> {
    let v = t.view.as_ref()?;
    let clock = v.clock?;
    let at_receipt = clock.deadline.saturating_sub(v.server_time);
    Some(at_receipt.saturating_sub(now_ms.saturating_sub(t.view_at_ms)))
}

/// `m:ss`, rounding up.
pub fn mmss(ms: u64) -> String {
    let s = ms.div_ceil(1000);
    format!("{}:{:02}", s / 60, s % 60)
}

/// The first view after a reconnection: the moves the table made for the
/// player in frames after `seen`, the last one this client had ("while you
/// were away the table bid 2, played 8D and played KH for you").
pub fn away_news(view: &TableView, seen: u64) -> Option<String> {
    let moves: Vec<String> = view
        .played_for_you
        .iter()
        .filter(|p| p.seq > seen)
        .map(|p| match p.action {
            spades_engine::Action::Bid(0) => "bid nil".to_owned(),
            spades_engine::Action::Bid(n) => format!("bid {n}"),
            spades_engine::Action::Play(card) => format!("played {card}"),
        })
        .collect();
    let (last, rest) = moves.split_last()?;
    let said = if rest.is_empty() { last.clone() } else { format!("{} and {last}", rest.join(", ")) };
    Some(format!("while you were away the table {said} for you"))
}

/// What a new view says about this client's own clock running out: the
/// move the table made for it ("time ran out: the table played 4C for you
/// (1 of 3 before autopilot)"), and the autopilot coming on.
pub fn timeout_news(prev: Option<&TableView>, view: &TableView) -> Option<String> {
    let you = view.you?;
    let i = usize::from(you.index());
    let now = view.seats[i].status;
    let before = prev.map(|p| p.seats[i].status);
    if now == spades_protocol::SeatStatus::Autopilot && before != Some(now) {
        return Some(format!(
            "autopilot is on after {} timeouts in a row: /takeover to play again",
            view.seats[i].timeouts
        ));
    }
    let last = view.last_action?;
    if last.seat != you
        || last.source != spades_protocol::ActionSource::Timeout
        || prev.and_then(|p| p.last_action) == Some(last)
    {
        return None;
    }
    let what = match last.action {
        spades_engine::Action::Bid(0) => "bid nil".to_owned(),
        spades_engine::Action::Bid(n) => format!("bid {n}"),
        spades_engine::Action::Play(card) => format!("played {card}"),
    };
    Some(format!(
        "time ran out: the table {what} for you ({} of {} before autopilot)",
        view.seats[i].timeouts, view.autopilot_after
    ))
}

#[cfg(test)]
mod tests;
