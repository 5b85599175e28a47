//! The OpenID identity store: identities at OpenID Connect providers, each
//! linked to one account, found by issuer and subject (never by e-mail), on
//! the account store's database. An identity belongs to one account: the
//! pair is unique, so two accounts racing to link it cannot both have it.

use uuid::Uuid;

use super::StorageError;
use super::accounts::{AccountStore, ms, unms, uuid_of};
use super::sql::Pool;

/// An identity as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcIdentityRow {
    /// Its id (for the player's list, and to unlink it).
    pub id: Uuid,
    /// The provider's issuer, exactly as it publishes it.
    pub issuer: String,
    /// The subject the provider gives the person (`sub`).
    pub subject: String,
    /// The account it signs in.
    pub account: Uuid,
    /// The provider's id in the configuration.
    pub provider: String,
    /// What the player recognises it by (the name the provider gave).
    pub label: String,
    /// Linked, Unix ms.
    pub created_at_ms: u64,
    /// Last used to sign in, Unix ms.
    pub last_used_at_ms: Option<u64>,
}

/// A new account made by its first sign-in with an identity.
#[derive(Debug, Clone, Copy)]
pub struct NewMember<'a> {
    /// Its id.
    pub id: Uuid,
    /// Its display name.
    pub name: &'a str,
    /// The name's skeleton.
    pub skeleton: &'a str,
    /// Now, Unix ms.
    pub now_ms: u64,
}

/// What linking an identity did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Linked {
    /// It is the account's now.
    Done,
    /// It was linked already: to this account or another (the row says).
    Known(OidcIdentityRow),
}

/// What making an account with an identity did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Member {
    /// Made, with the identity.
    Made,
    /// The name is taken (nothing made).
    NameTaken,
    /// The identity was linked meanwhile (nothing made).
    Known(OidcIdentityRow),
}

/// The identity store (cheap to clone): a narrow handle on the account
/// store's database.
#[derive(Debug, Clone)]
pub struct OidcStore {
    db: AccountStore,
}

type IdentityTuple = (String, String, String, String, String, String, i64, Option<i64>);

const IDENTITY_COLUMNS: &str = "id, issuer, subject, account_id, provider, label, created_at, last_used_at";

fn identity_of(row: IdentityTuple) -> Result<OidcIdentityRow, StorageError> {
    let (id, issuer, subject, account, provider, label, created_at, last_used_at) = row;
    Ok(OidcIdentityRow {
        id: uuid_of("identity", &id)?,
        issuer,
        subject,
        account: uuid_of("account", &account)?,
        provider,
        label,
        created_at_ms: unms(created_at),
        last_used_at_ms: last_used_at.map(unms),
    })
}

impl AccountStore {
    /// The OpenID identity store on the same database.
    pub fn oidc(&self) -> OidcStore {
        OidcStore { db: self.clone() }
    }

    /// Tests: an account a provider made, named `Member <n>` (subject
    /// `subject-<n>` at `https://id.example`), whose one identity is its
    /// only way in: the account's id and the identity's.
    ///
    /// # Errors
    /// Storage, or when the member was not made.
    #[doc(hidden)]
    pub async fn test_member(&self, n: u32) -> Result<(Uuid, Uuid), StorageError> {
        let (id, name) = (Uuid::new_v4(), format!("Member {n}"));
        let identity = OidcIdentityRow {
            id: Uuid::new_v4(),
            issuer: "https://id.example".into(),
            subject: format!("subject-{n}"),
            account: id,
            provider: "club".into(),
            label: name.clone(),
            created_at_ms: 1,
            last_used_at_ms: None,
        };
        let new = NewMember { id, name: &name, skeleton: &name.to_lowercase(), now_ms: 1 };
        match self.oidc().create_account(&new, &identity).await? {
            Member::Made => Ok((id, identity.id)),
            other => Err(StorageError::Database(format!("Member {n} was not made: {other:?}"))),
        }
    }
}

