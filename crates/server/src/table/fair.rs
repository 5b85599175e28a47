//! Fair deals at the table: the server seed drawn and committed to while
//! the table is in the lobby, the players' commitments to their seeds, the
//! seeds revealed once the owner's start closes the commitments, and the
//! seeds fixed at the deal (see `docs/fairness.md`).
//!
//! No seed is shown before every commitment that counts is fixed: a seat
//! commits to its seed by hash (`commit_seed`), the start closes the
//! commitments, and only then do the seats reveal (`seed`), each seed
//! checked against its seat's commitment. Nobody, not even a player the
//! server tells everything, can choose a seed after seeing another. A seed
//! sent in the clear before the start (older clients) counts as committed
//! and is kept secret until then. Nothing waits long on a client: the
//! reveals close after `tables.reveal_ms`, and a seat that has not revealed
//! by then deals without its seed.

use spades_engine::{BySeat, ClientSeed, Commitment, FAIR_VERSION, FairSeeds, Match, Seat, ServerSeed};
use spades_protocol::{ErrorCode, Fairness, SeatKind, ServerMessage};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use super::{ConnId, Role, Table};
use crate::token::{TokenHash, new_server_seed};

/// One seat's contribution: the commitment (sent, or made here from a seed
/// sent in the clear) and the seed once known, with the token hash of the
/// player who made it (a seat that changes hands loses it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Contribution {
    from: TokenHash,
    commitment: Commitment,
    seed: Option<ClientSeed>,
}

/// The reveals after the owner's start: until when, and who started (told
/// if the deal then fails).
#[derive(Debug, Clone, Copy)]
pub(super) struct Reveal {
    pub(super) by: Instant,
    by_ms: u64,
    starter: (ConnId, Option<u32>),
}

/// The lobby's side of a fair match: the server seed, drawn before any
/// player's contribution is taken, and the contributions so far. `Debug`
/// never shows the server seed.
#[derive(Debug)]
pub(super) struct Lobby {
    server: ServerSeed,
    seeds: BySeat<Option<Contribution>>,
    /// While the seats reveal their seeds.
    pub(super) reveal: Option<Reveal>,
}

impl Lobby {
    /// A fresh server seed; `None` when the random source fails (the start
    /// tries again).
    pub(super) fn draw() -> Option<Lobby> {
        match new_server_seed() {
            Ok(server) => Some(Lobby { server, seeds: BySeat([None; 4]), reveal: None }),
            Err(e) => {
                warn!(error = %e, "could not draw a server seed");
                None
            }
        }
    }

    /// Two seats swapped their occupants: their contributions go with them
    /// (a commitment names its seat, so a moved player commits again).
    pub(super) fn swap(&mut self, a: Seat, b: Seat) {
        self.seeds.0.swap(usize::from(a.index()), usize::from(b.index()));
    }
}

impl Table {
    /// The fair-deal information everybody may see: of the match once it
    /// has started (the server seed once it is over), else of the lobby.
    pub(super) fn fairness(&self) -> Option<Fairness> {
        if let Some(m) = &self.game {
            let seeds = m.fair_seeds()?;
            return Some(Fairness {
                version: FAIR_VERSION,
                commitment: seeds.commitment(),
                client_seeds: seeds.client_seeds().0,
                client_commitments: self.commitments.0,
                fixed: true,
                server_seed: m.result().is_some().then(|| *seeds.server_seed()),
                reveal_by: None,
            });
        }
        let lobby = self.fair.as_ref()?;
        let counted = self.counted(lobby);
        // Seeds are shown only once the start has closed the commitments.
        let shown = lobby.reveal.is_some();
        Some(Fairness {
            version: FAIR_VERSION,
            commitment: lobby.server.commitment(),
            client_seeds: counted.map(|_, c| c.and_then(|c| c.seed).filter(|_| shown)).0,
            client_commitments: counted.map(|_, c| c.map(|c| c.commitment)).0,
            fixed: false,
            server_seed: None,
            reveal_by: lobby.reveal.map(|r| r.by_ms),
        })
    }

    /// The contributions that count now: each person's latest, if the
    /// person who made it still holds the seat.
    fn counted(&self, lobby: &Lobby) -> BySeat<Option<Contribution>> {
        BySeat::new_with(|seat| {
            let c = lobby.seeds[seat]?;
            let o = self.seats[seat].as_ref()?;
            (o.kind == SeatKind::Human && o.token == Some(c.from)).then_some(c)
        })
    }

