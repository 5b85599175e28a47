//! Chat blocks: a player blocks another player's chat for themselves,
//! kept with their account (every device of it, every table), and
//! unblocks it. The server keeps the list; clients hide the `chat` frames
//! of the accounts on it (each frame carries its writer's account). The
//! blocked player is not told. Its store is `storage/blocks.rs`.

use std::sync::Arc;

use spades_protocol::{ChatBlock, ErrorCode};
use uuid::Uuid;

use crate::accounts::{Accounts, SignedIn};
use crate::error::AppError;
use crate::storage::{BlockStore, Blocked};
use crate::time::now_ms;

/// The most accounts one account blocks.
pub const BLOCKS_MAX: u64 = 500;

fn storage(e: &crate::storage::StorageError) -> AppError {
    AppError::store_failed("chat blocks", e)
}

/// The service (one per server).
#[derive(Debug)]
pub struct Blocks {
    store: BlockStore,
    accounts: Arc<Accounts>,
}

impl Blocks {
    /// The service on `store`, finding accounts through `accounts`.
    pub fn new(store: BlockStore, accounts: Arc<Accounts>) -> Blocks {
        Blocks { store, accounts }
    }

    /// The accounts `who` blocks, the latest first.
    ///
    /// # Errors
    /// Storage.
    pub async fn list(&self, who: &SignedIn) -> Result<Vec<ChatBlock>, AppError> {
        let rows = self.store.list(who.account.id).await.map_err(|e| storage(&e))?;
        Ok(rows.into_iter().map(|b| ChatBlock { account: b.blocked, name: b.name, at: b.at_ms }).collect())
    }

    /// `who` blocks `account`: `true` when it is new.
    ///
    /// # Errors
    /// `not_found` (no such account), 409 `invalid_options` (oneself, or
    /// [`BLOCKS_MAX`] blocked already), storage.
    pub async fn block(&self, who: &SignedIn, account: Uuid) -> Result<(ChatBlock, bool), AppError> {
        if account == who.account.id {
            return Err(AppError::conflict("you cannot block yourself"));
        }
        let Some(target) = self.accounts.account(account).await? else {
            return Err(AppError::new(ErrorCode::NotFound, "no account has this id"));
        };
        let now = now_ms();
        match self.store.add(who.account.id, account, now, BLOCKS_MAX).await.map_err(|e| storage(&e))? {
            Blocked::New => Ok((ChatBlock { account, name: target.name, at: now }, true)),
            // Blocked before: since then.
            Blocked::Already => {
                let since = self.list(who).await?.into_iter().find(|b| b.account == account);
                Ok((since.unwrap_or(ChatBlock { account, name: target.name, at: now }), false))
            }
            Blocked::TooMany => Err(AppError::conflict(format!(
                "at most {BLOCKS_MAX} players are blocked: unblock one first"
            ))),
        }
    }

    /// `who` no longer blocks `account`.
    ///
    /// # Errors
    /// `not_found` (not blocked), storage.
    pub async fn unblock(&self, who: &SignedIn, account: Uuid) -> Result<(), AppError> {
        if self.store.remove(who.account.id, account).await.map_err(|e| storage(&e))? {
            Ok(())
        } else {
            Err(AppError::new(ErrorCode::NotFound, "this account is not blocked"))
        }
    }
}
