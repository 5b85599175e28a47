//! Signing in as a guest: a device secret kept in a file of this user's
//! own (mode 0600), exchanged for a session whose token the client sends as
//! `Authorization: Bearer` on REST calls and on the WebSocket upgrade
//! (`docs/accounts.md`). With a session a connection joins as its account
//! and comes back to its seat without a seat token.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A session token (64 hex digits). `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionToken(pub String);

impl std::fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionToken(<secret>)")
    }
}

/// A device secret: 43 characters of base64url (32 random bytes). `Debug`
/// hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct DeviceSecret(pub String);

impl std::fmt::Debug for DeviceSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeviceSecret(<secret>)")
    }
}

const BASE64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

impl DeviceSecret {
    /// A new random secret.
    ///
    /// # Errors
    /// When the operating system's random source fails.
    pub fn random() -> Result<DeviceSecret> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| Error::Protocol(format!("no random device secret: {e}")))?;
        // 256 bits, 6 at a time: 43 characters.
        let mut out = String::with_capacity(43);
        let mut acc = 0u32;
        let mut bits = 0;
        for b in bytes {
            acc = (acc << 8) | u32::from(b);
            bits += 8;
            while bits >= 6 {
                bits -= 6;
                out.push(char::from(BASE64URL[((acc >> bits) & 63) as usize]));
            }
        }
        if bits > 0 {
            out.push(char::from(BASE64URL[((acc << (6 - bits)) & 63) as usize]));
        }
        Ok(DeviceSecret(out))
    }

    /// The secret kept in `path`, made (with mode 0600, and its directory)
    /// when the file does not exist yet.
    ///
    /// # Errors
    /// When the file cannot be read or written, or holds no secret.
    pub fn load_or_create(path: &Path) -> Result<DeviceSecret> {
        let io = |e: std::io::Error| Error::Protocol(format!("device secret {}: {e}", path.display()));
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let secret = text.trim().to_owned();
                let ok = (32..=128).contains(&secret.len())
                    && secret.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
                if ok {
                    Ok(DeviceSecret(secret))
                } else {
                    Err(Error::Protocol(format!("{} does not hold a device secret", path.display())))
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(io)?;
                }
                let secret = DeviceSecret::random()?;
                let mut options = std::fs::OpenOptions::new();
                options.write(true).create_new(true);
                #[cfg(unix)]
                {
                    use std::os::unix::fs::OpenOptionsExt;
                    options.mode(0o600);
                }
                let mut file = options.open(path).map_err(io)?;
                file.write_all(secret.0.as_bytes()).map_err(io)?;
                Ok(secret)
            }
            Err(e) => Err(io(e)),
        }
    }
}

/// Where a terminal user's device secret is kept:
/// `$XDG_CONFIG_HOME/spades/device`, else `~/.config/spades/device`.
pub fn default_device_file() -> Option<PathBuf> {
    let base =
        std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| {
            std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(base.join("spades").join("device"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_secrets_are_random_kept_private_and_never_printed() {
        let a = DeviceSecret::random().unwrap();
        assert_eq!(a.0.len(), 43);
        assert_ne!(a, DeviceSecret::random().unwrap());
        assert!(!format!("{a:?}").contains(&a.0));
        let dir = std::env::temp_dir().join(format!("spades-device-{}", uuid::Uuid::new_v4().simple()));
        let path = dir.join("nested").join("device");
        let made = DeviceSecret::load_or_create(&path).unwrap();
        assert_eq!(DeviceSecret::load_or_create(&path).unwrap(), made, "kept");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        std::fs::write(&path, "short").unwrap();
        assert!(DeviceSecret::load_or_create(&path).is_err());
        std::fs::remove_dir_all(dir).unwrap();
        assert!(!format!("{:?}", SessionToken("f00d".repeat(16))).contains("f00d"));
    }
}
