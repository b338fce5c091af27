//! The `roq` command line (the harness's contract: endpoints/README.md, "roq").

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use quinn::{IdleTimeout, TransportConfig, VarInt};

use crate::cc::{PassThrough, TapFactory, Taps};

/// `--role`: `sender` (alias `listen`: the QUIC listener) or `receiver` (alias `connect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Role {
    #[value(alias = "listen")]
    Sender,
    #[value(alias = "connect")]
    Receiver,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// RTP in QUIC datagrams behind the flow identifier
    Quic,
    /// RTP in plain UDP datagrams (the paper's reference)
    Udp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RateCtl {
    /// SCReAM (RFC 8298) sets the encoder's bitrate and paces the RTP queue
    Scream,
    /// the paper's five levels by RTP queue growth
    Trivial,
    /// Google Congestion Control (beyond the paper): delay trend + loss, on the same feedback
    Gcc,
    /// `--start-kbps` throughout (no controller)
    Fixed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum QuicCc {
    /// no congestion control: a pass-through controller (window 1 GiB)
    None,
    Newreno,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Feedback {
    /// RTCP congestion control feedback (RFC 8888) from the receiver
    Rtcp,
    /// inferred from quinn's acknowledgements and RTT (no RTCP)
    Quic,
}

/// `--loss-recovery`: what the receiver does when the prediction chain breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LossRecovery {
    /// ask the sender for an IDR with an RTCP PLI (RFC 4585 §6.3.1); the sender answers
    Pli,
    /// send nothing and wait for the encoder's next IDR (no PLI)
    NextIdr,
}

impl From<LossRecovery> for roq_core::pli::Recovery {
    fn from(r: LossRecovery) -> Self {
        match r {
            LossRecovery::Pli => roq_core::pli::Recovery::Pli,
            LossRecovery::NextIdr => roq_core::pli::Recovery::NextIdr,
        }
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "roq",
    version,
    about = "RTP over QUIC ([RoQ]): live H.264 with SCReAM or the trivial controller"
)]
pub struct Args {
    #[arg(long, value_enum)]
    pub role: Role,
    #[arg(long, value_enum, default_value = "quic")]
    pub transport: Transport,
    /// QUIC: the sender listens here; UDP: the receiver listens here
    #[arg(long)]
    pub bind: Option<SocketAddr>,
    /// QUIC: the receiver connects here; UDP: the sender sends here
    #[arg(long)]
    pub connect: Option<SocketAddr>,
    /// QUIC sender: write the self-signed certificate (DER) here once listening
    #[arg(long)]
    pub cert_out: Option<PathBuf>,
    /// QUIC receiver: trust exactly this certificate
    #[arg(long)]
    pub cert: Option<PathBuf>,
    #[arg(long)]
    pub log_dir: PathBuf,
    /// seconds of video the sender encodes and sends
    #[arg(long, default_value_t = 30.0)]
    pub duration_s: f64,
    /// sender: raw I420 frames of --width × --height, looped
    #[arg(long)]
    pub source: Option<PathBuf>,
    #[arg(long, default_value_t = 640)]
    pub width: u32,
    #[arg(long, default_value_t = 360)]
    pub height: u32,
    #[arg(long, default_value_t = 25)]
    pub fps: u32,
    #[arg(long, value_enum, default_value = "scream")]
    pub rate: RateCtl,
    #[arg(long, value_enum, default_value = "newreno")]
    pub cc: QuicCc,
    #[arg(long, value_enum, default_value = "rtcp")]
    pub feedback: Feedback,
    /// QUIC sender: a unidirectional stream sending as fast as it can beside the RTP
    #[arg(long)]
    pub competing_stream: bool,
    #[arg(long, default_value_t = 300)]
    pub start_kbps: u32,
    #[arg(long, default_value_t = 100)]
    pub min_kbps: u32,
    #[arg(long, default_value_t = 2000)]
    pub max_kbps: u32,
    /// x264enc key-int-max (frames)
    #[arg(long, default_value_t = 50)]
    pub key_int_frames: u32,
    /// x264enc speed-preset
    #[arg(long, default_value = "veryfast")]
    pub x264_preset: String,
    /// receiver: RTCP feedback every this many ms (when packets arrived)
    #[arg(long, default_value_t = 20)]
    pub feedback_interval_ms: u64,
    /// receiver: after a lost frame (or no IDR yet), `pli` asks the sender for an IDR,
    /// `next-idr` waits for the encoder's next one
    #[arg(long, value_enum, default_value = "pli")]
    pub loss_recovery: LossRecovery,
    /// receiver: a PLI not answered by an IDR within this many ms is sent again
    #[arg(long, default_value_t = 1000)]
    pub pli_repeat_ms: u64,
    /// largest RTP packet, header included
    #[arg(long, default_value_t = 1200)]
    pub mtu_bytes: usize,
    /// sender: seconds after the last frame to deliver the RTP queue before closing
    #[arg(long, default_value_t = 1.0)]
    pub drain_s: f64,
    #[arg(long, default_value_t = 10.0)]
    pub connect_timeout_s: f64,
    #[arg(long, default_value_t = 10.0)]
    pub idle_timeout_s: f64,
    #[arg(long)]
    pub keylog: Option<PathBuf>,
    /// QUIC: one qlog trace (JSON-SEQ) per connection into this folder (created)
    #[arg(long)]
    pub qlog_dir: Option<PathBuf>,
}

pub const X264_PRESETS: [&str; 10] = [
    "ultrafast",
    "superfast",
    "veryfast",
    "faster",
    "fast",
    "medium",
    "slow",
    "slower",
    "veryslow",
    "placebo",
];

impl Args {
    pub fn frame_bytes(&self) -> usize {
        (self.width * self.height * 3 / 2) as usize
    }

    pub fn validate(&self) -> Result<()> {
        if !(self.duration_s > 0.0 && self.duration_s <= 3600.0) {
            bail!("--duration-s {}: allowed 0 < s <= 3600", self.duration_s);
        }
        // GStreamer pads I420 rows to 4 bytes: a width that is a multiple of 8 keeps the
        // planes unpadded, as the source file and decoded.y are
        if self.width == 0
            || self.height == 0
            || !self.width.is_multiple_of(8)
            || !self.height.is_multiple_of(2)
        {
            bail!(
                "--width/--height {}x{}: allowed a width that is a multiple of 8 and an even height",
                self.width,
                self.height
            );
        }
        if !(1..=120).contains(&self.fps) || 90_000 % self.fps != 0 {
            bail!("--fps {}: allowed 1..=120 dividing 90000", self.fps);
        }
        if !(self.min_kbps <= self.start_kbps && self.start_kbps <= self.max_kbps) {
            bail!("allowed --min-kbps <= --start-kbps <= --max-kbps");
        }
        if !(1..=60_000).contains(&self.pli_repeat_ms) {
            bail!("--pli-repeat-ms {}: allowed 1..=60000", self.pli_repeat_ms);
        }
        if !(100..=65_000).contains(&self.mtu_bytes) {
            bail!("--mtu-bytes {}: allowed 100..=65000", self.mtu_bytes);
        }
        if !X264_PRESETS.contains(&self.x264_preset.as_str()) {
            bail!(
                "--x264-preset {}: allowed {:?}",
                self.x264_preset,
                X264_PRESETS
            );
        }
        if self.transport == Transport::Udp
            && (self.feedback == Feedback::Quic || self.competing_stream)
        {
            bail!("--transport udp: --feedback quic and --competing-stream need QUIC");
        }
        match (self.role, self.transport) {
            (Role::Sender, Transport::Quic) if self.bind.is_none() || self.cert_out.is_none() => {
                bail!("a QUIC sender needs --bind and --cert-out")
            }
            (Role::Receiver, Transport::Quic) if self.connect.is_none() || self.cert.is_none() => {
                bail!("a QUIC receiver needs --connect and --cert")
            }
            (Role::Sender, Transport::Udp) if self.connect.is_none() => {
                bail!("a UDP sender needs --connect (the receiver's address)")
            }
            (Role::Receiver, Transport::Udp) if self.bind.is_none() => {
                bail!("a UDP receiver needs --bind")
            }
            _ => {}
        }
        if self.role == Role::Sender {
            let Some(src) = &self.source else {
                bail!("the sender needs --source (raw I420 frames)");
            };
            let len = std::fs::metadata(src)
                .with_context(|| format!("--source {}", src.display()))?
                .len() as usize;
            if len == 0 || !len.is_multiple_of(self.frame_bytes()) {
                bail!(
                    "--source {}: {len} bytes is not a whole number of {}x{} I420 frames ({} bytes each)",
                    src.display(),
                    self.width,
                    self.height,
                    self.frame_bytes()
                );
            }
        }
        Ok(())
    }

    /// The QUIC set-up; `taps` receives the controller's events (inferred feedback).
    pub fn setup(&self, taps: Taps, env: &quicsetup::Env) -> Result<quicsetup::Setup> {
        let idle = Duration::from_secs_f64(self.idle_timeout_s);
        let newreno = self.cc == QuicCc::Newreno;
        let transport = quicsetup::Transport::new(move || {
            let mut t = TransportConfig::default();
            t.enable_segmentation_offload(false); // DESIGN.md: per-packet link emulation
                                                  // assumption: a 1200-byte RTP packet plus the flow id and QUIC's overhead (~40 B)
                                                  // needs a UDP payload above quinn's 1200-byte default; the emulated links carry
                                                  // 1500
            t.initial_mtu(1400);
            t.min_mtu(1400);
            // a small datagram buffer keeps the RTP queue in the application, where the
            // controllers see it (assumption: two full datagrams)
            t.datagram_send_buffer_size(2 * 1400);
            t.max_idle_timeout(Some(
                IdleTimeout::try_from(idle).context("--idle-timeout-s out of range")?,
            ));
            t.keep_alive_interval(Some((idle / 4).max(Duration::from_millis(100))));
            t.max_concurrent_uni_streams(VarInt::from_u32(4));
            t.congestion_controller_factory(Arc::new(TapFactory {
                newreno,
                taps: taps.clone(),
            }));
            Ok(t)
        })?;
        let _ = PassThrough::WINDOW_BYTES;
        let who = match self.role {
            Role::Sender => "roq sender",
            Role::Receiver => "roq receiver",
        };
        Ok(quicsetup::Setup {
            transport,
            alpn: b"roq-priolab",
            keylog: self.keylog.clone(),
            limit: Duration::from_secs_f64(self.connect_timeout_s),
            who: who.to_string(),
            env: env.clone(),
            qlog: quicsetup::Qlog::new(self.qlog_dir.clone()),
        })
    }
}
