//! Establishing the QUIC connection (endpoints/quicsetup): the host listens and accepts one
//! guest, the guest connects trusting exactly the host's certificate.

use std::time::Duration;

use anyhow::{anyhow, Result};
pub use quicsetup::{ConnectTimeout, Connected};

use crate::cli::Args;
use crate::transport::transport_config;

/// Application protocol.
pub const ALPN: &[u8] = b"rise";

fn setup(args: &Args, who: &str) -> Result<quicsetup::Setup> {
    Ok(quicsetup::Setup {
        transport: transport_config(args)?,
        alpn: ALPN,
        keylog: args.keylog.clone(),
        limit: Duration::from_secs_f64(args.connect_timeout_s),
        who: who.to_string(),
    })
}

pub async fn host(args: &Args) -> Result<Connected> {
    let bind = args
        .bind
        .ok_or_else(|| anyhow!("--bind is required for --role host"))?;
    let cert_out = args
        .cert_out
        .as_deref()
        .ok_or_else(|| anyhow!("--cert-out is required for --role host"))?;
    quicsetup::accept_one(&setup(args, "rise host")?, bind, cert_out).await
}

pub async fn guest(args: &Args) -> Result<Connected> {
    let addr = args
        .connect
        .ok_or_else(|| anyhow!("--connect is required for --role guest"))?;
    let cert = args
        .cert
        .as_deref()
        .ok_or_else(|| anyhow!("--cert is required for --role guest"))?;
    quicsetup::connect(&setup(args, "rise guest")?, addr, cert).await
}
