//! Starting a rematch: the owner's connection gets the plan from the
//! finished table, creates the new table (the same name, options, owner and
//! seats, in the lobby, so the match starts as every match does) and tells
//! the finished table, which points its views at the new one.

use spades_engine::{BySeat, Seat};
use spades_protocol::{ErrorCode, SeatKind};
use tokio::sync::oneshot;
use tracing::{info, warn};
use uuid::Uuid;

use super::Hosting;
use crate::error::AppError;
use crate::record::{Restored, RestoredSeat};
use crate::storage::SeatRecord;
use crate::table::{self, ConnId, RematchPlan, TableCommand, TableHandle};
use crate::time::now_ms;
use crate::token::TokenHash;

impl Hosting {
    /// Asks `table` for a rematch for connection `conn`; the table answers
    /// the connection itself (`ack`, or an error).
    pub async fn start_rematch(
        &self,
        table: &TableHandle,
        conn: ConnId,
        req: Option<u32>,
        owner_token: Option<String>,
    ) {
        let (reply, plan) = oneshot::channel();
        let owner_token = owner_token.map(table::OwnerToken);
        if table.send(TableCommand::PlanRematch { conn, req, owner_token, reply }).await.is_err() {
            return;
        }
        // Refused: the table told the connection why.
        let Ok(Some(plan)) = plan.await else { return };
        let next = self.create_rematch(plan).await.map_err(|e| (e.code, e.message));
        let _ = table.send(TableCommand::RematchStarted { conn, req, next }).await;
    }

    /// Creates the rematch's table from `plan` and starts its task.
    ///
    /// # Errors
    /// Capacity reached, or the log cannot be written.
    pub async fn create_rematch(&self, plan: RematchPlan) -> Result<Uuid, AppError> {
        self.check_capacity()?;
        let seats = restored_seats(&plan.seats)?;
        let id = Uuid::new_v4();
        // This node owns the new table from its first write on.
        let init = self.table_init(id, plan.name, plan.options, plan.owner, now_ms(), 0);
        let record = table::table_record(&init);
        let journal = init.journal.clone();
        let stored = async {
            journal.create_table(&record).await?;
            journal.seats(id, &plan.seats).await
        };
        stored.await.map_err(|e| {
            warn!(error = %e, "could not store a rematch's table");
            AppError::new(
                ErrorCode::StorageUnavailable,
                "the rematch could not be stored: try again in a moment",
            )
        })?;
        self.start(
            init,
            Some(Restored { seats, game: None, epoch: 0, recent: Vec::new(), commitments: [None; 4] }),
            0,
        );
        crate::metrics::table_created();
        info!(table_id = %id, "rematch table created");
        Ok(id)
    }
}

/// The seats of the plan as the new table starts with them.
fn restored_seats(seats: &BySeat<Option<SeatRecord>>) -> Result<BySeat<Option<RestoredSeat>>, AppError> {
    let mut out: BySeat<Option<RestoredSeat>> = BySeat([None, None, None, None]);
    for seat in Seat::ALL {
        let Some(s) = &seats[seat] else { continue };
        let token = s.token_hash.as_deref().map(TokenHash::from_hex);
        if s.kind == SeatKind::Human && !matches!(token, Some(Some(_))) {
            return Err(AppError::internal("a seat of the rematch has no token"));
        }
        out[seat] = Some(RestoredSeat {
            name: s.name.clone(),
            kind: s.kind,
            token: token.flatten(),
            account: s.account,
            left: s.left,
            autopilot: s.autopilot,
            timeouts: s.timeouts,
            grace_expired: s.grace_expired,
            players: Vec::new(),
            played_for_you: Vec::new(),
        });
    }
    Ok(out)
}
