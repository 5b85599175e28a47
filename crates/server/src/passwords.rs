//! Passwords, when the operator switches them on (`accounts.passwords`): a
//! signed-in player sets one on the account, and the account's name with
//! it signs the account in anywhere. Kept as argon2id hashes
//! (`storage::PasswordStore`), hashed and checked on the blocking threads,
//! a few at a time, never on the async ones. A name nobody holds costs the
//! same work as a wrong password, so the answer tells nothing. A change
//! signs out the account's other sessions. docs/accounts.md, "Passwords".

use std::sync::Arc;
use std::time::Duration;

use argon2::password_hash::SaltString;
use argon2::{Argon2, PasswordHash, PasswordHasher, PasswordVerifier};
use sha2::{Digest, Sha256};
use spades_protocol::{ErrorCode, PasswordSet};
use tokio::sync::{OnceCell, Semaphore};
use tracing::{info, warn};
use unicode_normalization::UnicodeNormalization;
use uuid::Uuid;

use crate::accounts::{Accounts, Requester, SessionToken, SignedIn};
use crate::error::AppError;
use crate::storage::{PasswordRow, PasswordStore};
use crate::text::name_key;
use crate::time::now_ms;

/// The shortest password, in characters.
pub const PASSWORD_MIN: usize = 8;

/// The longest password, in characters.
pub const PASSWORD_MAX: usize = 128;

/// Hashes computed at once (each takes 19 MiB and a core for some tens of
/// milliseconds): more wait their turn.
const HASHING_AT_ONCE: usize = 2;

/// What any failed sign-in says: nothing about whether the account exists
/// or has a password.
const SIGN_IN_REFUSED: &str = "that name and password do not sign anybody in: check them and try again";

fn storage(e: &crate::storage::StorageError) -> AppError {
    AppError::store_failed("passwords", e)
}

/// A password as typed, brought to NFKC (so that the same password typed
/// on another keyboard or system is the same). `Debug` never shows it.
struct Typed(String);

impl Typed {
    fn of(raw: &str) -> Typed {
        Typed(raw.nfkc().collect())
    }
}

/// A new password: 8 to 128 characters (as typed), not the account's name.
///
/// # Errors
/// `invalid_password` (400), saying why.
fn checked(raw: &str, name: &str) -> Result<Typed, AppError> {
    let length = raw.chars().count();
    if !(PASSWORD_MIN..=PASSWORD_MAX).contains(&length) {
        return Err(AppError::new(
            ErrorCode::InvalidPassword,
            format!("a password must be {PASSWORD_MIN} to {PASSWORD_MAX} characters long"),
        ));
    }
    if name_key(raw) == name_key(name) {
        return Err(AppError::new(ErrorCode::InvalidPassword, "a password cannot be your name"));
    }
    Ok(Typed::of(raw))
}

/// The argon2id hash of `password` with a new random salt, as a PHC
/// string. Slow on purpose: call it off the async threads.
fn hash(password: &Typed) -> Result<String, AppError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|_| AppError::internal("no random salt could be made"))?;
    let salt = SaltString::encode_b64(&salt).map_err(|_| AppError::internal("no salt could be made"))?;
    Argon2::default().hash_password(password.0.as_bytes(), &salt).map(|h| h.to_string()).map_err(|e| {
        warn!(error = %e, "a password could not be hashed");
        AppError::internal("the password could not be kept")
    })
}

/// Whether `password` is the one `phc` was made of. A hash that cannot be
/// read verifies nothing.
fn verify(password: &Typed, phc: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(parsed) => Argon2::default().verify_password(password.0.as_bytes(), &parsed).is_ok(),
        Err(e) => {
            warn!(error = %e, "a stored password hash could not be read");
            false
        }
    }
}

/// The key a sign-in by a name nobody holds is counted under (as an
/// account's id would be): the same name, the same key.
fn name_counter(skeleton: &str) -> Uuid {
    let digest = Sha256::digest(skeleton.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::from_bytes(bytes)
}

/// Passwords: the store, the accounts they sign in, and the hashing
/// threads.
pub struct Passwords {
    enabled: bool,
    store: PasswordStore,
    accounts: Arc<Accounts>,
    hashing: Semaphore,
    /// A hash of a random password, checked when a name has no password,
    /// so that such a sign-in costs what a wrong password costs.
    decoy: OnceCell<String>,
}

impl std::fmt::Debug for Passwords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Passwords").field("enabled", &self.enabled).finish_non_exhaustive()
    }
}

