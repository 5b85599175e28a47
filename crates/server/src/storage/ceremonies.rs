//! The ceremonies under way: what the server keeps between a challenge it
//! sends and the answer (a passkey relying party's state, an OpenID flow's
//! state, nonce and PKCE verifier), on the account store's database. A
//! ceremony is kept on the server, never in a cookie or the page, so that
//! it can be finished on any node of a cluster; it runs out after a few
//! minutes and is taken once: reading it deletes it.

use uuid::Uuid;

use super::StorageError;
use super::accounts::{AccountStore, ms, uuid_of};
use super::sql::Pool;

/// What a ceremony is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CeremonyKind {
    /// Adding a passkey to a signed-in account.
    PasskeyRegister,
    /// Signing in with a passkey.
    PasskeySignIn,
    /// Signing in (or linking an identity) with an OpenID provider.
    Oidc,
}

impl CeremonyKind {
    fn as_str(self) -> &'static str {
        match self {
            CeremonyKind::PasskeyRegister => "passkey_register",
            CeremonyKind::PasskeySignIn => "passkey_sign_in",
            CeremonyKind::Oidc => "oidc",
        }
    }
}

/// A ceremony under way.
#[derive(Clone)]
pub struct Ceremony {
    /// What it is for.
    pub kind: CeremonyKind,
    /// The account the ceremony is for, when one is signed in (adding a
    /// passkey, linking an identity).
    pub account: Option<Uuid>,
    /// The state kept for the answer (JSON): the relying party's, or the
    /// OpenID flow's (state, nonce, PKCE verifier).
    pub state: String,
}

impl std::fmt::Debug for Ceremony {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ceremony")
            .field("kind", &self.kind)
            .field("account", &self.account)
            .finish_non_exhaustive()
    }
}

/// The ceremony store (cheap to clone): a narrow handle on the account
/// store's database.
#[derive(Debug, Clone)]
pub struct CeremonyStore {
    db: AccountStore,
}

impl AccountStore {
    /// The ceremony store on the same database.
    pub fn ceremonies(&self) -> CeremonyStore {
        CeremonyStore { db: self.clone() }
    }
}

impl CeremonyStore {
    /// Keeps a ceremony until `expires_at_ms`.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn begin(&self, id: Uuid, ceremony: &Ceremony, expires_at_ms: u64) -> Result<(), StorageError> {
        self.db
            .run("keeping a ceremony", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::begin(&p, id, ceremony, expires_at_ms).await,
                    Pool::Postgres(p) => pg::begin(&p, id, ceremony, expires_at_ms).await,
                }
            })
            .await
    }

    /// Takes a ceremony of `kind` that has not expired (and, when
    /// `account` is given, that account's): it is deleted, so a second
    /// answer to the same challenge finds nothing.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn take(
        &self,
        id: Uuid,
        kind: CeremonyKind,
        account: Option<Uuid>,
        now_ms: u64,
    ) -> Result<Option<Ceremony>, StorageError> {
        let row = self
            .db
            .run("taking a ceremony", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::take(&p, id, kind, account, now_ms).await,
                    Pool::Postgres(p) => pg::take(&p, id, kind, account, now_ms).await,
                }
            })
            .await?;
        row.map(|(account, state)| {
            let account = account.map(|a| uuid_of("account", &a)).transpose()?;
            Ok(Ceremony { kind, account, state })
        })
        .transpose()
    }

    /// Forgets the ceremonies that ran out.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn sweep(&self, now_ms: u64) -> Result<(), StorageError> {
        self.db
            .run("forgetting old ceremonies", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::sweep(&p, now_ms).await,
                    Pool::Postgres(p) => pg::sweep(&p, now_ms).await,
                }
            })
            .await
    }
}

/// The same SQL for both databases (`$n` placeholders work in both).
macro_rules! backend {
    ($module:ident, $pool:ty) => {
        mod $module {
            use super::*;

            pub(super) async fn begin(
                pool: &$pool,
                id: Uuid,
                c: &Ceremony,
                expires_at_ms: u64,
            ) -> Result<(), sqlx::Error> {
                sqlx::query(
                    "INSERT INTO ceremonies (id, kind, account_id, state, expires_at) VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(id.to_string())
                .bind(c.kind.as_str())
                .bind(c.account.map(|a| a.to_string()))
                .bind(&c.state)
                .bind(ms(expires_at_ms))
                .execute(pool)
                .await
                .map(drop)
            }

            pub(super) async fn take(
                pool: &$pool,
                id: Uuid,
                kind: CeremonyKind,
                account: Option<Uuid>,
                now_ms: u64,
            ) -> Result<Option<(Option<String>, String)>, sqlx::Error> {
                let sql = if account.is_some() {
                    "DELETE FROM ceremonies WHERE id = $1 AND kind = $2 AND expires_at > $3 AND account_id = $4 \
                     RETURNING account_id, state"
                } else {
                    "DELETE FROM ceremonies WHERE id = $1 AND kind = $2 AND expires_at > $3 \
                     RETURNING account_id, state"
                };
                let query = sqlx::query_as(sql).bind(id.to_string()).bind(kind.as_str()).bind(ms(now_ms));
                match account {
                    Some(a) => query.bind(a.to_string()).fetch_optional(pool).await,
                    None => query.fetch_optional(pool).await,
                }
            }

            pub(super) async fn sweep(pool: &$pool, now_ms: u64) -> Result<(), sqlx::Error> {
                sqlx::query("DELETE FROM ceremonies WHERE expires_at <= $1")
                    .bind(ms(now_ms))
                    .execute(pool)
                    .await
                    .map(drop)
            }
        }
    };
}

backend!(sqlite, sqlx::sqlite::SqlitePool);
backend!(pg, sqlx::postgres::PgPool);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::AccountStore;

    #[tokio::test]
    async fn a_ceremony_is_taken_once_by_its_kind_and_account_before_it_runs_out() {
        let store = AccountStore::memory();
        let (ann, bo) = (store.test_guest(1).await, store.test_guest(2).await);
        let ceremonies = store.ceremonies();
        let ceremony =
            |account| Ceremony { kind: CeremonyKind::PasskeyRegister, account, state: "{}".into() };
        let id = Uuid::new_v4();
        ceremonies.begin(id, &ceremony(Some(ann)), 1_000).await.unwrap();
        // Not another account's, not as the other kind.
        assert!(ceremonies.take(id, CeremonyKind::PasskeyRegister, Some(bo), 500).await.unwrap().is_none());
        assert!(ceremonies.take(id, CeremonyKind::PasskeySignIn, None, 500).await.unwrap().is_none());
        // Its own, once.
        let taken =
            ceremonies.take(id, CeremonyKind::PasskeyRegister, Some(ann), 500).await.unwrap().unwrap();
        assert_eq!((taken.account, taken.state.as_str()), (Some(ann), "{}"));
        assert!(ceremonies.take(id, CeremonyKind::PasskeyRegister, Some(ann), 500).await.unwrap().is_none());
        // Run out: gone, even unused.
        let late = Uuid::new_v4();
        ceremonies.begin(late, &ceremony(Some(ann)), 1_000).await.unwrap();
        assert!(
            ceremonies.take(late, CeremonyKind::PasskeyRegister, Some(ann), 1_000).await.unwrap().is_none()
        );
        ceremonies.sweep(2_000).await.unwrap();
        assert!(ceremonies.take(late, CeremonyKind::PasskeyRegister, Some(ann), 0).await.unwrap().is_none());
    }
}