impl OidcStore {
    /// The identity of `subject` at `issuer`.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn get(&self, issuer: &str, subject: &str) -> Result<Option<OidcIdentityRow>, StorageError> {
        let row = self
            .db
            .run("reading an identity", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::get(&p, issuer, subject).await,
                    Pool::Postgres(p) => pg::get(&p, issuer, subject).await,
                }
            })
            .await?;
        row.map(identity_of).transpose()
    }

    /// Links an identity to its account, unless it is linked already.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn link(&self, row: &OidcIdentityRow) -> Result<Linked, StorageError> {
        let added = self
            .db
            .run("linking an identity", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::add(&p, row).await,
                    Pool::Postgres(p) => pg::add(&p, row).await,
                }
            })
            .await?;
        if added {
            return Ok(Linked::Done);
        }
        match self.get(&row.issuer, &row.subject).await? {
            Some(known) => Ok(Linked::Known(known)),
            None => {
                Err(StorageError::Database("an identity was unlinked while it was linked: try again".into()))
            }
        }
    }

    /// Makes an account named `new.name` and links `row` (its account
    /// `new.id`) to it, at once: both or neither.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn create_account(
        &self,
        new: &NewMember<'_>,
        row: &OidcIdentityRow,
    ) -> Result<Member, StorageError> {
        let made = self
            .db
            .run("making an account", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::create_account(&p, new, row).await,
                    Pool::Postgres(p) => pg::create_account(&p, new, row).await,
                }
            })
            .await?;
        match made {
            Some(result) => Ok(result),
            None => match self.get(&row.issuer, &row.subject).await? {
                Some(known) => Ok(Member::Known(known)),
                None => Err(StorageError::Database("an identity changed hands: try again".into())),
            },
        }
    }

    /// An account's identities, the first linked first.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn of_account(&self, account: Uuid) -> Result<Vec<OidcIdentityRow>, StorageError> {
        let rows = self
            .db
            .run("reading identities", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::of_account(&p, account).await,
                    Pool::Postgres(p) => pg::of_account(&p, account).await,
                }
            })
            .await?;
        rows.into_iter().map(identity_of).collect()
    }

    /// Records a sign-in with an identity.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn used(&self, id: Uuid, now_ms: u64) -> Result<(), StorageError> {
        self.db
            .run("recording an identity's use", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::used(&p, id, now_ms).await,
                    Pool::Postgres(p) => pg::used(&p, id, now_ms).await,
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

            pub(super) async fn get(
                pool: &$pool,
                issuer: &str,
                subject: &str,
            ) -> Result<Option<IdentityTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {IDENTITY_COLUMNS} FROM oidc_identities WHERE issuer = $1 AND subject = $2"
                )))
                .bind(issuer)
                .bind(subject)
                .fetch_optional(pool)
                .await
            }

            pub(super) async fn add(pool: &$pool, r: &OidcIdentityRow) -> Result<bool, sqlx::Error> {
                let done = sqlx::query(
                    "INSERT INTO oidc_identities (id, issuer, subject, account_id, provider, label, created_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (issuer, subject) DO NOTHING",
                )
                .bind(r.id.to_string())
                .bind(&r.issuer)
                .bind(&r.subject)
                .bind(r.account.to_string())
                .bind(&r.provider)
                .bind(&r.label)
                .bind(ms(r.created_at_ms))
                .execute(pool)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            /// `None`: the identity was linked meanwhile.
            pub(super) async fn create_account(
                pool: &$pool,
                new: &NewMember<'_>,
                r: &OidcIdentityRow,
            ) -> Result<Option<Member>, sqlx::Error> {
                let mut tx = pool.begin().await?;
                let id = new.id.to_string();
                let named = super::super::accounts::$module::insert_named(
                    &mut tx,
                    &id,
                    new.name,
                    new.skeleton,
                    "member",
                    new.now_ms,
                )
                .await?;
                if !named {
                    tx.rollback().await?;
                    return Ok(Some(Member::NameTaken));
                }
                let linked = sqlx::query(
                    "INSERT INTO oidc_identities (id, issuer, subject, account_id, provider, label, created_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (issuer, subject) DO NOTHING",
                )
                .bind(r.id.to_string())
                .bind(&r.issuer)
                .bind(&r.subject)
                .bind(&id)
                .bind(&r.provider)
                .bind(&r.label)
                .bind(ms(r.created_at_ms))
                .execute(&mut *tx)
                .await?;
                if linked.rows_affected() == 0 {
                    tx.rollback().await?;
                    return Ok(None);
                }
                tx.commit().await?;
                Ok(Some(Member::Made))
            }

            pub(super) async fn of_account(pool: &$pool, account: Uuid) -> Result<Vec<IdentityTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {IDENTITY_COLUMNS} FROM oidc_identities WHERE account_id = $1 ORDER BY created_at, id"
                )))
                .bind(account.to_string())
                .fetch_all(pool)
                .await
            }

            pub(super) async fn used(pool: &$pool, id: Uuid, now_ms: u64) -> Result<(), sqlx::Error> {
                sqlx::query("UPDATE oidc_identities SET last_used_at = $1 WHERE id = $2")
                    .bind(ms(now_ms))
                    .bind(id.to_string())
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
    use crate::storage::{AccountStore, Removal, Way};

    fn identity(account: Uuid, subject: &str) -> OidcIdentityRow {
        OidcIdentityRow {
            id: Uuid::new_v4(),
            issuer: "https://id.example".into(),
            subject: subject.into(),
            account,
            provider: "club".into(),
            label: "ann".into(),
            created_at_ms: 5,
            last_used_at_ms: None,
        }
    }

    #[tokio::test]
    async fn an_identity_belongs_to_one_account_and_makes_one_at_most() {
        let store = AccountStore::memory();
        let ann = store.test_guest(1).await;
        let oidc = store.oidc();
        let first = identity(ann, "sub-1");
        assert_eq!(oidc.link(&first).await.unwrap(), Linked::Done);
        // Linked again, to Ann or to another account: it stays Ann's.
        let bo = Uuid::new_v4();
        match oidc.link(&identity(bo, "sub-1")).await.unwrap() {
            Linked::Known(known) => assert_eq!((known.id, known.account), (first.id, ann)),
            Linked::Done => panic!("an identity was linked twice"),
        }
        // A new account with a new identity: both, or neither.
        let new = NewMember { id: bo, name: "Bo", skeleton: "bo", now_ms: 7 };
        assert_eq!(oidc.create_account(&new, &identity(bo, "sub-2")).await.unwrap(), Member::Made);
        assert_eq!(store.account(bo).await.unwrap().unwrap().name, "Bo");
        let cy = Uuid::new_v4();
        let taken = NewMember { id: cy, name: "Bo", skeleton: "bo", now_ms: 7 };
        assert_eq!(oidc.create_account(&taken, &identity(cy, "sub-3")).await.unwrap(), Member::NameTaken);
        assert!(store.account(cy).await.unwrap().is_none(), "nothing was made");
        assert!(oidc.get("https://id.example", "sub-3").await.unwrap().is_none());
        let known = NewMember { id: cy, name: "Cy", skeleton: "cy", now_ms: 7 };
        match oidc.create_account(&known, &identity(cy, "sub-1")).await.unwrap() {
            Member::Known(k) => assert_eq!(k.account, ann),
            other => panic!("{other:?}"),
        }
        assert!(store.account(cy).await.unwrap().is_none(), "nothing was made for a known identity");
        // Listed, used, unlinked by its account only.
        assert_eq!(oidc.of_account(ann).await.unwrap().len(), 1);
        oidc.used(first.id, 9).await.unwrap();
        assert_eq!(oidc.get("https://id.example", "sub-1").await.unwrap().unwrap().last_used_at_ms, Some(9));
        assert_eq!(store.remove_way(bo, Way::Oidc(first.id), true).await.unwrap(), Removal::Missing);
        assert_eq!(store.remove_way(ann, Way::Oidc(first.id), true).await.unwrap(), Removal::Done);
        assert!(oidc.get("https://id.example", "sub-1").await.unwrap().is_none());
        // The issuer is compared exactly: a trailing slash is another issuer.
        let bo_identity = oidc.of_account(bo).await.unwrap().remove(0);
        assert!(oidc.get("https://id.example/", &bo_identity.subject).await.unwrap().is_none());
    }
}
