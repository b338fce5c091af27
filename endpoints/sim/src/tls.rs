//! TLS for programs in the sim, made so that a run is reproducible: an Ed25519 certificate
//! (fixed-size signatures, unlike ECDSA's DER) with a fixed serial, so every handshake has
//! the same sizes whatever the random key, and therefore the same packets and timing.

use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io;
use std::sync::Arc;

/// The server name in the certificate.
pub const SERVER_NAME: &str = "priolab";

fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// A self-signed Ed25519 certificate for [`SERVER_NAME`] with serial 1, and its key.
pub fn self_signed() -> io::Result<(CertificateDer<'static>, PrivateKeyDer<'static>)> {
    let kp = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).map_err(other)?;
    let mut params = rcgen::CertificateParams::new(vec![SERVER_NAME.to_string()]).map_err(other)?;
    params.serial_number = Some(rcgen::SerialNumber::from(1u64));
    let cert = params.self_signed(&kp).map_err(other)?;
    let key = PrivatePkcs8KeyDer::from(kp.serialize_der());
    Ok((cert.der().clone(), key.into()))
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

pub fn server(
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
    alpn: &[u8],
) -> io::Result<quinn::ServerConfig> {
    let mut c = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(other)?
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .map_err(other)?;
    c.alpn_protocols = vec![alpn.to_vec()];
    let q = QuicServerConfig::try_from(c).map_err(other)?;
    Ok(quinn::ServerConfig::with_crypto(Arc::new(q)))
}

pub fn client(cert: CertificateDer<'static>, alpn: &[u8]) -> io::Result<quinn::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).map_err(other)?;
    let mut c = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(other)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    c.alpn_protocols = vec![alpn.to_vec()];
    let q = QuicClientConfig::try_from(c).map_err(other)?;
    Ok(quinn::ClientConfig::new(Arc::new(q)))
}
