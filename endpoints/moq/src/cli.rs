//! The `moq` command line (endpoints/README.md, the harness's contract).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::{Parser, ValueEnum};
use moq::route::Scheme;
use quinn::congestion::{BbrConfig, CubicConfig, NewRenoConfig};
use quinn::VarInt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    Publisher,
    Subscriber,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemeArg {
    Fefs,
    Ft,
    Group,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Cc {
    Cubic,
    Newreno,
    Bbr,
}

/// Live video over QUIC unidirectional streams: the publisher releases the frames of a GoP
/// trace at their capture times, in decode order, on streams chosen by --scheme; the
/// subscriber logs when each frame arrives.
#[derive(Debug, Clone, Parser)]
#[command(name = "moq", version)]
pub struct Args {
    #[arg(long, value_enum)]
    pub role: RoleArg,
    /// Publisher: UDP address to listen on.
    #[arg(long, required_if_eq("role", "publisher"))]
    pub bind: Option<SocketAddr>,
    /// Publisher: where to write the self-signed certificate (DER) once listening.
    #[arg(long, required_if_eq("role", "publisher"))]
    pub cert_out: Option<PathBuf>,
    /// Subscriber: the publisher's address.
    #[arg(long, required_if_eq("role", "subscriber"))]
    pub connect: Option<SocketAddr>,
    /// Subscriber: the publisher's certificate (DER), waited for up to --connect-timeout-s.
    #[arg(long, required_if_eq("role", "subscriber"))]
    pub cert: Option<PathBuf>,
    #[arg(long)]
    pub log_dir: PathBuf,
    /// Publisher: the GoP CSV (traces/README.md), replayed in a loop.
    #[arg(long, required_if_eq("role", "publisher"))]
    pub frame_trace: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = SchemeArg::Fefs)]
    pub scheme: SchemeArg,
    /// Scheme group: groups more than this many behind the newest are abandoned (reset).
    #[arg(long, default_value_t = 1)]
    pub max_group_lag: u64,
    /// Publisher: frames captured in [0, duration) are released. Subscriber: with --drain-s,
    /// when to end by itself (2 s after duration + drain) if the publisher's close never came.
    #[arg(long, default_value_t = 30.0)]
    pub duration_s: f64,
    /// Publisher: after the last release, keep the connection open this long, then close.
    #[arg(long, default_value_t = 3.5)]
    pub drain_s: f64,
    #[arg(long, value_enum, default_value_t = Cc::Cubic)]
    pub cc: Cc,
    /// TLS key log (SSLKEYLOGFILE format).
    #[arg(long)]
    pub keylog: Option<PathBuf>,
    #[arg(long, default_value_t = 15.0)]
    pub connect_timeout_s: f64,
    /// A peer silent this long ends the run with exit 3.
    #[arg(long, default_value_t = 10.0)]
    pub idle_timeout_s: f64,
}

/// Flow-control windows: larger than a whole run's video (2 min at 3 Mbit/s = 45 MB), so
/// flow control never holds a frame back; only the path and the congestion controller do.
pub const WINDOW_BYTES: u32 = 256 << 20;

impl Args {
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("duration-s", self.duration_s),
            ("connect-timeout-s", self.connect_timeout_s),
            ("idle-timeout-s", self.idle_timeout_s),
        ] {
            if !(v.is_finite() && v > 0.0) {
                bail!("--{name} {v}: allowed a finite number > 0");
            }
        }
        if !(self.drain_s.is_finite() && self.drain_s >= 0.0) {
            bail!("--drain-s {}: allowed a finite number >= 0", self.drain_s);
        }
        if self.max_group_lag == 0 {
            bail!("--max-group-lag 0: allowed >= 1 (the group being sent must stay open)");
        }
        Ok(())
    }

    pub fn scheme(&self) -> Scheme {
        match self.scheme {
            SchemeArg::Fefs => Scheme::Fefs,
            SchemeArg::Ft => Scheme::Ft,
            SchemeArg::Group => Scheme::Group {
                max_group_lag: self.max_group_lag,
            },
        }
    }

    pub fn setup(&self) -> Result<quicsetup::Setup> {
        let idle = Duration::from_secs_f64(self.idle_timeout_s);
        let mut t = quicsetup::base_transport(WINDOW_BYTES, idle)?;
        t.max_concurrent_uni_streams(VarInt::from_u32(1 << 16));
        match self.cc {
            Cc::Cubic => t.congestion_controller_factory(Arc::new(CubicConfig::default())),
            Cc::Newreno => t.congestion_controller_factory(Arc::new(NewRenoConfig::default())),
            Cc::Bbr => t.congestion_controller_factory(Arc::new(BbrConfig::default())),
        };
        let who = match self.role {
            RoleArg::Publisher => "moq publisher",
            RoleArg::Subscriber => "moq subscriber",
        };
        Ok(quicsetup::Setup {
            transport: Arc::new(t),
            alpn: b"moq-priolab",
            keylog: self.keylog.clone(),
            limit: Duration::from_secs_f64(self.connect_timeout_s),
            who: who.to_string(),
            env: quicsetup::Env::real(),
        })
    }
}

pub use quicsetup::summary::now_us;
