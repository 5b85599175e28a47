//! A supervised session: one seat (or a spectator's place) at one table,
//! kept across dropped connections.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use spades_engine::{Action, Card, Seat};
use spades_protocol::{ClientFrame, ClientMessage, ErrorCode, ServerMessage, TableView};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::debug;
use uuid::Uuid;

use crate::conn::{ConnectOptions, Connection, Endpoint};
use crate::error::{Error, Result};

/// How a session attaches to its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attach {
    /// Take a seat (the first empty one when `seat` is `None`).
    Join {
        /// The table.
        table: Uuid,
        /// The display name (1 to 24 characters).
        name: String,
        /// The seat wanted.
        seat: Option<Seat>,
    },
    /// Come back to a seat with its token.
    Resume {
        /// The table.
        table: Uuid,
        /// The seat token.
        token: String,
    },
    /// Watch as a spectator.
    Watch {
        /// The table.
        table: Uuid,
    },
}

impl Attach {
    /// The table.
    pub fn table(&self) -> Uuid {
        match self {
            Attach::Join { table, .. } | Attach::Resume { table, .. } | Attach::Watch { table } => *table,
        }
    }
}

/// Exponential backoff with jitter between reconnection attempts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The delay before the first attempt.
    pub initial: Duration,
    /// The longest delay.
    pub max: Duration,
    /// Each delay is the previous one times this.
    pub factor: f64,
    /// Each delay is shortened by a random part up to this fraction (0 to
    /// 1), so that clients dropped together do not come back together.
    pub jitter: f64,
    /// Give up after this many attempts in a row (`None`: never).
    pub max_attempts: Option<u32>,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff {
            initial: Duration::from_millis(250),
            max: Duration::from_secs(10),
            factor: 2.0,
            jitter: 0.5,
            max_attempts: None,
        }
    }
}

impl Backoff {
    /// The delay before attempt `attempt` (1-based), with `unit` a random
    /// number in `[0, 1)` for the jitter.
    pub fn delay(&self, attempt: u32, unit: f64) -> Duration {
        let exp = self.factor.powi(attempt.saturating_sub(1).min(64) as i32);
        let full = self.initial.as_secs_f64() * exp;
        let capped = full.min(self.max.as_secs_f64());
        Duration::from_secs_f64(capped * (1.0 - self.jitter.clamp(0.0, 1.0) * unit.clamp(0.0, 1.0)))
    }
}

/// How a session connects and reconnects.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// For each connection.
    pub connect: ConnectOptions,
    /// Between reconnection attempts.
    pub backoff: Backoff,
    /// Keep-alive: the session pings this often and counts the connection
    /// as lost after three intervals without hearing from the server
    /// (default 15 s).
    pub keepalive: Option<Duration>,
}

/// What a seated (or watching) session can ask of its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Bid (0 is nil).
    Bid(u8),
    /// Play a card.
    Play(Card),
    /// Owner: start the match.
    Start {
        /// The owner token.
        owner_token: String,
    },
    /// Owner: a bot in every empty seat.
    AddBots {
        /// The owner token.
        owner_token: String,
    },
    /// Take the seat back from the autopilot.
    TakeOver,
    /// Leave the match for good.
    Leave,
    /// Protocol-level ping (the reply is [`Event::Pong`]).
    Ping,
}

impl From<Action> for Command {
    fn from(action: Action) -> Command {
        match action {
            Action::Bid(b) => Command::Bid(b),
            Action::Play(c) => Command::Play(c),
        }
    }
}

impl Command {
    /// The protocol message.
    pub fn to_message(&self) -> ClientMessage {
        match self {
            Command::Bid(bid) => ClientMessage::Bid { bid: *bid, seq: None },
            Command::Play(card) => ClientMessage::Play { card: *card, seq: None },
            Command::Start { owner_token } => ClientMessage::Start { owner_token: Some(owner_token.clone()) },
            Command::AddBots { owner_token } => {
                ClientMessage::AddBots { owner_token: Some(owner_token.clone()) }
            }
            Command::TakeOver => ClientMessage::TakeOver,
            Command::Leave => ClientMessage::Leave,
            Command::Ping => ClientMessage::Ping,
        }
    }
}