impl Passwords {
    /// Passwords of `accounts`, kept in `store`; `enabled` is
    /// `accounts.passwords`.
    pub fn new(enabled: bool, store: PasswordStore, accounts: Arc<Accounts>) -> Passwords {
        Passwords {
            enabled,
            store,
            accounts,
            hashing: Semaphore::new(HASHING_AT_ONCE),
            decoy: OnceCell::new(),
        }
    }

    /// Whether the operator has switched passwords on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// `not_found` (404) unless passwords are switched on.
    ///
    /// # Errors
    /// As said.
    pub fn switched_on(&self) -> Result<(), AppError> {
        if self.enabled {
            Ok(())
        } else {
            Err(AppError::new(ErrorCode::NotFound, "passwords are not switched on on this server"))
        }
    }

    /// Runs `work` (hashing) on a blocking thread, a few at a time.
    async fn off_thread<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, AppError> {
        let _turn = self.hashing.acquire().await.map_err(|_| AppError::internal("passwords are closed"))?;
        tokio::task::spawn_blocking(work).await.map_err(|e| {
            warn!(error = %e, "a password hashing task failed");
            AppError::internal("the password could not be checked")
        })
    }

    /// Checks `password` against `hash`, or, with none, against the decoy
    /// (and answers no).
    async fn matches(&self, password: Typed, hash: Option<String>) -> Result<bool, AppError> {
        let known = hash.is_some();
        let hash = match hash {
            Some(h) => h,
            None => self.decoy().await?,
        };
        let ok = self.off_thread(move || verify(&password, &hash)).await?;
        Ok(ok && known)
    }

    async fn decoy(&self) -> Result<String, AppError> {
        self.decoy
            .get_or_try_init(|| async {
                let mut random = [0u8; 24];
                getrandom::fill(&mut random).map_err(|_| AppError::internal("no random password"))?;
                let password = Typed(hex::encode(random));
                self.off_thread(move || hash(&password)).await?
            })
            .await
            .cloned()
    }

    /// The account's password, when passwords are on and it has one.
    ///
    /// # Errors
    /// Storage.
    pub async fn of(&self, account: Uuid) -> Result<Option<PasswordRow>, AppError> {
        if !self.enabled {
            return Ok(None);
        }
        self.store.get(account).await.map_err(|e| storage(&e))
    }

    /// Sets the signed-in account's password to `new`. An account that
    /// has one must give it as `current` (an attempt counted by
    /// `may_try`, as a sign-in is); the change then signs out every other
    /// session of the account.
    ///
    /// # Errors
    /// `not_found` when passwords are off; `invalid_password` for a new
    /// password refused; `wrong_password` for a missing or wrong current
    /// one; `rate_limited`; storage.
    pub async fn set(
        &self,
        who: &SignedIn,
        new: &str,
        current: Option<&str>,
        may_try: impl FnOnce(Uuid) -> Result<(), Duration>,
    ) -> Result<PasswordSet, AppError> {
        self.switched_on()?;
        let new = checked(new, &who.account.name)?;
        let account = who.account.id;
        if let Some(held) = self.store.get(account).await.map_err(|e| storage(&e))? {
            let Some(current) = current else {
                return Err(AppError::new(
                    ErrorCode::WrongPassword,
                    "this account has a password: give it as current_password to change it",
                ));
            };
            if let Err(wait) = may_try(account) {
                crate::metrics::rate_limited("account_sign_ins");
                return Err(AppError::rate_limited(
                    "too many password attempts for this account: wait a minute",
                    wait,
                ));
            }
            if !self.matches(Typed::of(current), Some(held.hash)).await? {
                info!(account = %account, "a password change was refused: not the current password");
                return Err(AppError::new(ErrorCode::WrongPassword, "that is not this account's password"));
            }
        }
        let hashed = self.off_thread(move || hash(&new)).await??;
        let changed = self.store.set(account, &hashed, now_ms()).await.map_err(|e| storage(&e))?;
        let signed_out = if changed { self.accounts.sign_out_others(who).await?.len() } else { 0 };
        info!(account = %account, changed, signed_out, "password set");
        Ok(PasswordSet { changed, signed_out: u32::try_from(signed_out).unwrap_or(u32::MAX) })
    }

