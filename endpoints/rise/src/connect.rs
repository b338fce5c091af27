//! Establishing the QUIC connection (endpoints/quicsetup): the host listens and accepts one
//! guest, the guest connects trusting exactly the host's certificate.

use std::time::Duration;

use anyhow::Result;
pub use quicsetup::{ConnectTimeout, Connected};

use crate::cli::Args;
use crate::transport::transport_config;

/// Application protocol.
pub const ALPN: &[u8] = b"rise";

pub async fn open(args: &Args, env: &quicsetup::Env) -> Result<Connected> {
    let setup = quicsetup::Setup {
        transport: transport_config(args)?,
        alpn: ALPN,
        keylog: args.common.keylog.clone(),
        limit: Duration::from_secs_f64(args.common.connect_timeout_s),
        who: format!("rise {}", args.role_str()),
        env: env.clone(),
        qlog: quicsetup::Qlog::new(args.common.qlog_dir.clone()),
    };
    quicsetup::open(&setup, args.role.shell(), &args.common).await
}