/// What happens in a session, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The table as this session sees it (after every change, and at once
    /// after every (re)attachment).
    View {
        /// The table's change counter.
        seq: u64,
        /// The view.
        view: Box<TableView>,
    },
    /// A command was accepted.
    Ack {
        /// Its request id.
        req: u32,
    },
    /// A command was refused; nothing changed. `message` explains why, in
    /// plain English.
    Refused {
        /// Its request id (`None` when the server could not read the frame).
        req: Option<u32>,
        /// The stable code.
        code: ErrorCode,
        /// The explanation, for the player.
        message: String,
    },
    /// The reply to [`Command::Ping`].
    Pong {
        /// Its request id.
        req: u32,
    },
    /// Somebody said something at the table (show it as text).
    Chat {
        /// The message's number at the table.
        id: u64,
        /// The seat that wrote, `None` for a spectator.
        from: Option<Seat>,
        /// The writer's name.
        name: String,
        /// The message.
        text: String,
        /// The writer's account, when signed in: hide it when the player
        /// blocks that account (`GET /api/v1/me/blocks`).
        account: Option<Uuid>,
    },
    /// An operator removed the message `id`: stop showing it.
    ChatRemoved {
        /// The [`Event::Chat`]'s `id`.
        id: u64,
    },
    /// The connection was lost; the next attempt to reconnect comes after
    /// `retry_in`.
    Disconnected {
        /// What happened.
        reason: String,
        /// The attempt about to be made (1 for the first).
        attempt: u32,
        /// The wait before it.
        retry_in: Duration,
    },
    /// Connected again and re-attached (the seat resumed with its token);
    /// the current view follows.
    Reconnected {
        /// Attempts it took.
        attempts: u32,
    },
    /// A command could not be sent: the session is reconnecting. Nothing
    /// was done; send it again once reconnected.
    Unsent {
        /// Its request id.
        req: u32,
        /// Why.
        reason: String,
    },
    /// The session is over (closed, the table closed, or the token was
    /// refused); no more events follow.
    Ended {
        /// Why.
        reason: String,
    },
}

enum Ctl {
    Send(u32, ClientMessage),
    Close,
}

/// A seat (or a spectator's place) at a table, kept across dropped
/// connections.
///
/// [`Session::open`] connects and attaches (joining, resuming or watching);
/// a background task then reads the server's frames into [`Event`]s and
/// sends [`Command`]s. When the connection drops it reconnects with
/// exponential backoff and jitter and resumes the seat with the stored seat
/// token (or watches again), reporting [`Event::Disconnected`] and
/// [`Event::Reconnected`]; the current view follows at once.
///
/// ```no_run
/// use spades_client::{Attach, Client, Command, Event, SessionOptions};
/// use spades_client::protocol::{CreateTable, TablePhase};
///
/// # async fn demo() -> Result<(), spades_client::Error> {
/// let client = Client::new("http://127.0.0.1:8080")?;
/// let created = client.create_table(&CreateTable::default()).await?;
/// let join = Attach::Join { table: created.table, name: "Ann".into(), seat: None };
/// let mut session = client.session(join, SessionOptions::default()).await?;
/// session.send(Command::AddBots { owner_token: created.owner_token.clone() })?;
/// session.send(Command::Start { owner_token: created.owner_token })?;
/// while let Some(event) = session.next_event().await {
///     match event {
///         Event::View { view, .. } => {
///             if view.phase == TablePhase::Finished {
///                 break;
///             }
///             if let Some(action) = spades_client::first_legal_action(&view) {
///                 session.send(action.into())?;
///             }
///         }
///         Event::Refused { message, .. } => eprintln!("refused: {message}"),
///         Event::Disconnected { retry_in, .. } => eprintln!("reconnecting in {retry_in:?}"),
///         _ => {}
///     }
/// }
/// session.close().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Session {
    ctl: mpsc::UnboundedSender<Ctl>,
    events: mpsc::UnboundedReceiver<Event>,
    next_req: Arc<AtomicU32>,
    table: Uuid,
    seat: Option<Seat>,
    token: Option<String>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Ctl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ctl::Send(req, msg) => write!(f, "Send({req}, {msg:?})"),
            Ctl::Close => f.write_str("Close"),
        }
    }
}

