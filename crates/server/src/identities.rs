//! The ways into an account, together: its devices (a guest's secret), its
//! password (when passwords are on), its passkeys and its OpenID
//! identities, listed for the
//! player, and removed only while another is left, so that no account is
//! locked out by its own player: the store decides that in the removal's
//! own transaction ([`AccountStore::remove_way`](crate::storage::AccountStore::remove_way)),
//! so two removals at once cannot both pass. docs/accounts.md, "Ways to
//! sign in".

use std::sync::Arc;

use spades_protocol::{ErrorCode, Identity, IdentityKind};
use tracing::info;

use crate::accounts::{Accounts, SignedIn};
use crate::error::AppError;
use crate::oidc::Oidc;
use crate::passkeys::Passkeys;
use crate::passwords::Passwords;
use crate::storage::{Removal, Way};

/// The ways into accounts: a narrow view over the services that keep them.
#[derive(Debug)]
pub struct Identities {
    accounts: Arc<Accounts>,
    passkeys: Arc<Passkeys>,
    passwords: Arc<Passwords>,
    oidc: Arc<Oidc>,
}

impl Identities {
    /// The ways into the accounts of these services.
    pub fn new(
        accounts: Arc<Accounts>,
        passkeys: Arc<Passkeys>,
        passwords: Arc<Passwords>,
        oidc: Arc<Oidc>,
    ) -> Identities {
        Identities { accounts, passkeys, passwords, oidc }
    }

    /// Every way into the signed-in account: devices, the password,
    /// passkeys, OpenID identities (each kind the first added first).
    ///
    /// # Errors
    /// Storage.
    pub async fn list(&self, who: &SignedIn) -> Result<Vec<Identity>, AppError> {
        let account = who.account.id;
        let mut out: Vec<Identity> = self
            .accounts
            .devices(account)
            .await?
            .into_iter()
            .map(|created_at| Identity {
                kind: IdentityKind::Device,
                id: None,
                label: "Device secret".into(),
                created_at,
                last_used_at: None,
                provider: None,
            })
            .collect();
        if let Some(p) = self.passwords.of(account).await? {
            out.push(Identity {
                kind: IdentityKind::Password,
                id: None,
                label: "Password".into(),
                created_at: p.created_at_ms,
                last_used_at: p.last_used_at_ms,
                provider: None,
            });
        }
        out.extend(self.passkeys.list(who).await?.into_iter().map(|p| Identity {
            kind: IdentityKind::Passkey,
            id: Some(p.id),
            label: p.name,
            created_at: p.created_at,
            last_used_at: p.last_used_at,
            provider: None,
        }));
        out.extend(self.oidc.of(account).await?.into_iter().map(|i| Identity {
            kind: IdentityKind::Oidc,
            id: Some(i.id.to_string()),
            label: match self.oidc.label(&i.provider) {
                Some(provider) => format!("{provider}: {}", i.label),
                None => i.label,
            },
            created_at: i.created_at_ms,
            last_used_at: i.last_used_at_ms,
            provider: Some(i.provider),
        }));
        Ok(out)
    }

    /// Removes `way` from the signed-in account, when another way in is
    /// left. `Ok(false)`: it has no such way in.
    ///
    /// # Errors
    /// `last_sign_in` (409) when it is the only one; storage.
    async fn remove(&self, who: &SignedIn, way: Way<'_>) -> Result<bool, AppError> {
        match self.accounts.remove_way(who.account.id, way, self.passwords.enabled()).await? {
            Removal::Done => {
                info!(account = %who.account.id, way = ?way, "a way to sign in removed");
                Ok(true)
            }
            Removal::Missing => Ok(false),
            Removal::Last => Err(AppError::new(
                ErrorCode::LastSignIn,
                "this is the only way left to sign in to this account: add another (a passkey, a password, another provider) first",
            )),
        }
    }

    /// Removes a passkey of the signed-in account, when another way in is
    /// left. `Ok(false)`: it has none of that id.
    ///
    /// # Errors
    /// `last_sign_in`; storage.
    pub async fn remove_passkey(&self, who: &SignedIn, id: &str) -> Result<bool, AppError> {
        self.remove(who, Way::Passkey(id)).await
    }

    /// Unlinks an OpenID identity of the signed-in account, when another
    /// way in is left. `Ok(false)`: it has none of that id.
    ///
    /// # Errors
    /// `last_sign_in`; storage.
    pub async fn remove_oidc(&self, who: &SignedIn, id: uuid::Uuid) -> Result<bool, AppError> {
        self.remove(who, Way::Oidc(id)).await
    }

    /// Removes the signed-in account's password, when another way in is
    /// left. `Ok(false)`: it has none.
    ///
    /// # Errors
    /// `not_found` when passwords are off; `last_sign_in`; storage.
    pub async fn remove_password(&self, who: &SignedIn) -> Result<bool, AppError> {
        self.passwords.switched_on()?;
        self.remove(who, Way::Password).await
    }
}