    /// True while the seats reveal their seeds after the start: the
    /// lobby's seats are fixed meanwhile.
    pub(super) fn revealing(&self) -> bool {
        self.fair.as_ref().is_some_and(|l| l.reveal.is_some())
    }

    /// The seeds of the match about to be dealt, and every seat's
    /// commitment: the lobby's server seed (one is drawn now if none could
    /// be before) and the seeds that count. `None` when no server seed can
    /// be drawn.
    fn fix_seeds(&mut self) -> Option<(FairSeeds, BySeat<Option<Commitment>>)> {
        if self.fair.is_none() {
            self.fair = Lobby::draw();
        }
        let lobby = self.fair.as_ref()?;
        let counted = self.counted(lobby);
        let seeds =
            FairSeeds::new(*self.id.as_bytes(), lobby.server, counted.map(|_, c| c.and_then(|c| c.seed)));
        Some((seeds, counted.map(|_, c| c.map(|c| c.commitment))))
    }

    /// The owner's start, the seats all taken: the reveals begin when a seat
    /// committed to a seed it has not revealed, else the match is dealt.
    pub(super) async fn start(&mut self, conn: ConnId, req: Option<u32>, now: Instant) {
        if self.fair.is_none() {
            self.fair = Lobby::draw();
        }
        let waiting =
            self.fair.as_ref().is_some_and(|l| self.counted(l).0.iter().flatten().any(|c| c.seed.is_none()));
        if !waiting {
            return self.deal(Some((conn, req)), now).await;
        }
        let window = self.settings.reveal;
        let by_ms = self.wall_ms(now + window);
        if let Some(lobby) = self.fair.as_mut() {
            lobby.reveal = Some(Reveal { by: now + window, by_ms, starter: (conn, req) });
        }
        info!(window_ms = window.as_millis() as u64, "the seats reveal their seeds");
        self.broadcast_with(now, Some((conn, req)));
    }

    /// The reveals closed (every committed seat revealed, or time ran out):
    /// the match is dealt with the seeds revealed.
    pub(super) async fn close_reveals(&mut self, now: Instant) {
        let Some(reveal) = self.fair.as_ref().and_then(|l| l.reveal) else { return };
        let withheld = self
            .fair
            .as_ref()
            .map_or(0, |l| self.counted(l).0.iter().flatten().filter(|c| c.seed.is_none()).count());
        if withheld > 0 {
            info!(withheld, "the reveals closed: seats that did not reveal deal without their seed");
        }
        if let Some(lobby) = self.fair.as_mut() {
            lobby.reveal = None;
        }
        if self.seats.0.iter().any(Option::is_none) {
            // A seat was freed meanwhile (its grace ran out): back to the
            // lobby, for the owner to start again.
            let (conn, req) = reveal.starter;
            self.error_to(
                conn,
                req,
                ErrorCode::SeatsEmpty,
                "a seat was left empty before the deal: start again",
            );
            return self.broadcast(now);
        }
        self.deal(None, now).await;
        // Told to the starter only if it failed: it was acknowledged.
        if self.game.is_none() {
            let (conn, req) = reveal.starter;
            self.error_to(
                conn,
                req,
                ErrorCode::StorageUnavailable,
                "the start could not be stored: try again in a moment",
            );
        }
    }

    /// Fixes the seeds, stores the start and deals; `ack` is the request
    /// to acknowledge with the first view (a start without reveals).
    async fn deal(&mut self, ack: Option<(ConnId, Option<u32>)>, now: Instant) {
        let Some((seeds, commitments)) = self.fix_seeds() else {
            if let Some((conn, req)) = ack {
                self.error_to(conn, req, ErrorCode::Internal, "could not draw a seed");
            }
            return;
        };
        // The seats and seeds the match starts with must be in the log, or
        // a restart could not restore it.
        let stored = match self.write_seats().await {
            Ok(()) => self.journal.start_fair(self.id, &seeds, commitments).await,
            Err(e) => Err(e),
        };
        if let Err(e) = stored {
            warn!(error = %e, "could not store the start of the match");
            if let Some((conn, req)) = ack {
                self.error_to(
                    conn,
                    req,
                    ErrorCode::StorageUnavailable,
                    "the start could not be stored: try again in a moment",
                );
            }
            return;
        }
        // The seed stays secret until the match is over: not logged.
        info!("match started");
        self.game = Some(Match::fair(self.options.rules, seeds));
        self.commitments = commitments;
        self.fair = None;
        self.hands_stored = 0;
        for o in self.seats.0.iter_mut().flatten() {
            o.match_starts();
        }
        self.arm_turn(now);
        self.broadcast_with(now, ack);
    }

