//! The `rise` command line (endpoints/README.md, the harness's contract) and the trace files
//! it names.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, ValueEnum};
use rise_core::{Config, FifoDrop, FrameType, Role, TrackingRow, TrackingSource};

/// `--role`: `host` (alias `listen`) or `guest` (alias `connect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    #[value(alias = "listen")]
    Host,
    #[value(alias = "connect")]
    Guest,
}

impl RoleArg {
    pub fn shell(self) -> quicsetup::shell::Role {
        match self {
            RoleArg::Host => quicsetup::shell::Role::Listen,
            RoleArg::Guest => quicsetup::shell::Role::Connect,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FifoDropArg {
    Head,
    Tail,
}

/// RISE endpoint: bidirectional view-dependent streaming over QUIC datagrams with priority
/// channels (tracking > video > ACK).
#[derive(Debug, Clone, Parser)]
#[command(name = "rise", version)]
pub struct Args {
    #[arg(long, value_enum)]
    pub role: RoleArg,
    #[command(flatten)]
    pub common: quicsetup::shell::CommonArgs,
    #[arg(long, default_value_t = 30.0)]
    pub duration_s: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, default_value_t = 30.0)]
    pub video_bitrate_mbps: f64,
    #[arg(long, default_value_t = 30)]
    pub fps: u32,
    #[arg(long, default_value_t = 0.2)]
    pub frame_size_sigma: f64,
    #[arg(long, default_value_t = 9.0)]
    pub keyframe_factor: f64,
    /// CSV `frame_type,size_bytes` (key|delta) replayed in a loop instead of the model.
    #[arg(long)]
    pub frame_trace: Option<PathBuf>,
    #[arg(long, default_value_t = 60)]
    pub tracking_hz: u32,
    #[arg(long, default_value_t = 60.0)]
    pub tracking_speed_deg_s: f64,
    /// CSV `time_s,yaw_rad,pitch_rad,roll_rad` replayed in a loop.
    #[arg(long)]
    pub tracking_trace: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    pub prio: OnOff,
    #[arg(long, default_value_t = 1_048_576)]
    pub buffer_bytes: usize,
    /// With --prio off: what the one FIFO drops when full. head = the oldest datagrams, as
    /// vanilla quinn's datagram send buffer (the paper's baseline QUIC); tail = the new one.
    #[arg(long, value_enum, default_value_t = FifoDropArg::Head)]
    pub fifo_drop: FifoDropArg,
    /// Encode + render + decode time added by the streamer before a frame enters the channels.
    #[arg(long, default_value_t = 0.0)]
    pub processing_delay_ms: f64,
    #[arg(long, default_value_t = 1500)]
    pub quinn_datagram_buffer_bytes: usize,
    #[arg(long, default_value_t = 1000)]
    pub deadline_ms: u64,
    #[arg(long, default_value_t = 3)]
    pub max_retx: u32,
    /// Extension: QUIC idle timeout; a peer silent this long ends the run with exit 3.
    #[arg(long, default_value_t = 5.0)]
    pub idle_timeout_s: f64,
}

/// Smallest quinn datagram buffer we accept: quinn books 32 bytes per queued datagram and the
/// core needs room for a header and some payload.
pub const MIN_QUINN_BUFFER_BYTES: usize = 256;

impl Args {
    /// Range checks clap cannot express; an error names the flag and what is allowed.
    pub fn validate(&self) -> Result<()> {
        let pos = |name: &str, v: f64| -> Result<()> {
            if !(v.is_finite() && v > 0.0) {
                bail!("--{name} {v}: allowed a finite number > 0");
            }
            Ok(())
        };
        self.common.require(self.role.shell(), self.role_str())?;
        pos("duration-s", self.duration_s)?;
        pos("video-bitrate-mbps", self.video_bitrate_mbps)?;
        pos("idle-timeout-s", self.idle_timeout_s)?;
        if self.quinn_datagram_buffer_bytes < MIN_QUINN_BUFFER_BYTES {
            bail!(
                "--quinn-datagram-buffer-bytes {}: allowed >= {MIN_QUINN_BUFFER_BYTES}",
                self.quinn_datagram_buffer_bytes
            );
        }
        if self.deadline_ms == 0 {
            bail!("--deadline-ms 0: allowed >= 1");
        }
        if !(self.processing_delay_ms.is_finite()
            && (0.0..=60_000.0).contains(&self.processing_delay_ms))
        {
            bail!(
                "--processing-delay-ms {}: allowed a number in 0..=60000",
                self.processing_delay_ms
            );
        }
        Ok(())
    }

