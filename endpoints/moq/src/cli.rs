//! The `moq` command line (endpoints/README.md, the harness's contract).

use std::path::PathBuf;
use std::time::Duration;

use crate::route::Scheme;
use anyhow::{bail, Result};
use clap::{Parser, ValueEnum};
use quicsetup::shell::{CommonArgs, Role};
use quicsetup::Env;
use quinn::VarInt;

/// `--role`: `publisher` (alias `listen`) or `subscriber` (alias `connect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    #[value(alias = "listen")]
    Publisher,
    #[value(alias = "connect")]
    Subscriber,
}

impl RoleArg {
    pub fn shell(self) -> Role {
        match self {
            RoleArg::Publisher => Role::Listen,
            RoleArg::Subscriber => Role::Connect,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RoleArg::Publisher => "publisher",
            RoleArg::Subscriber => "subscriber",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemeArg {
    Fefs,
    Ft,
    Group,
}

/// Live video over QUIC unidirectional streams: the publisher releases the frames of a GoP
/// trace at their capture times, in decode order, on streams chosen by --scheme; the
/// subscriber logs when each frame arrives.
#[derive(Debug, Clone, Parser)]
#[command(name = "moq", version)]
pub struct Args {
    #[arg(long, value_enum)]
    pub role: RoleArg,
    #[command(flatten)]
    pub common: CommonArgs,
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
    /// A peer silent this long ends the run with exit 3.
    #[arg(long, default_value_t = 10.0)]
    pub idle_timeout_s: f64,
}

/// Flow-control windows: larger than a whole run's video (2 min at 3 Mbit/s = 45 MB), so
/// flow control never holds a frame back; only the path and the congestion controller do.
pub const WINDOW_BYTES: u32 = 256 << 20;

impl Args {
    pub fn validate(&self) -> Result<()> {
        self.common.require(self.role.shell(), self.role.as_str())?;
        for (name, v) in [
            ("duration-s", self.duration_s),
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

    pub fn setup(&self, env: &Env) -> Result<quicsetup::Setup> {
        let idle = Duration::from_secs_f64(self.idle_timeout_s);
        let cc = self.common.cc;
        let transport = quicsetup::Transport::new(move || {
            let mut t = quicsetup::base_transport(WINDOW_BYTES, idle)?;
            t.max_concurrent_uni_streams(VarInt::from_u32(1 << 16));
            cc.apply(&mut t);
            Ok(t)
        })?;
        Ok(quicsetup::Setup {
            transport,
            alpn: b"moq-priolab",
            keylog: self.common.keylog.clone(),
            limit: Duration::from_secs_f64(self.common.connect_timeout_s),
            who: format!("moq {}", self.role.as_str()),
            env: env.clone(),
            qlog: quicsetup::Qlog::new(self.common.qlog_dir.clone()),
        })
    }
}
