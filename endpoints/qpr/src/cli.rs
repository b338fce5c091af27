//! The `qpr` command line (endpoints/README.md, the harness's contract).

use std::sync::Arc;
use std::time::Duration;

use crate::fec::{Fec, MAX_BLOCK_SYMBOLS};
use crate::scene::Scene;
use crate::unreliable::{FixedWindowConfig, LossBlindConfig, UnreliablePath};
use crate::viewport::Geometry;
use anyhow::{bail, Result};
use clap::{Parser, ValueEnum};
use quicsetup::shell::{Cc, CommonArgs, Role};
use quicsetup::Env;
use quinn::congestion::{BbrConfig, ControllerFactory, CubicConfig, NewRenoConfig};
use quinn::VarInt;

/// `--role`: `server` (alias `listen`) or `player` (alias `connect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    #[value(alias = "listen")]
    Server,
    #[value(alias = "connect")]
    Player,
}

impl RoleArg {
    pub fn shell(self) -> Role {
        match self {
            RoleArg::Server => Role::Listen,
            RoleArg::Player => Role::Connect,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RoleArg::Server => "server",
            RoleArg::Player => "player",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    /// QUIC: reliable streams and datagrams per --q-pct
    Quic,
    /// HTTP/2 over one TCP connection, every object reliable (the baseline; --q-pct 0)
    H2,
}

/// How the unreliable objects travel (qpr::unreliable::UnreliablePath).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PathArg {
    /// datagrams on the one connection, under its controller (quinn's loss response)
    Shared,
    /// datagrams on a second connection whose window stays at --initial-window-bytes
    FixedWindowConnection,
    /// datagrams on a second connection under --cc without its loss response
    LossBlindConnection,
}

impl PathArg {
    pub fn path(self) -> UnreliablePath {
        match self {
            PathArg::Shared => UnreliablePath::Shared,
            PathArg::FixedWindowConnection => UnreliablePath::FixedWindowConnection,
            PathArg::LossBlindConnection => UnreliablePath::LossBlindConnection,
        }
    }
}

/// Volumetric-media segments over partially reliable QUIC: the server holds the scene's
/// segments ([QPR Table 2]); the player requests them segment by segment with a
/// throughput ABR, the top-priority objects on reliable streams and the rest as datagrams.
#[derive(Debug, Clone, Parser)]
#[command(name = "qpr", version)]
pub struct Args {
    #[arg(long, value_enum)]
    pub role: RoleArg,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Both: QUIC or the HTTP/2-over-TCP baseline (the two sides must agree).
    #[arg(long, value_enum, default_value_t = TransportArg::Quic)]
    pub transport: TransportArg,
    /// Player: play this long (s) from the connection, then close and exit 0.
    #[arg(long, default_value_t = 120.0)]
    pub duration_s: f64,
    /// Player: the unreliable share of the objects (0, 25, 50, 75, 100).
    #[arg(long, default_value_t = 50)]
    pub q_pct: u32,
    /// Both: content bitrates × this (the link is rescaled by the same factor).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Both: the per-segment size variation's seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Player: segments the buffer holds besides the one playing.
    #[arg(long, default_value_t = 1)]
    pub buffer_segments: usize,
    /// Player: ABR budget = previous segment's throughput × this.
    #[arg(long, default_value_t = 1.0)]
    pub abr_safety: f64,
    /// Player: one lap of the viewer around the scene (s).
    #[arg(long, default_value_t = 60.0)]
    pub lap_s: f64,
    /// Player: after an object's end-of-data, wait this long for datagrams still on the way.
    #[arg(long, default_value_t = 5.0)]
    pub eod_grace_ms: f64,
    /// Server: congestion controller's initial window (bytes), and the window of
    /// --unreliable-path fixed-window-connection; 0 = quinn's default.
    #[arg(long, default_value_t = 0)]
    pub initial_window_bytes: u64,
    /// Both: where the datagrams travel (the two sides must agree).
    #[arg(long, value_enum, default_value_t = PathArg::Shared)]
    pub unreliable_path: PathArg,
    /// Both: repair symbols per 100 source datagrams of an unreliable object (QPR(F),
    /// [QPR §IV-E]; qpr::fec); 0 = no FEC (the two sides must agree).
    #[arg(long, default_value_t = 0)]
    pub fec_repair_pct: u32,
    /// Both: source datagrams per FEC block (a block and its repair symbols ≤ 256).
    #[arg(long, default_value_t = 32)]
    pub fec_block: usize,
    /// A peer silent this long ends the run with exit 3 ([QPR]: "the default timeout of
    /// 10 seconds").
    #[arg(long, default_value_t = 10.0)]
    pub idle_timeout_s: f64,
}

/// Flow-control windows: far larger than one segment (≤ 6.7 MB at full scale), so only the
/// path and the congestion controller pace the transfer.
pub const WINDOW_BYTES: u32 = 256 << 20;
/// [QPR §IV-B]: receive buffers of 25 MB "to ensure that no data is lost because of the
/// unavailability of the buffer" (here quinn's datagram receive queue).
pub const DATAGRAM_RECEIVE_BYTES: usize = 25_000_000;
/// quinn's datagram send queue: the server waits for it to drain before the end-of-data, so
/// a small queue keeps that wait short. assumption: 64 KiB ≈ 50 datagrams.
pub const DATAGRAM_SEND_BYTES: usize = 64 << 10;

impl Args {
    pub fn validate(&self) -> Result<()> {
        self.common.require(self.role.shell(), self.role.as_str())?;
        for (name, v) in [
            ("duration-s", self.duration_s),
            ("scale", self.scale),
            ("abr-safety", self.abr_safety),
            ("lap-s", self.lap_s),
            ("idle-timeout-s", self.idle_timeout_s),
        ] {
            if !(v.is_finite() && v > 0.0) {
                bail!("--{name} {v}: allowed a finite number > 0");
            }
        }
        if !(self.eod_grace_ms.is_finite() && self.eod_grace_ms >= 0.0) {
            bail!(
                "--eod-grace-ms {}: allowed a finite number >= 0",
                self.eod_grace_ms
            );
        }
        if crate::split::unreliable_count(self.q_pct).is_none() {
            bail!(
                "--q-pct {}: allowed {:?}",
                self.q_pct,
                crate::split::Q_LEVELS
            );
        }
        if self.role == RoleArg::Player && self.transport == TransportArg::H2 && self.q_pct != 0 {
            bail!(
                "--transport h2 --q-pct {}: HTTP/2 over TCP is reliable, allowed --q-pct 0",
                self.q_pct
            );
        }
        if self.role == RoleArg::Server
            && self.unreliable_path == PathArg::FixedWindowConnection
            && self.initial_window_bytes == 0
        {
            bail!("--unreliable-path fixed-window-connection needs --initial-window-bytes > 0");
        }
        if self.buffer_segments == 0 {
            bail!("--buffer-segments 0: allowed >= 1");
        }
        if Fec::new(self.fec_block, self.fec_repair_pct).is_none() {
            bail!(
                "--fec-block {} --fec-repair-pct {}: allowed a block >= 1 whose sources and \
                 repair symbols number at most {MAX_BLOCK_SYMBOLS}",
                self.fec_block,
                self.fec_repair_pct
            );
        }
        Ok(())
    }

