//! The `dtp` command line (endpoints/README.md, the harness's contract).

use std::time::Duration;

use crate::ads::Policy;
use crate::pattern::Pattern;
use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use quicsetup::shell::{CommonArgs, Role};
use quicsetup::Env;
use quinn::VarInt;

/// `--role`: `sender` (alias `listen`) or `receiver` (alias `connect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    #[value(alias = "listen")]
    Sender,
    #[value(alias = "connect")]
    Receiver,
}

impl RoleArg {
    pub fn shell(self) -> Role {
        match self {
            RoleArg::Sender => Role::Listen,
            RoleArg::Receiver => Role::Connect,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RoleArg::Sender => "sender",
            RoleArg::Receiver => "receiver",
        }
    }
}

/// The scheduling schemes of [DTP §VI].
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemeArg {
    /// Vanilla QUIC as the paper ran it (quiche 0.2.0's default): the blocks take turns,
    /// one chunk each, in arrival order; none dropped.
    Quic,
    /// QUIC sending blocks one after another in arrival order; none dropped.
    QuicFifo,
    /// SCTP': first come first served, stale blocks dropped.
    Fcfs,
    /// ADS with --alpha (0 = DTP-D, 1 = DTP-P, 0.5 = DTP).
    Ads,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Redundancy {
    /// No parity.
    Off,
    /// Adaptive ([DTP §III-C]): groups for data with less than 2 RTT to its deadline.
    On,
    /// Every block's data in groups whatever its time left: a static-FEC baseline, and how
    /// the loopback test gets groups on a path whose RTT it cannot set.
    Always,
}

/// Deadline-aware block delivery over QUIC ([DTP]): the sender releases rounds of blocks
/// (one unidirectional stream each) and the scheme decides which block gets the next bytes
/// and which are dropped (RESET_STREAM); the receiver logs when each block completed.
#[derive(Debug, Clone, Parser)]
#[command(name = "dtp", version)]
pub struct Args {
    #[arg(long, value_enum)]
    pub role: RoleArg,
    #[command(flatten)]
    pub common: CommonArgs,
    #[arg(long, value_enum, default_value_t = SchemeArg::Ads)]
    pub scheme: SchemeArg,
    /// ADS: weight of the priority against the deadline (Eq. 3).
    #[arg(long, default_value_t = 0.5)]
    pub alpha: f64,
    /// ADS: penalty of a block predicted to miss (Eq. 2); default: the least important
    /// priority value ([DTP §VI]: "β as the lowest priority value").
    #[arg(long)]
    pub beta: Option<f64>,
    /// A round of blocks every this many ms.
    #[arg(long, default_value_t = 100.0)]
    pub interval_ms: f64,
    /// Payload sizes of one round's blocks, comma-separated; priority 1, 2, … in this order.
    #[arg(long, value_delimiter = ',', default_value = "200000,200000,200000")]
    pub block_bytes: Vec<u64>,
    /// Every block's deadline, relative to its release.
    #[arg(long, default_value_t = 200.0)]
    pub deadline_ms: f64,
    /// Sender: bytes written to quinn per scheduler decision.
    #[arg(long, default_value_t = 1200)]
    pub chunk_bytes: u64,
    /// Sender: quinn's send window (bytes written but not yet acknowledged, at most). Small,
    /// so the backlog stays in the scheduler's queue; it must exceed the path's BDP.
    #[arg(long, default_value_t = 150_000)]
    pub send_window_bytes: u64,
    /// Sender: Reed-Solomon parity in QUIC datagrams; `on` is the paper's adaptive
    /// redundancy (data of blocks with less than 2 RTT left).
    #[arg(long, value_enum, default_value_t = Redundancy::Off)]
    pub redundancy: Redundancy,
    /// Sender: the bandwidth estimate until one was measured.
    #[arg(long, default_value_t = 1.0)]
    pub initial_bw_mbyte_s: f64,
    /// Sender: blocks released in [0, duration) are sent. Receiver: with --drain-s, when to
    /// end by itself (2 s after duration + drain) if the sender's close never came.
    #[arg(long, default_value_t = 30.0)]
    pub duration_s: f64,
    /// Sender: after the last release, keep the connection open this long, then close.
    #[arg(long, default_value_t = 1.0)]
    pub drain_s: f64,
    /// A peer silent this long ends the run with exit 3.
    #[arg(long, default_value_t = 10.0)]
    pub idle_timeout_s: f64,
}

/// The receiver's flow-control windows: larger than a run's data, so flow control never
/// holds a block back; only the path, the congestion controller and the sender do.
pub const RECEIVE_WINDOW_BYTES: u32 = 1 << 30;

impl Args {
    pub fn validate(&self) -> Result<()> {
        self.common.require(self.role.shell(), self.role.as_str())?;
        for (name, v) in [
            ("duration-s", self.duration_s),
            ("idle-timeout-s", self.idle_timeout_s),
            ("interval-ms", self.interval_ms),
            ("deadline-ms", self.deadline_ms),
            ("initial-bw-mbyte-s", self.initial_bw_mbyte_s),
        ] {
            if !(v.is_finite() && v > 0.0) {
                bail!("--{name} {v}: allowed a finite number > 0");
            }
        }
        if !(self.drain_s.is_finite() && self.drain_s >= 0.0) {
            bail!("--drain-s {}: allowed a finite number >= 0", self.drain_s);
        }
        if !(0.0..=1.0).contains(&self.alpha) {
            bail!("--alpha {}: allowed 0..=1", self.alpha);
        }
        if let Some(b) = self.beta {
            if !(b.is_finite() && b >= 0.0) {
                bail!("--beta {b}: allowed a finite number >= 0");
            }
        }
        if self.block_bytes.is_empty() || self.block_bytes.contains(&0) {
            bail!("--block-bytes: allowed a list of sizes > 0");
        }
        if self.chunk_bytes == 0 {
            bail!("--chunk-bytes 0: allowed >= 1");
        }
        if self.send_window_bytes < self.chunk_bytes {
            bail!("--send-window-bytes: allowed >= --chunk-bytes");
        }
        Ok(())
    }

    pub fn pattern(&self) -> Pattern {
        Pattern {
            interval_us: (self.interval_ms * 1e3).round() as u64,
            sizes_bytes: self.block_bytes.clone(),
            deadline_us: (self.deadline_ms * 1e3).round() as u64,
        }
    }

    pub fn policy(&self) -> Policy {
        match self.scheme {
            SchemeArg::Quic => Policy::RoundRobin,
            SchemeArg::QuicFifo => Policy::Fifo,
            SchemeArg::Fcfs => Policy::FcfsCancel,
            SchemeArg::Ads => Policy::Ads {
                alpha: self.alpha,
                beta: self.beta.unwrap_or(f64::from(self.pattern().pmax())),
            },
        }
    }

    pub fn scheme_name(&self) -> &'static str {
        match self.scheme {
            SchemeArg::Quic => "quic",
            SchemeArg::QuicFifo => "quic-fifo",
            SchemeArg::Fcfs => "fcfs",
            SchemeArg::Ads => "ads",
        }
    }

    pub fn setup(&self, env: &Env) -> Result<quicsetup::Setup> {
        let idle = Duration::from_secs_f64(self.idle_timeout_s);
        let (send_window_bytes, cc) = (self.send_window_bytes, self.common.cc);
        let transport = quicsetup::Transport::new(move || {
            let mut t = quicsetup::base_transport(RECEIVE_WINDOW_BYTES, idle)
                .context("--idle-timeout-s")?;
            t.send_window(send_window_bytes);
            // Streams of one priority go in the order they were written to: with the small
            // send window, the bytes leave in the order the scheduler chose them.
            t.send_fairness(false);
            t.max_concurrent_uni_streams(VarInt::from_u32(1 << 16));
            cc.apply(&mut t);
            Ok(t)
        })?;
        Ok(quicsetup::Setup {
            transport,
            alpn: b"dtp-priolab",
            keylog: self.common.keylog.clone(),
            limit: Duration::from_secs_f64(self.common.connect_timeout_s),
            who: format!("dtp {}", self.role.as_str()),
            env: env.clone(),
            qlog: quicsetup::Qlog::new(self.common.qlog_dir.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(scheme: &str) -> Result<Args, clap::Error> {
        let argv = ["dtp", "--role", "sender", "--log-dir", "x", "--scheme"];
        Args::try_parse_from(argv.into_iter().chain([scheme]))
    }

    #[test]
    fn quic_is_quiche_round_robin_and_fifo_stays_a_variant() {
        let policy = |s: &str| parse(s).unwrap().policy();
        let name = |s: &str| parse(s).unwrap().scheme_name();
        assert_eq!(policy("quic"), Policy::RoundRobin);
        assert_eq!(name("quic"), "quic");
        assert_eq!(policy("quic-fifo"), Policy::Fifo);
        assert_eq!(name("quic-fifo"), "quic-fifo");
        assert_eq!(policy("fcfs"), Policy::FcfsCancel);
        assert!(parse("rr").is_err());
    }
}
