//! TLS for the QUIC connection: a self-signed certificate made at start (rcgen) for the server
//! name [`SERVER_NAME`], trusted by the client as the only root; one ALPN; optional key log.
//! With a seed (reproducible runs), the randomness of TLS and the certificate's key come from
//! it ([`crate::seeded_tls`]); without, from the OS.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Context, Result};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The name in the certificate and the name the guest connects to.
pub const SERVER_NAME: &str = "priolab";

/// A fresh self-signed certificate and its key: Ed25519 (fixed-size keys and signatures)
/// with serial number 1, so the certificate and the handshake have the same sizes in every
/// run (ECDSA's DER signatures vary by a byte or two, and rcgen's default serial, a hash of
/// the key, loses a byte when the hash starts with zeros): a reproducible run's packets
/// must not depend on the key drawn. With `seed` the key comes from it, so the certificate's
/// bytes are the same in every run of one seed.
pub fn self_signed(seed: Option<u64>) -> Result<(CertificateDer<'static>, PrivateKeyDer<'static>)> {
    let key_pair = match seed {
        None => rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519),
        Some(s) => rcgen::KeyPair::from_pkcs8_der_and_sign_algo(
            &PrivatePkcs8KeyDer::from(crate::seeded_tls::ed25519_pkcs8(s)),
            &rcgen::PKCS_ED25519,
        ),
    }
    .context("generating the certificate's key")?;
    let mut params = rcgen::CertificateParams::new(vec![SERVER_NAME.to_string()])
        .context("the certificate's parameters")?;
    params.serial_number = Some(rcgen::SerialNumber::from(1u64));
    let cert = params
        .self_signed(&key_pair)
        .context("generating the self-signed certificate")?;
    let key = PrivatePkcs8KeyDer::from(key_pair.serialize_der());
    Ok((cert.der().clone(), key.into()))
}

/// Writes `der` to `path` atomically (a temporary file in the same folder, then rename).
pub fn write_cert_atomically(path: &Path, der: &[u8]) -> Result<()> {
    let tmp = path.with_extension("der.tmp");
    {
        let mut f = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(der)
            .and_then(|_| f.sync_all())
            .with_context(|| format!("writing {}", tmp.display()))?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}

/// ring's provider; with `seed`, its randomness and key exchange from the seed.
fn provider(seed: Option<u64>) -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(match seed {
        None => rustls::crypto::ring::default_provider(),
        Some(s) => crate::seeded_tls::provider(s),
    })
}

/// SSLKEYLOGFILE-format writer (`LABEL <client_random hex> <secret hex>` per line).
#[derive(Debug)]
pub struct KeyLogFile(Mutex<File>);

impl KeyLogFile {
    pub fn create(path: &Path) -> Result<Self> {
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening key log {}", path.display()))?;
        Ok(KeyLogFile(Mutex::new(f)))
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl rustls::KeyLog for KeyLogFile {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        let line = format!("{label} {} {}\n", hex(client_random), hex(secret));
        if let Ok(mut f) = self.0.lock() {
            // A key log is a debugging aid: a failed write must not end the run.
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// quinn server crypto with our certificate.
pub fn server_crypto(
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
    keylog: Option<Arc<KeyLogFile>>,
    alpn: &[u8],
    seed: Option<u64>,
) -> Result<Arc<quinn::crypto::rustls::QuicServerConfig>> {
    let mut c = rustls::ServerConfig::builder_with_provider(provider(seed))
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)?;
    c.alpn_protocols = vec![alpn.to_vec()];
    if let Some(k) = keylog {
        c.key_log = k;
    }
    Ok(Arc::new(
        quinn::crypto::rustls::QuicServerConfig::try_from(c).map_err(|e| anyhow!("{e}"))?,
    ))
}

/// quinn client crypto trusting exactly `cert`.
pub fn client_crypto(
    cert: CertificateDer<'static>,
    keylog: Option<Arc<KeyLogFile>>,
    alpn: &[u8],
    seed: Option<u64>,
) -> Result<Arc<quinn::crypto::rustls::QuicClientConfig>> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(cert)
        .context("the host certificate is not a usable root")?;
    let mut c = rustls::ClientConfig::builder_with_provider(provider(seed))
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_root_certificates(roots)
        .with_no_client_auth();
    c.alpn_protocols = vec![alpn.to_vec()];
    if let Some(k) = keylog {
        c.key_log = k;
    }
    Ok(Arc::new(
        quinn::crypto::rustls::QuicClientConfig::try_from(c).map_err(|e| anyhow!("{e}"))?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_have_one_size() {
        let sizes: Vec<usize> = (0..20)
            .map(|_| self_signed(None).unwrap().0.len())
            .collect();
        assert!(sizes.iter().all(|&s| s == sizes[0]), "{sizes:?}");
        let (cert, key) = self_signed(None).unwrap();
        // both sides accept it
        server_crypto(cert.clone(), key, None, b"x", None).unwrap();
        client_crypto(cert, None, b"x", None).unwrap();
    }

    #[test]
    fn a_seeded_certificate_repeats_per_seed_and_has_the_one_size() {
        let (a, key) = self_signed(Some(3)).unwrap();
        assert_eq!(a, self_signed(Some(3)).unwrap().0);
        assert_ne!(a, self_signed(Some(4)).unwrap().0);
        assert_eq!(a.len(), self_signed(None).unwrap().0.len());
        server_crypto(a.clone(), key, None, b"x", Some(3)).unwrap();
        client_crypto(a, None, b"x", Some(4)).unwrap();
    }
}