    /// The FEC of the unreliable objects; None without (--fec-repair-pct 0).
    pub fn fec(&self) -> Option<Fec> {
        if self.fec_repair_pct == 0 {
            return None;
        }
        Fec::new(self.fec_block, self.fec_repair_pct)
    }

    pub fn scene(&self) -> Scene {
        Scene {
            scale: self.scale,
            seed: self.seed,
        }
    }

    pub fn geometry(&self) -> Geometry {
        Geometry {
            lap_s: self.lap_s,
            ..Geometry::default()
        }
    }

    /// The configured controller (--cc, --initial-window-bytes).
    fn controller(&self) -> Arc<dyn ControllerFactory + Send + Sync> {
        let iw = self.initial_window_bytes;
        match self.common.cc {
            Cc::Cubic => {
                let mut c = CubicConfig::default();
                if iw > 0 {
                    c.initial_window(iw);
                }
                Arc::new(c)
            }
            Cc::Newreno => {
                let mut c = NewRenoConfig::default();
                if iw > 0 {
                    c.initial_window(iw);
                }
                Arc::new(c)
            }
            Cc::Bbr => {
                let mut c = BbrConfig::default();
                if iw > 0 {
                    c.initial_window(iw);
                }
                Arc::new(c)
            }
        }
    }

    fn transport(
        &self,
        cc: Arc<dyn ControllerFactory + Send + Sync>,
    ) -> Result<quicsetup::Transport> {
        let idle = Duration::from_secs_f64(self.idle_timeout_s);
        quicsetup::Transport::new(move || {
            let mut t = quicsetup::base_transport(WINDOW_BYTES, idle)?;
            t.max_concurrent_bidi_streams(VarInt::from_u32(1 << 16));
            t.datagram_receive_buffer_size(Some(DATAGRAM_RECEIVE_BYTES));
            t.datagram_send_buffer_size(DATAGRAM_SEND_BYTES);
            t.congestion_controller_factory(cc.clone());
            Ok(t)
        })
    }

    /// The transport of the datagram connection (server side; None on the shared path):
    /// as the first connection's, with the controller of --unreliable-path.
    pub fn datagram_transport(&self) -> Result<Option<quicsetup::Transport>> {
        let cc: Arc<dyn ControllerFactory + Send + Sync> = match self.unreliable_path.path() {
            UnreliablePath::Shared => return Ok(None),
            UnreliablePath::FixedWindowConnection => Arc::new(FixedWindowConfig {
                window: self.initial_window_bytes,
            }),
            UnreliablePath::LossBlindConnection => Arc::new(LossBlindConfig {
                inner: self.controller(),
            }),
        };
        Ok(Some(self.transport(cc)?))
    }

    pub fn setup(&self, env: &Env) -> Result<quicsetup::Setup> {
        Ok(quicsetup::Setup {
            transport: self.transport(self.controller())?,
            alpn: b"qpr-priolab",
            keylog: self.common.keylog.clone(),
            limit: Duration::from_secs_f64(self.common.connect_timeout_s),
            who: format!("qpr {}", self.role.as_str()),
            env: env.clone(),
            qlog: quicsetup::Qlog::new(self.common.qlog_dir.clone()),
        })
    }
}
