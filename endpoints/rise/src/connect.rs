//! Establishing the QUIC connection: the host listens and accepts one guest, the guest
//! connects trusting exactly the host's certificate.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use quinn::{Connection, Endpoint};
use rustls::pki_types::CertificateDer;
use tokio::time::{timeout, Instant};

use crate::cli::Args;
use crate::tls::{self, KeyLogFile};
use crate::transport::transport_config;

/// Why no connection came about in time (exit 4).
#[derive(Debug)]
pub struct ConnectTimeout(pub String);

pub type Connected = std::result::Result<(Endpoint, Connection), ConnectTimeout>;

fn keylog(args: &Args) -> Result<Option<Arc<KeyLogFile>>> {
    args.keylog
        .as_deref()
        .map(|p| KeyLogFile::create(p).map(Arc::new))
        .transpose()
}

pub async fn host(args: &Args) -> Result<Connected> {
    let bind = args
        .bind
        .ok_or_else(|| anyhow!("--bind is required for --role host"))?;
    let cert_out = args
        .cert_out
        .as_deref()
        .ok_or_else(|| anyhow!("--cert-out is required for --role host"))?;
    let (cert, key) = tls::self_signed()?;
    let mut sc =
        quinn::ServerConfig::with_crypto(tls::server_crypto(cert.clone(), key, keylog(args)?)?);
    sc.transport_config(transport_config(args)?);
    let ep = Endpoint::server(sc, bind).with_context(|| format!("listening on {bind}"))?;
    tls::write_cert_atomically(cert_out, &cert)?;
    eprintln!("rise host: listening on {}", ep.local_addr()?);
    let limit = Duration::from_secs_f64(args.connect_timeout_s);
    let deadline = Instant::now() + limit;
    loop {
        let incoming = match tokio::time::timeout_at(deadline, ep.accept()).await {
            Err(_) => return Ok(Err(ConnectTimeout(format!("no guest within {limit:?}")))),
            Ok(None) => return Err(anyhow!("endpoint closed while accepting")),
            Ok(Some(i)) => i,
        };
        match tokio::time::timeout_at(deadline, incoming).await {
            Err(_) => {
                return Ok(Err(ConnectTimeout(format!(
                    "handshake not done within {limit:?}"
                ))))
            }
            Ok(Ok(conn)) => {
                eprintln!("rise host: guest {} connected", conn.remote_address());
                return Ok(Ok((ep, conn)));
            }
            Ok(Err(e)) => eprintln!("rise host: a handshake failed ({e}); still waiting"),
        }
    }
}

/// Waits for `path` to exist (the host writes it once listening), up to `until`.
async fn wait_for_cert(path: &Path, until: Instant) -> Result<Option<CertificateDer<'static>>> {
    loop {
        match std::fs::read(path) {
            Ok(der) => return Ok(Some(CertificateDer::from(der))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if Instant::now() >= until {
                    return Ok(None);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }
}

pub async fn guest(args: &Args) -> Result<Connected> {
    let addr: SocketAddr = args
        .connect
        .ok_or_else(|| anyhow!("--connect is required for --role guest"))?;
    let cert_path = args
        .cert
        .as_deref()
        .ok_or_else(|| anyhow!("--cert is required for --role guest"))?;
    let limit = Duration::from_secs_f64(args.connect_timeout_s);
    let deadline = Instant::now() + limit;
    let Some(cert) = wait_for_cert(cert_path, deadline).await? else {
        return Ok(Err(ConnectTimeout(format!(
            "{} did not appear within {limit:?}",
            cert_path.display()
        ))));
    };
    let mut cc = quinn::ClientConfig::new(tls::client_crypto(cert, keylog(args)?)?);
    cc.transport_config(transport_config(args)?);
    let local: SocketAddr = if addr.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    let mut ep = Endpoint::client(local).context("opening the client socket")?;
    ep.set_default_client_config(cc);
    let connecting = ep
        .connect(addr, tls::SERVER_NAME)
        .with_context(|| format!("connecting to {addr}"))?;
    match timeout(
        deadline.saturating_duration_since(Instant::now()),
        connecting,
    )
    .await
    {
        Err(_) => Ok(Err(ConnectTimeout(format!(
            "no handshake with {addr} within {limit:?}"
        )))),
        Ok(Err(e)) => Ok(Err(ConnectTimeout(format!("connecting to {addr}: {e}")))),
        Ok(Ok(conn)) => {
            eprintln!("rise guest: connected to {addr}");
            Ok(Ok((ep, conn)))
        }
    }
}
