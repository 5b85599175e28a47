//! The ways into an account, removed one at a time: a passkey, a password
//! or an OpenID identity goes only while another way in is left, decided in
//! the same transaction as the removal, after the account's row is locked,
//! so that two removals at once (on one node or two) are counted one after
//! the other and never leave an account nobody can sign in to.

use uuid::Uuid;

use super::StorageError;
use super::accounts::AccountStore;
use super::sql::Pool;

/// A way into an account, to remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way<'a> {
    /// The password.
    Password,
    /// The passkey of this credential id.
    Passkey(&'a str),
    /// The OpenID identity of this id.
    Oidc(Uuid),
}

/// What removing a way in found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// Removed.
    Done,
    /// The account has no such way in: nothing changed.
    Missing,
    /// It is the last way in: nothing changed.
    Last,
}

impl AccountStore {
    /// Removes `way` from `account` unless no other way in would be left.
    /// Devices, passkeys and OpenID identities are ways in, and the
    /// password when `passwords` (switched on).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn remove_way(
        &self,
        account: Uuid,
        way: Way<'_>,
        passwords: bool,
    ) -> Result<Removal, StorageError> {
        self.run("removing a way to sign in", |pool| async move {
            match pool {
                Pool::Sqlite(p) => sqlite::remove_way(&p, account, way, passwords).await,
                Pool::Postgres(p) => pg::remove_way(&p, account, way, passwords).await,
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

            pub(super) async fn remove_way(
                pool: &$pool,
                account: Uuid,
                way: Way<'_>,
                passwords: bool,
            ) -> Result<Removal, sqlx::Error> {
                let id = account.to_string();
                let mut tx = pool.begin().await?;
                // The account's row lock first (a write: SQLite takes its
                // write lock, PostgreSQL the row's): a second removal waits
                // here, then counts what this one left.
                sqlx::query("UPDATE accounts SET kind = kind WHERE id = $1")
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
                let removed = match way {
                    Way::Password => {
                        sqlx::query("DELETE FROM passwords WHERE account_id = $1")
                            .bind(&id)
                            .execute(&mut *tx)
                            .await?
                    }
                    Way::Passkey(credential) => {
                        sqlx::query("DELETE FROM passkeys WHERE id = $1 AND account_id = $2")
                            .bind(credential)
                            .bind(&id)
                            .execute(&mut *tx)
                            .await?
                    }
                    Way::Oidc(identity) => {
                        sqlx::query("DELETE FROM oidc_identities WHERE id = $1 AND account_id = $2")
                            .bind(identity.to_string())
                            .bind(&id)
                            .execute(&mut *tx)
                            .await?
                    }
                }
                .rows_affected();
                if removed == 0 {
                    tx.rollback().await?;
                    return Ok(Removal::Missing);
                }
                let (left,): (i64,) = sqlx::query_as(
                    "SELECT (SELECT COUNT(*) FROM devices WHERE account_id = $1) \
                     + (SELECT COUNT(*) FROM passkeys WHERE account_id = $1) \
                     + (SELECT COUNT(*) FROM oidc_identities WHERE account_id = $1) \
                     + (SELECT COUNT(*) FROM passwords WHERE account_id = $1 AND $2)",
                )
                .bind(&id)
                .bind(passwords)
                .fetch_one(&mut *tx)
                .await?;
                if left == 0 {
                    tx.rollback().await?;
                    return Ok(Removal::Last);
                }
                tx.commit().await?;
                Ok(Removal::Done)
            }
        }
    };
}

backend!(sqlite, sqlx::sqlite::SqlitePool);
backend!(pg, sqlx::postgres::PgPool);

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_last_way_in_stays_and_a_password_counts_only_while_passwords_are_on() {
        let store = AccountStore::memory();
        let (ann, identity) = store.test_member(1).await.unwrap();
        assert_eq!(store.remove_way(ann, Way::Oidc(identity), true).await.unwrap(), Removal::Last);
        store.passwords().set(ann, "$argon2id$x", 2).await.unwrap();
        // Passwords switched off: the password is no way in.
        assert_eq!(store.remove_way(ann, Way::Oidc(identity), false).await.unwrap(), Removal::Last);
        assert_eq!(store.remove_way(ann, Way::Oidc(identity), true).await.unwrap(), Removal::Done);
        assert_eq!(store.remove_way(ann, Way::Password, true).await.unwrap(), Removal::Last);
        assert_eq!(store.remove_way(ann, Way::Passkey("none"), true).await.unwrap(), Removal::Missing);
        assert!(store.passwords().get(ann).await.unwrap().is_some(), "the refused removal left it");
    }
}