impl Session {
    /// Connects to `endpoint` and attaches to the table; returns once
    /// attached (the first view is the first event).
    ///
    /// # Errors
    /// The attachment was refused ([`Error::Refused`]: `table_not_found`,
    /// `seat_taken`, `invalid_token`, …) or the server could not be reached.
    pub async fn open(endpoint: &Endpoint, attach: Attach, opts: SessionOptions) -> Result<Session> {
        let next_req = Arc::new(AtomicU32::new(1));
        let mut conn = Connection::connect_with(endpoint, &opts.connect).await?;
        let (seat, token) = attach_with(&mut conn, &attach).await?;
        let table = attach.table();
        // Later attachments resume the seat with its token.
        let again = match (&attach, &token) {
            (Attach::Join { .. } | Attach::Resume { .. }, Some(token)) => {
                Attach::Resume { table, token: token.clone() }
            }
            _ => attach,
        };
        let (ctl_tx, ctl_rx) = mpsc::unbounded_channel();
        let (ev_tx, ev_rx) = mpsc::unbounded_channel();
        let supervisor = Supervisor {
            endpoint: endpoint.clone(),
            attach: again,
            opts,
            ctl: ctl_rx,
            events: ev_tx,
            rng: crate::rng::SplitMix::from_time(),
        };
        let task = tokio::spawn(supervisor.run(conn));
        Ok(Session { ctl: ctl_tx, events: ev_rx, next_req, table, seat, token, task })
    }

    /// The table.
    pub fn table(&self) -> Uuid {
        self.table
    }

    /// The seat, `None` for a spectator.
    pub fn seat(&self) -> Option<Seat> {
        self.seat
    }

    /// The seat token (keep it to resume from another program).
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Sends a command and returns its request id: its answer is an
    /// [`Event::Ack`] or [`Event::Refused`] with that id (or
    /// [`Event::Unsent`] while reconnecting).
    ///
    /// # Errors
    /// [`Error::SessionEnded`] once the session has ended.
    pub fn send(&self, cmd: Command) -> Result<u32> {
        let req = self.next_req.fetch_add(1, Ordering::Relaxed);
        self.ctl.send(Ctl::Send(req, cmd.to_message())).map_err(|_| Error::SessionEnded)?;
        Ok(req)
    }

    /// The next event; `None` after [`Event::Ended`].
    pub async fn next_event(&mut self) -> Option<Event> {
        self.events.recv().await
    }

    /// The next event if one is waiting.
    pub fn try_next_event(&mut self) -> Option<Event> {
        self.events.try_recv().ok()
    }

    /// Tells the server the client is closing on purpose (the seat is held
    /// for the short grace) and closes the connection.
    pub async fn close(self) {
        let _ = self.ctl.send(Ctl::Close);
        let _ = tokio::time::timeout(Duration::from_secs(3), self.task).await;
    }
}

/// Attaches a fresh connection; returns the seat and token.
async fn attach_with(conn: &mut Connection, attach: &Attach) -> Result<(Option<Seat>, Option<String>)> {
    match attach {
        Attach::Join { table, name, seat } => {
            let joined = conn.join(*table, name, *seat).await?;
            Ok((Some(joined.seat), Some(joined.token)))
        }
        Attach::Resume { table, token } => {
            let seat = conn.resume(*table, token).await?;
            Ok((Some(seat), Some(token.clone())))
        }
        Attach::Watch { table } => {
            conn.watch(*table).await?;
            Ok((None, None))
        }
    }
}

struct Supervisor {
    endpoint: Endpoint,
    attach: Attach,
    opts: SessionOptions,
    ctl: mpsc::UnboundedReceiver<Ctl>,
    events: mpsc::UnboundedSender<Event>,
    rng: crate::rng::SplitMix,
}

enum Lost {
    /// The user closed the session.
    Closed,
    /// The connection failed.
    Failed(Error),
}

impl Supervisor {
    async fn run(mut self, first: Connection) {
        let mut conn = first;
        loop {
            let error = match self.serve(&mut conn).await {
                Lost::Closed => {
                    let _ = conn.send(ClientMessage::Closing).await;
                    conn.close_now().await;
                    self.end("closed by the client");
                    return;
                }
                Lost::Failed(e) => e,
            };
            if error.is_permanent() {
                self.end(&error.to_string());
                return;
            }
            match self.reconnect(error).await {
                Some(c) => conn = c,
                None => return,
            }
        }
    }

    fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }

    fn end(&self, reason: &str) {
        self.emit(Event::Ended { reason: reason.to_owned() });
    }

    /// Runs one connection until it is lost or the user closes.
    async fn serve(&mut self, conn: &mut Connection) -> Lost {
        let interval = self.opts.keepalive.unwrap_or(Duration::from_secs(15));
        let mut tick = tokio::time::interval_at(Instant::now() + interval, interval);
        let mut last_heard = Instant::now();
        loop {
            tokio::select! {
                ctl = self.ctl.recv() => match ctl {
                    None | Some(Ctl::Close) => return Lost::Closed,
                    Some(Ctl::Send(req, msg)) => {
                        if let Err(e) = conn.send_frame(&ClientFrame { req: Some(req), msg }).await {
                            self.emit(Event::Unsent { req, reason: e.to_string() });
                            return Lost::Failed(e);
                        }
                    }
                },
                msg = conn.recv() => {
                    last_heard = Instant::now();
                    match msg {
                        Ok(msg) => self.dispatch(msg),
                        Err(Error::Protocol(e)) => debug!(error = %e, "unreadable frame skipped"),
                        Err(e) => return Lost::Failed(e),
                    }
                }
                _ = tick.tick() => {
                    if conn.last_heard().max(last_heard).elapsed() > interval * 3 {
                        return Lost::Failed(Error::Closed { code: None, reason: "the server stopped answering".into() });
                    }
                    if let Err(e) = conn.send_ping().await {
                        return Lost::Failed(e);
                    }
                }
            }
        }
    }

    /// Passes a frame on as an event (change frames come here as the
    /// complete views [`Connection::recv`] made of them).
    fn dispatch(&self, msg: ServerMessage) {
        let event = match msg {
            ServerMessage::View { seq, view } => Event::View { seq, view },
            ServerMessage::Ack { req } => Event::Ack { req: req.unwrap_or(0) },
            ServerMessage::Pong { req } => Event::Pong { req: req.unwrap_or(0) },
            ServerMessage::Error { req, code, message } => Event::Refused { req, code, message },
            ServerMessage::Chat { id, from, name, text, account, .. } => {
                Event::Chat { id, from, name, text, account }
            }
            ServerMessage::ChatRemoved { id } => Event::ChatRemoved { id },
            ServerMessage::Hello { .. }
            | ServerMessage::Change { .. }
            | ServerMessage::Joined { .. }
            | ServerMessage::Resumed { .. }
            | ServerMessage::Watching { .. }
            | ServerMessage::Invited { .. } => return,
        };
        self.emit(event);
    }

    /// Reconnects with backoff; `None` when the session ended meanwhile.
    async fn reconnect(&mut self, mut error: Error) -> Option<Connection> {
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            if self.opts.backoff.max_attempts.is_some_and(|m| attempt > m) {
                self.end(&format!("gave up reconnecting after {} attempts: {error}", attempt - 1));
                return None;
            }
            let delay = self.opts.backoff.delay(attempt, self.rng.unit());
            debug!(attempt, ?delay, %error, "connection lost");
            self.emit(Event::Disconnected { reason: error.to_string(), attempt, retry_in: delay });
            let sleep = tokio::time::sleep(delay);
            tokio::pin!(sleep);
            loop {
                tokio::select! {
                    () = &mut sleep => break,
                    ctl = self.ctl.recv() => match ctl {
                        None | Some(Ctl::Close) => {
                            self.end("closed by the client");
                            return None;
                        }
                        Some(Ctl::Send(req, _)) => {
                            self.emit(Event::Unsent { req, reason: "reconnecting".into() });
                        }
                    },
                }
            }
            let result = async {
                let mut conn = Connection::connect_with(&self.endpoint, &self.opts.connect).await?;
                attach_with(&mut conn, &self.attach).await?;
                Ok::<_, Error>(conn)
            }
            .await;
            match result {
                Ok(conn) => {
                    self.emit(Event::Reconnected { attempts: attempt });
                    return Some(conn);
                }
                Err(e) if e.is_permanent() => {
                    self.end(&format!("could not reattach: {e}"));
                    return None;
                }
                Err(e) => error = e,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_its_cap_with_jitter_below() {
        let b = Backoff::default();
        assert_eq!(b.delay(1, 0.0), Duration::from_millis(250));
        assert_eq!(b.delay(2, 0.0), Duration::from_millis(500));
        assert_eq!(b.delay(3, 0.0), Duration::from_secs(1));
        assert_eq!(b.delay(30, 0.0), Duration::from_secs(10));
        assert_eq!(b.delay(1000, 0.0), Duration::from_secs(10));
        assert_eq!(b.delay(1, 0.999_999).as_millis(), 125);
        assert!(b.delay(3, 0.5) < b.delay(3, 0.0));
    }

    #[test]
    fn commands_map_to_messages() {
        let card: Card = "QH".parse().unwrap();
        assert_eq!(Command::from(Action::Play(card)).to_message(), ClientMessage::Play { card, seq: None });
        assert_eq!(Command::from(Action::Bid(0)).to_message(), ClientMessage::Bid { bid: 0, seq: None });
        assert_eq!(Command::TakeOver.to_message(), ClientMessage::TakeOver);
    }
}
