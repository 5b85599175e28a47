//! Carries out the state machine's effects with the client library.

use tokio::sync::mpsc;

use super::{Attached, Effect, Input};
use crate::{Attach, Client, Session, SessionOptions, TableQuery};

enum Done {
    Input(Input),
    Opened(Session, Option<String>),
}

/// Performs [`Effect`]s (REST calls, sessions, commands) and yields their
/// outcomes as [`Input`]s, in the order they happen.
#[derive(Debug)]
pub struct Driver {
    client: Client,
    name: String,
    opts: SessionOptions,
    session: Option<Session>,
    done_tx: mpsc::UnboundedSender<Done>,
    done_rx: mpsc::UnboundedReceiver<Done>,
}

impl std::fmt::Debug for Done {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Done::Input(i) => write!(f, "Input({i:?})"),
            Done::Opened(..) => f.write_str("Opened"),
        }
    }
}

impl Driver {
    /// A driver for `client`, sitting down as `name`.
    pub fn new(client: Client, name: impl Into<String>, opts: SessionOptions) -> Driver {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        Driver { client, name: name.into(), opts, session: None, done_tx, done_rx }
    }

    /// The current session, if at a table.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    /// Starts carrying out `effect`; its outcome comes from
    /// [`Driver::next_input`]. [`Effect::Quit`] is the caller's business.
    pub async fn perform(&mut self, effect: Effect) {
        let tx = self.done_tx.clone();
        match effect {
            Effect::ListTables => {
                let client = self.client.clone();
                tokio::spawn(async move {
                    let r = client.tables(TableQuery { limit: Some(100), ..TableQuery::default() }).await;
                    let _ = tx.send(Done::Input(Input::Tables(r.map_err(|e| e.to_string()))));
                });
            }
            Effect::CreateTable { name, options } => {
                let client = self.client.clone();
                tokio::spawn(async move {
                    let req = spades_protocol::CreateTable { name: Some(name), options };
                    let r = client.create_table(&req).await;
                    let _ = tx.send(Done::Input(Input::Created(r.map_err(|e| e.to_string()))));
                });
            }
            Effect::Join { table, seat, owner_token } => {
                self.open(Attach::Join { table, name: self.name.clone(), seat }, owner_token).await;
            }
            Effect::Watch { table } => self.open(Attach::Watch { table }, None).await,
            Effect::Send(cmd) => {
                if let Some(s) = &self.session
                    && s.send(cmd).is_err()
                {
                    let _ = tx.send(Done::Input(Input::Session(crate::Event::Ended {
                        reason: "the session has ended".into(),
                    })));
                }
            }
            Effect::CloseSession => {
                if let Some(s) = self.session.take() {
                    s.close().await;
                }
            }
            Effect::Quit => {}
        }
    }

    async fn open(&mut self, attach: Attach, owner_token: Option<String>) {
        if let Some(old) = self.session.take() {
            old.close().await;
        }
        let client = self.client.clone();
        let opts = self.opts.clone();
        let tx = self.done_tx.clone();
        tokio::spawn(async move {
            let done = match client.session(attach, opts).await {
                Ok(s) => Done::Opened(s, owner_token),
                Err(e) => Done::Input(Input::Attached(Err(e.to_string()))),
            };
            let _ = tx.send(done);
        });
    }

    /// The next outcome: an answer to an effect or a session event.
    pub async fn next_input(&mut self) -> Input {
        loop {
            let done = match &mut self.session {
                Some(s) => tokio::select! {
                    d = self.done_rx.recv() => d,
                    e = s.next_event() => match e {
                        Some(e) => return Input::Session(e),
                        None => {
                            self.session = None;
                            continue;
                        }
                    },
                },
                None => self.done_rx.recv().await,
            };
            match done {
                Some(Done::Input(i)) => return i,
                Some(Done::Opened(session, owner_token)) => {
                    let attached = Attached { table: session.table(), seat: session.seat(), owner_token };
                    self.session = Some(session);
                    return Input::Attached(Ok(attached));
                }
                None => std::future::pending::<()>().await,
            }
        }
    }
}