    /// The core's configuration (reads the trace files). Errors name the file and line.
    pub fn core_config(&self) -> Result<Config> {
        let frame_trace = match &self.frame_trace {
            Some(p) => Some(read_frame_trace(p)?),
            None => None,
        };
        let tracking = match &self.tracking_trace {
            Some(p) => TrackingSource::Trace(read_tracking_trace(p)?),
            None => TrackingSource::Synthetic {
                speed_deg_s: self.tracking_speed_deg_s,
            },
        };
        let cfg = Config {
            role: match self.role {
                RoleArg::Host => Role::Host,
                RoleArg::Guest => Role::Guest,
            },
            video_bitrate_bps: (self.video_bitrate_mbps * 1e6).round() as u64,
            fps: self.fps,
            frame_size_sigma: self.frame_size_sigma,
            keyframe_factor: self.keyframe_factor,
            frame_trace,
            tracking_hz: self.tracking_hz,
            tracking,
            prio: self.prio == OnOff::On,
            buffer_bytes: self.buffer_bytes,
            fifo_drop: match self.fifo_drop {
                FifoDropArg::Head => FifoDrop::Head,
                FifoDropArg::Tail => FifoDrop::Tail,
            },
            processing_delay_us: (self.processing_delay_ms * 1000.0).round() as u64,
            deadline_us: self.deadline_ms * 1000,
            max_retx: self.max_retx,
            max_datagram_bytes: 1200,
            seed: self.seed,
        };
        cfg.validate().map_err(|e| anyhow!("{e}"))?;
        Ok(cfg)
    }
}

fn csv_lines(path: &Path, header: &[&str]) -> Result<Vec<(usize, Vec<String>)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, head) = lines.next().ok_or_else(|| {
        anyhow!(
            "{}: empty file, expected header {}",
            path.display(),
            header.join(",")
        )
    })?;
    let cols: Vec<&str> = head.split(',').map(str::trim).collect();
    if cols != header {
        bail!(
            "{}: line 1: header {:?}, allowed exactly {}",
            path.display(),
            head,
            header.join(",")
        );
    }
    let rows: Vec<(usize, Vec<String>)> = lines
        .map(|(i, l)| (i + 1, l.split(',').map(|s| s.trim().to_string()).collect()))
        .collect();
    for (n, r) in &rows {
        if r.len() != header.len() {
            bail!(
                "{}: line {n}: {} fields, allowed {} ({})",
                path.display(),
                r.len(),
                header.len(),
                header.join(",")
            );
        }
    }
    if rows.is_empty() {
        bail!("{}: no rows after the header", path.display());
    }
    Ok(rows)
}

/// `frame_type,size_bytes`; `frame_type` is `key` or `delta`, `size_bytes` an integer >= 1.
pub fn read_frame_trace(path: &Path) -> Result<Vec<(FrameType, u32)>> {
    csv_lines(path, &["frame_type", "size_bytes"])?
        .into_iter()
        .map(|(n, r)| {
            let t = match r[0].as_str() {
                "key" => FrameType::Key,
                "delta" => FrameType::Delta,
                other => bail!(
                    "{}: line {n}: frame_type {other:?}, allowed key or delta",
                    path.display()
                ),
            };
            let size: u32 = r[1].parse().ok().filter(|&s| s >= 1).ok_or_else(|| {
                anyhow!(
                    "{}: line {n}: size_bytes {:?}, allowed an integer >= 1",
                    path.display(),
                    r[1]
                )
            })?;
            Ok((t, size))
        })
        .collect()
}

/// `time_s,yaw_rad,pitch_rad,roll_rad`, finite numbers, `time_s` non-decreasing.
pub fn read_tracking_trace(path: &Path) -> Result<Vec<TrackingRow>> {
    let names = ["time_s", "yaw_rad", "pitch_rad", "roll_rad"];
    let mut out: Vec<TrackingRow> = Vec::new();
    for (n, r) in csv_lines(path, &names)? {
        let mut v = [0f64; 4];
        for (k, s) in r.iter().enumerate() {
            v[k] = s
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| {
                    anyhow!(
                        "{}: line {n}: {} {s:?}, allowed a finite number",
                        path.display(),
                        names[k]
                    )
                })?;
        }
        if let Some(last) = out.last() {
            if v[0] < last.t_s {
                bail!(
                    "{}: line {n}: time_s {} < previous {}, allowed non-decreasing",
                    path.display(),
                    v[0],
                    last.t_s
                );
            }
        }
        out.push(TrackingRow {
            t_s: v[0],
            yaw_rad: v[1],
            pitch_rad: v[2],
            roll_rad: v[3],
        });
    }
    Ok(out)
}

impl Args {
    /// What the sender buffer B is: `prio` (the channels), or the one FIFO and its drop policy.
    pub fn buffer_scheme(&self) -> &'static str {
        match (self.prio, self.fifo_drop) {
            (OnOff::On, _) => "prio",
            (OnOff::Off, FifoDropArg::Head) => "fifo-head-drop",
            (OnOff::Off, FifoDropArg::Tail) => "fifo-tail-drop",
        }
    }

    pub fn role_str(&self) -> &'static str {
        match self.role {
            RoleArg::Host => "host",
            RoleArg::Guest => "guest",
        }
    }
}
