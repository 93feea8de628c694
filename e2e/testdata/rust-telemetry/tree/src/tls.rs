/*
Copyright 2026 The Guestbook Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

//! TLS for the webhook and metrics servers: the certificate of a directory (tls.crt and tls.key,
//! as cert-manager mounts its Secret), read again in the background when the files change so
//! that a renewed certificate is served from the next handshake on, without a restart; or a
//! self-signed certificate made at start. No file is read during a handshake.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::path::PathBuf;
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;
use tokio_rustls::TlsAcceptor;

/// How often the certificate files are read again.
pub const RELOAD_PERIOD: Duration = Duration::from_secs(2);

/// Where a certificate is: a directory and the names of the certificate and key files in it
/// (`--webhook-cert-path`, `--webhook-cert-name`, `--webhook-cert-key`, and the same for
/// metrics).
#[derive(Debug, Clone)]
pub struct CertFiles {
    pub dir: PathBuf,
    pub cert: String,
    pub key: String,
}

impl CertFiles {
    /// tls.crt and tls.key in `dir`, as cert-manager writes them.
    pub fn new(dir: impl Into<PathBuf>) -> CertFiles {
        CertFiles {
            dir: dir.into(),
            cert: "tls.crt".into(),
            key: "tls.key".into(),
        }
    }

    fn describe(&self) -> String {
        format!("{} and {} in {}", self.cert, self.key, self.dir.display())
    }
}

/// The certificate and key as read from their files.
type Pem = (Vec<u8>, Vec<u8>);

fn parse((cert, key): &Pem) -> anyhow::Result<CertifiedKey> {
    let certs = CertificateDer::pem_slice_iter(cert).collect::<Result<Vec<_>, _>>()?;
    anyhow::ensure!(!certs.is_empty(), "no certificate in it");
    let key = PrivateKeyDer::from_pem_slice(key)?;
    let signer = rustls::crypto::ring::sign::any_supported_type(&key)?;
    let certified = CertifiedKey::new(certs, signer);
    certified.keys_match()?;
    Ok(certified)
}

/// The certificate a server presents: replaced when its files change.
#[derive(Debug)]
pub struct Certificate {
    current: RwLock<Arc<CertifiedKey>>,
}

impl ResolvesServerCert for Certificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current.read().ok().map(|c| c.clone())
    }
}

impl Certificate {
    /// The certificate of `files`, read now (an error when it cannot be read or used), and
    /// read again every [`RELOAD_PERIOD`] by a task of its own while the certificate is in use.
    pub fn from_files(files: CertFiles) -> anyhow::Result<Arc<Certificate>> {
        let read = || -> anyhow::Result<(Pem, CertifiedKey)> {
            let pem = (
                std::fs::read(files.dir.join(&files.cert))?,
                std::fs::read(files.dir.join(&files.key))?,
            );
            let key = parse(&pem)?;
            Ok((pem, key))
        };
        let (pem, key) =
            read().map_err(|e| anyhow::anyhow!("reading {}: {e}", files.describe()))?;
        let certificate = Arc::new(Certificate {
            current: RwLock::new(Arc::new(key)),
        });
        tokio::spawn(reload(Arc::downgrade(&certificate), files, pem));
        Ok(certificate)
    }

    /// The certificate and key of `cert` and `key` (PEM), such as a certificate the manager
    /// made: an error when they cannot be used.
    pub fn from_pem(cert: &[u8], key: &[u8]) -> anyhow::Result<Arc<Certificate>> {
        let key = parse(&(cert.to_vec(), key.to_vec()))?;
        Ok(Arc::new(Certificate {
            current: RwLock::new(Arc::new(key)),
        }))
    }

    /// Serve the certificate and key of `cert` and `key` (PEM) from the next handshake on,
    /// such as a renewal the manager made: an error, and the previous one served, when they
    /// cannot be used.
    pub fn replace(&self, cert: &[u8], key: &[u8]) -> anyhow::Result<()> {
        let key = parse(&(cert.to_vec(), key.to_vec()))?;
        if let Ok(mut current) = self.current.write() {
            *current = Arc::new(key);
        }
        Ok(())
    }

    /// A certificate for `names` (host names or IP addresses), signed by its own key: what the
    /// metrics server presents without `--metrics-cert-path`, as the Go manager's does.
    pub fn self_signed(names: &[&str]) -> anyhow::Result<Arc<Certificate>> {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let key = rcgen::KeyPair::generate()?;
        let cert = rcgen::CertificateParams::new(names)?.self_signed(&key)?;
        let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let signer = rustls::crypto::ring::sign::any_supported_type(&der)?;
        let certified = CertifiedKey::new(vec![cert.der().clone()], signer);
        Ok(Arc::new(Certificate {
            current: RwLock::new(Arc::new(certified)),
        }))
    }

    /// A TLS acceptor presenting this certificate, for HTTP/1.1.
    pub fn acceptor(self: &Arc<Self>) -> anyhow::Result<TlsAcceptor> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

/// Read `files` every [`RELOAD_PERIOD`] (off the handshakes, with tokio's file reads) and
/// serve their certificate once it changes; each new reason a renewal cannot be used is said
/// once. Ends when the certificate is no longer used.
async fn reload(certificate: Weak<Certificate>, files: CertFiles, mut loaded: Pem) {
    let mut said: Option<String> = None;
    loop {
        tokio::time::sleep(RELOAD_PERIOD).await;
        let Some(certificate) = certificate.upgrade() else {
            return;
        };
        let read = async {
            let cert = tokio::fs::read(files.dir.join(&files.cert)).await?;
            let key = tokio::fs::read(files.dir.join(&files.key)).await?;
            Ok::<Pem, std::io::Error>((cert, key))
        };
        let outcome = match read.await {
            Ok(pem) if pem == loaded => continue,
            Ok(pem) => parse(&pem).map(|key| (pem, key)),
            Err(e) => Err(e.into()),
        };
        match outcome {
            Ok((pem, key)) => {
                if let Ok(mut current) = certificate.current.write() {
                    *current = Arc::new(key);
                }
                loaded = pem;
                said = None;
                tracing::info!(files = %files.describe(), "serving the renewed certificate");
            }
            Err(e) => {
                let why = e.to_string();
                if said.as_ref() != Some(&why) {
                    tracing::warn!(files = %files.describe(), error = %why, "cannot use the certificate files: serving the previous certificate");
                    said = Some(why);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed certificate for `name` and its key, in PEM.
    fn pem(name: &str) -> (String, String) {
        let key = rcgen::KeyPair::generate().expect("a key");
        let params = rcgen::CertificateParams::new(vec![name.to_string()]).expect("parameters");
        let cert = params.self_signed(&key).expect("a certificate");
        (cert.pem(), key.serialize_pem())
    }

    fn served(certificate: &Certificate) -> CertificateDer<'static> {
        let current = certificate.current.read().expect("the certificate");
        current.cert[0].clone()
    }

    #[tokio::test]
    async fn a_renewed_certificate_is_served_and_a_broken_one_is_not() {
        let dir = std::env::temp_dir().join(format!("tls-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let (cert, key) = pem("first.example");
        std::fs::write(dir.join("tls.crt"), &cert).expect("tls.crt");
        std::fs::write(dir.join("tls.key"), &key).expect("tls.key");
        let certificate = Certificate::from_files(CertFiles::new(&dir)).expect("loaded");
        let first = served(&certificate);

        // A key that does not match the certificate is never served.
        let (_, other_key) = pem("other.example");
        std::fs::write(dir.join("tls.key"), &other_key).expect("tls.key");
        tokio::time::sleep(RELOAD_PERIOD * 2).await;
        assert_eq!(served(&certificate), first);

        let (cert, key) = pem("second.example");
        std::fs::write(dir.join("tls.key"), &key).expect("tls.key");
        std::fs::write(dir.join("tls.crt"), &cert).expect("tls.crt");
        let mut renewed = false;
        for _ in 0..50 {
            tokio::time::sleep(RELOAD_PERIOD / 4).await;
            if served(&certificate) != first {
                renewed = true;
                break;
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(renewed, "the renewed certificate was never served");
    }

    #[test]
    fn a_missing_certificate_is_an_error_naming_the_files() {
        let runtime = tokio::runtime::Runtime::new().expect("a runtime");
        let _guard = runtime.enter();
        let error = Certificate::from_files(CertFiles::new("/nonexistent"))
            .expect_err("no certificate there");
        assert!(
            error
                .to_string()
                .contains("tls.crt and tls.key in /nonexistent"),
            "{error}"
        );
    }
}
