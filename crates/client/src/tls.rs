//! TLS for `https://` and `wss://` servers: rustls (ring), with Mozilla's
//! root certificates built in and, optionally, more roots from a PEM file
//! (a private CA, or a self-signed certificate in tests).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use crate::error::{Error, Result};

/// The certificates a client trusts, as one rustls configuration shared by
/// its WebSocket connections and its REST client.
#[derive(Clone)]
pub struct Tls {
    config: Arc<rustls::ClientConfig>,
    extra_roots: usize,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("extra_roots", &self.extra_roots).finish_non_exhaustive()
    }
}

impl Default for Tls {
    /// Mozilla's roots only (built once per process).
    fn default() -> Tls {
        static DEFAULT: OnceLock<Tls> = OnceLock::new();
        DEFAULT.get_or_init(|| Tls::with_roots(Vec::new()).expect("the built-in roots are valid")).clone()
    }
}

impl Tls {
    /// Mozilla's roots and every certificate in `pem` (one or more
    /// `-----BEGIN CERTIFICATE-----` blocks).
    ///
    /// # Errors
    /// [`Error::Tls`] when `pem` holds no certificate or one that cannot
    /// be read.
    pub fn with_pem(pem: &[u8]) -> Result<Tls> {
        let certs = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::Tls(format!("reading PEM certificates: {e}")))?;
        if certs.is_empty() {
            return Err(Error::Tls("no PEM certificate found".into()));
        }
        Tls::with_roots(certs)
    }

    /// Like [`Tls::with_pem`], reading the PEM file at `path`.
    ///
    /// # Errors
    /// [`Error::Tls`] naming the file when it cannot be read or holds no
    /// certificate.
    pub fn with_pem_file(path: &Path) -> Result<Tls> {
        let pem = std::fs::read(path).map_err(|e| Error::Tls(format!("reading {}: {e}", path.display())))?;
        Tls::with_pem(&pem).map_err(|e| match e {
            Error::Tls(why) => Error::Tls(format!("{}: {why}", path.display())),
            other => other,
        })
    }

    fn with_roots(extra: Vec<CertificateDer<'static>>) -> Result<Tls> {
        let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
        let extra_roots = extra.len();
        for cert in extra {
            roots.add(cert).map_err(|e| Error::Tls(format!("not a usable root certificate: {e}")))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Tls(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Tls { config: Arc::new(config), extra_roots })
    }

    /// True for [`Tls::default`] (or a clone of it).
    pub(crate) fn is_default(&self) -> bool {
        Arc::ptr_eq(&self.config, &Tls::default().config)
    }

    /// The rustls configuration (for WebSocket connections).
    pub fn client_config(&self) -> Arc<rustls::ClientConfig> {
        Arc::clone(&self.config)
    }

    /// A REST client builder that trusts the same certificates.
    pub fn http_builder(&self) -> reqwest::ClientBuilder {
        reqwest::Client::builder().use_preconfigured_tls((*self.config).clone())
    }

    /// A REST client that trusts the same certificates.
    pub fn http_client(&self) -> reqwest::Client {
        // Building fails only for a TLS configuration of another rustls
        // version, which the type rules out.
        self.http_builder().build().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_roots_are_read_or_refused() {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert =
            rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap().self_signed(&key).unwrap();
        let tls = Tls::with_pem(cert.pem().as_bytes()).unwrap();
        assert_eq!(tls.extra_roots, 1);
        let two = format!("{}{}", cert.pem(), cert.pem());
        assert_eq!(Tls::with_pem(two.as_bytes()).unwrap().extra_roots, 2);
        assert_eq!(Tls::default().extra_roots, 0);
        assert!(Tls::default().is_default() && !tls.is_default());
        assert!(matches!(Tls::with_pem(b"not a certificate"), Err(Error::Tls(_))));
        let err = Tls::with_pem_file(Path::new("/nonexistent/ca.pem")).unwrap_err().to_string();
        assert!(err.contains("/nonexistent/ca.pem"), "{err}");
    }
}