    /// A seated person's contribution, in the lobby: a commitment (before
    /// the start), or a seed (in the clear before the start, or revealed
    /// against its commitment while the seats reveal).
    pub(super) async fn contribute(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        role: Role,
        offer: Offer,
        now: Instant,
    ) {
        let seat: Seat = match role {
            Role::Seat(s) => s,
            Role::Spectator | Role::Left(_) => {
                return self.error_to(
                    conn,
                    req,
                    ErrorCode::NotSeated,
                    "only a seated player can send a seed",
                );
            }
        };
        if self.game.is_some() {
            return self.error_to(
                conn,
                req,
                ErrorCode::AlreadyStarted,
                "the match has started: its seeds are fixed",
            );
        }
        let Some(token) = self.seats[seat].as_ref().and_then(|o| o.token) else {
            return self.error_to(conn, req, ErrorCode::NotSeated, "only a seated player can send a seed");
        };
        if self.fair.is_none() {
            self.fair = Lobby::draw();
        }
        let table = *self.id.as_bytes();
        let revealing = self.revealing();
        let current = self.fair.as_ref().and_then(|l| self.counted(l)[seat]);
        let next = match (offer, revealing) {
            (Offer::Commitment(commitment), false) => Contribution { from: token, commitment, seed: None },
            (Offer::Commitment(_), true) => {
                return self.error_to(
                    conn,
                    req,
                    ErrorCode::AlreadyStarted,
                    "the commitments are closed: reveal your seed",
                );
            }
            (Offer::Seed(seed), false) => {
                Contribution { from: token, commitment: seed.commitment(table, seat), seed: Some(seed) }
            }
            (Offer::Seed(seed), true) => match current {
                Some(c) if c.commitment == seed.commitment(table, seat) => {
                    Contribution { seed: Some(seed), ..c }
                }
                Some(_) => {
                    return self.error_to(
                        conn,
                        req,
                        ErrorCode::SeedMismatch,
                        "this seed does not match your seat's commitment",
                    );
                }
                None => {
                    return self.error_to(
                        conn,
                        req,
                        ErrorCode::SeedMismatch,
                        "your seat committed to no seed before the start: it deals without one",
                    );
                }
            },
        };
        let Some(lobby) = self.fair.as_mut() else {
            return self.error_to(conn, req, ErrorCode::Internal, "the table has no server seed yet");
        };
        let changed = current != Some(next);
        lobby.seeds[seat] = Some(next);
        debug!(%seat, revealing, "seed contribution received");
        // The status first, then the ack: a client that reads the REST
        // status after its ack finds its contribution there.
        if changed {
            self.broadcast_with(now, Some((conn, req)));
        } else {
            self.send_to(conn, &ServerMessage::Ack { req });
        }
        // The last reveal deals at once.
        let all_in =
            self.fair.as_ref().is_some_and(|l| self.counted(l).0.iter().flatten().all(|c| c.seed.is_some()));
        if revealing && all_in {
            self.close_reveals(now).await;
        }
    }
}

/// What a seat offers for the fair deals.
#[derive(Debug, Clone, Copy)]
pub(super) enum Offer {
    /// `commit_seed`.
    Commitment(Commitment),
    /// `seed`.
    Seed(ClientSeed),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lobby_never_prints_its_server_seed() {
        let lobby = Lobby::draw().unwrap();
        let printed = format!("{lobby:?}");
        assert!(!printed.contains(&lobby.server.to_hex()), "{printed}");
        assert!(printed.contains("***"), "{printed}");
        let record = crate::storage::FairRecord::of(
            &FairSeeds::new([0; 16], lobby.server, BySeat([None; 4])),
            BySeat([None; 4]),
        );
        let printed = format!("{record:?}");
        assert!(!printed.contains(&lobby.server.to_hex()), "{printed}");
        assert!(printed.contains(&lobby.server.commitment().to_hex()), "{printed}");
    }
}