    /// Signs in with an account's name and password: a new session of the
    /// account. `may_try` is asked first, by the account the name names
    /// (or, for a name nobody holds, by the name), before any password is
    /// checked.
    ///
    /// # Errors
    /// `not_found` when passwords are off; `unauthorized` (401), the same
    /// for an unknown name, an account with no password and a wrong
    /// password, after the same work; `rate_limited`; storage.
    pub async fn sign_in(
        &self,
        name: &str,
        password: &str,
        who: &Requester,
        may_try: impl FnOnce(Uuid) -> Result<(), Duration>,
    ) -> Result<(SignedIn, SessionToken), AppError> {
        self.switched_on()?;
        let (account, skeleton) = self.accounts.named(name).await?;
        let counted = account.as_ref().map_or_else(|| name_counter(&skeleton), |a| a.id);
        if let Err(wait) = may_try(counted) {
            crate::metrics::rate_limited("account_sign_ins");
            return Err(AppError::rate_limited(
                "too many sign-in attempts for this account: wait a minute",
                wait,
            ));
        }
        let held = match &account {
            Some(a) => self.store.get(a.id).await.map_err(|e| storage(&e))?,
            None => None,
        };
        // A password longer than any that can be set is wrong; it is
        // checked all the same, cut short, so that it costs the same.
        let typed = Typed::of(&password.chars().take(PASSWORD_MAX + 1).collect::<String>());
        let read_changed_at = held.as_ref().map(|h| h.changed_at_ms);
        let ok = self.matches(typed, held.map(|h| h.hash)).await?;
        let no = || AppError::new(ErrorCode::Unauthorized, SIGN_IN_REFUSED);
        let Some(account) = account.filter(|_| ok && password.chars().count() <= PASSWORD_MAX) else {
            return Err(no());
        };
        let id = account.id;
        // The check took a while: a password changed (or removed) meanwhile
        // has signed the account's sessions out, and this one must not
        // come after them with the old password.
        let now_held = self.store.get(id).await.map_err(|e| storage(&e))?;
        if now_held.map(|h| h.changed_at_ms) != read_changed_at {
            return Err(no());
        }
        if let Err(e) = self.store.used(id, now_ms()).await {
            warn!(error = %e, "a password's use could not be recorded");
        }
        let signed = self.accounts.new_session(account, who).await?;
        info!(account = %id, "signed in with a password");
        Ok(signed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_passwords_are_long_enough_and_not_the_name() {
        assert!(checked("correct horse", "Ann").is_ok());
        for (raw, why) in [
            ("short", "8 to 128"),
            (&"x".repeat(129), "8 to 128"),
            ("Ann Smith", "your name"),
            ("ANN SMITH", "your name"),
        ] {
            let err = checked(raw, "Ann Smith").err().unwrap_or_else(|| panic!("{raw:?} was taken"));
            assert_eq!(err.code, ErrorCode::InvalidPassword);
            assert!(err.message.contains(why), "{raw:?}: {}", err.message);
        }
        // Counted in characters, not bytes.
        assert!(checked("ééééééé", "Ann").is_err());
        assert!(checked("éééééééé", "Ann").is_ok());
    }

    #[test]
    fn a_hash_verifies_its_password_only_and_as_typed_anywhere() {
        let made = hash(&checked("Ｐassword one", "Ann").unwrap()).unwrap();
        assert!(made.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{made}");
        assert!(verify(&Typed::of("Password one"), &made), "full-width letters are the same after NFKC");
        assert!(!verify(&Typed::of("password one"), &made));
        assert!(!verify(&Typed::of("Password one"), "not a hash"));
        let again = hash(&Typed::of("Password one")).unwrap();
        assert_ne!(made, again, "each hash has its own salt");
    }

    #[test]
    fn unknown_names_are_counted_by_name() {
        assert_eq!(name_counter("ann"), name_counter("ann"));
        assert_ne!(name_counter("ann"), name_counter("bo"));
    }
}
