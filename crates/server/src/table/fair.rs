//! Fair deals at the table: the server seed drawn and committed to while
//! the table is in the lobby, the players' seeds taken until the match
//! starts, and the seeds fixed at the start (see `docs/fairness.md`).
//!
//! Nothing here waits on a client. A seed is one more message in the
//! table's queue, answered at once; whatever seeds are in when the owner
//! starts the match count, and a seat that sent none is covered by the
//! server seed.

use spades_engine::{BySeat, ClientSeed, FAIR_VERSION, FairSeeds, Seat, ServerSeed};
use spades_protocol::{ErrorCode, Fairness, SeatKind, ServerMessage};
use tokio::time::Instant;
use tracing::{debug, warn};

use super::{ConnId, Role, Table};
use crate::token::{TokenHash, new_server_seed};

/// The lobby's side of a fair match: the server seed, drawn before any
/// player's seed is taken, and the seeds received so far, each with the
/// token hash of the player who sent it (a seat that changes hands loses
/// its seed). `Debug` never shows the server seed.
#[derive(Debug)]
pub(super) struct Lobby {
    server: ServerSeed,
    seeds: BySeat<Option<(TokenHash, ClientSeed)>>,
}

impl Lobby {
    /// A fresh server seed; `None` when the random source fails (the start
    /// tries again).
    pub(super) fn draw() -> Option<Lobby> {
        match new_server_seed() {
            Ok(server) => Some(Lobby { server, seeds: BySeat([None; 4]) }),
            Err(e) => {
                warn!(error = %e, "could not draw a server seed");
                None
            }
        }
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
                fixed: true,
                server_seed: m.result().is_some().then(|| *seeds.server_seed()),
            });
        }
        let lobby = self.fair.as_ref()?;
        Some(Fairness {
            version: FAIR_VERSION,
            commitment: lobby.server.commitment(),
            client_seeds: self.counted_seeds(lobby).0,
            fixed: false,
            server_seed: None,
        })
    }

    /// The seeds that count now: each person's latest, if the person who
    /// sent it still holds the seat.
    fn counted_seeds(&self, lobby: &Lobby) -> BySeat<Option<ClientSeed>> {
        BySeat::new_with(|seat| {
            let (from, seed) = lobby.seeds[seat]?;
            let o = self.seats[seat].as_ref()?;
            (o.kind == SeatKind::Human && o.token == Some(from)).then_some(seed)
        })
    }

    /// The seeds of the match about to start: the lobby's server seed (one
    /// is drawn now if none could be before) and the players' seeds that
    /// count. `None` when no server seed can be drawn.
    pub(super) fn fix_seeds(&mut self) -> Option<FairSeeds> {
        if self.fair.is_none() {
            self.fair = Lobby::draw();
        }
        let lobby = self.fair.as_ref()?;
        Some(FairSeeds::new(*self.id.as_bytes(), lobby.server, self.counted_seeds(lobby)))
    }

    /// A `seed` from a connection: a seated person's, in the lobby.
    pub(super) fn contribute(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        role: Role,
        seed: ClientSeed,
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
        let Some(lobby) = self.fair.as_mut() else {
            return self.error_to(conn, req, ErrorCode::Internal, "the table has no server seed yet");
        };
        let changed = lobby.seeds[seat] != Some((token, seed));
        lobby.seeds[seat] = Some((token, seed));
        debug!(%seat, "seed received");
        self.send_to(conn, &ServerMessage::Ack { req });
        if changed {
            self.broadcast(now);
        }
    }
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
        let record =
            crate::storage::FairRecord::of(&FairSeeds::new([0; 16], lobby.server, BySeat([None; 4])));
        let printed = format!("{record:?}");
        assert!(!printed.contains(&lobby.server.to_hex()), "{printed}");
        assert!(printed.contains(&lobby.server.commitment().to_hex()), "{printed}");
    }
}
