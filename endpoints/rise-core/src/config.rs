//! Endpoint configuration: every knob of the streamer and the receiver, with units in the names.

use std::fmt;

/// Which side of the QUIC connection this endpoint is. The protocol is symmetric (each endpoint
/// streams video and receives video); the role only matters to the shell (server or client).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Host,
    Guest,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Host => "host",
            Role::Guest => "guest",
        }
    }
}

/// Video frame type. A delta frame references the frame right before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameType {
    Key,
    Delta,
}

impl FrameType {
    pub fn as_str(self) -> &'static str {
        match self {
            FrameType::Key => "key",
            FrameType::Delta => "delta",
        }
    }
}

impl fmt::Display for FrameType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the single FIFO of "without prioritisation" does when a datagram does not fit in B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FifoDrop {
    /// Drop the oldest datagrams until the new one fits: vanilla quinn 0.11's datagram send
    /// buffer (quinn-proto `datagrams.rs`, `make_space_for`), the paper's "baseline QUIC".
    #[default]
    Head,
    /// Drop the new datagram (a variant; what priolab's one FIFO did before it followed
    /// vanilla quinn's head drop).
    Tail,
}

impl FifoDrop {
    pub fn as_str(self) -> &'static str {
        match self {
            FifoDrop::Head => "head",
            FifoDrop::Tail => "tail",
        }
    }
}

/// One row of a head-movement trace: time since the trace start and a 3DoF orientation
/// (intrinsic yaw, pitch, roll in radians).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackingRow {
    pub t_s: f64,
    pub yaw_rad: f64,
    pub pitch_rad: f64,
    pub roll_rad: f64,
}

/// Where this endpoint's own head orientation comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum TrackingSource {
    /// Seeded smooth movement: the view direction moves at `speed_deg_s` (angular speed on
    /// the sphere) along a heading that performs a random walk; see [`crate::tracking`].
    Synthetic { speed_deg_s: f64 },
    /// Replay of rows by time (sample and hold, looping); rows sorted by `t_s`.
    Trace(Vec<TrackingRow>),
}

/// All parameters of one endpoint. Defaults follow [RISE setup] (FB/4K/Low, deadline 1 s,
/// B = quinn's default 1 MiB, at most 3 retransmissions).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub role: Role,
    /// CBR target of the video encoder, bits per second.
    pub video_bitrate_bps: u64,
    /// Video frame rate, frames per second (≥ 1).
    pub fps: u32,
    /// σ of the lognormal spread of delta-frame sizes around their target (assumption: 0.2).
    pub frame_size_sigma: f64,
    /// Key frame size as a multiple of the mean frame size; capped at 9 (ringmaster's
    /// `MAX_INTRA_BITRATE_PCT` 900), at least 1.
    pub keyframe_factor: f64,
    /// Replay these (type, size in bytes) frames in a loop instead of the CBR model.
    pub frame_trace: Option<Vec<(FrameType, u32)>>,
    /// Tracking sample rate, Hz (≥ 1).
    pub tracking_hz: u32,
    pub tracking: TrackingSource,
    /// Three priority channels tracking > video > ACK (true) or one FIFO for all (false).
    pub prio: bool,
    /// B: capacity of the virtual sender buffer over all channels, bytes.
    pub buffer_bytes: usize,
    /// Overflow policy of the single FIFO when `prio` is false (ignored when it is true).
    pub fifo_drop: FifoDrop,
    /// Encode + render + decode time, modelled at the streamer: a frame rendered at its tick
    /// enters the channels this much later ([RISE setup]: default 0). Microseconds.
    pub processing_delay_us: u64,
    /// Frame deadline: if the oldest unacked video datagram was first sent longer ago than
    /// this, all pending video is dropped and the next frame is a key frame. Microseconds.
    pub deadline_us: u64,
    /// Retransmissions per video datagram at most.
    pub max_retx: u32,
    /// Largest datagram the transport takes, bytes (quinn's `max_datagram_size()`); updated
    /// at run time by [`crate::Endpoint::set_max_datagram_size`].
    pub max_datagram_bytes: usize,
    /// Seed of all randomness (frame sizes, synthetic tracking).
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            role: Role::Host,
            video_bitrate_bps: 30_000_000,
            fps: 30,
            frame_size_sigma: 0.2,
            keyframe_factor: 9.0,
            frame_trace: None,
            tracking_hz: 60,
            tracking: TrackingSource::Synthetic { speed_deg_s: 60.0 },
            prio: true,
            buffer_bytes: 1 << 20,
            fifo_drop: FifoDrop::Head,
            processing_delay_us: 0,
            deadline_us: 1_000_000,
            max_retx: 3,
            max_datagram_bytes: 1200,
            seed: 1,
        }
    }
}

/// A configuration value out of range: names the key and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub key: &'static str,
    pub allowed: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {}: allowed {}", self.key, self.allowed)
    }
}

impl std::error::Error for ConfigError {}

/// Smallest datagram that still carries a video header plus one payload byte.
pub const MIN_DATAGRAM_BYTES: usize = crate::wire::VIDEO_HEADER_BYTES + 1;

/// Upper bound of the key frame factor (ringmaster's `MAX_INTRA_BITRATE_PCT` 900 %).
pub const MAX_KEYFRAME_FACTOR: f64 = 9.0;

/// Largest frame the receiver's decoder takes: ringmaster's decoder rejects frames of
/// 1,000,000 bytes or more (`MAX_DECODING_BUF` in `src/app/decoder.cc`), so frames are capped
/// one byte below.
pub const MAX_FRAME_BYTES: u32 = 999_999;

/// Upper bound of the processing delay (a minute: anything longer is a mistake).
pub const MAX_PROCESSING_DELAY_US: u64 = 60_000_000;

fn err(key: &'static str, allowed: &str) -> ConfigError {
    ConfigError {
        key,
        allowed: allowed.to_string(),
    }
}

impl Config {
    /// Check every value; the shell calls this to reject bad arguments before starting.
    /// [`crate::Endpoint::new`] clamps instead of failing.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.video_bitrate_bps == 0 {
            return Err(err("video_bitrate_bps", "> 0"));
        }
        if self.fps == 0 || self.fps > 1000 {
            return Err(err("fps", "1..=1000"));
        }
        if !(self.frame_size_sigma.is_finite() && (0.0..=3.0).contains(&self.frame_size_sigma)) {
            return Err(err("frame_size_sigma", "a number in 0..=3"));
        }
        if !(self.keyframe_factor.is_finite()
            && (1.0..=MAX_KEYFRAME_FACTOR).contains(&self.keyframe_factor))
        {
            return Err(err("keyframe_factor", "a number in 1..=9"));
        }
        if let Some(trace) = &self.frame_trace {
            if trace.is_empty() {
                return Err(err("frame_trace", "at least one frame"));
            }
            if let Some(i) = trace.iter().position(|&(_, s)| s == 0) {
                return Err(ConfigError {
                    key: "frame_trace",
                    allowed: format!("sizes > 0 bytes (frame {i} has size 0)"),
                });
            }
        }
        if self.tracking_hz == 0 || self.tracking_hz > 10_000 {
            return Err(err("tracking_hz", "1..=10000"));
        }
        match &self.tracking {
            TrackingSource::Synthetic { speed_deg_s } => {
                if !(speed_deg_s.is_finite() && (0.0..=3600.0).contains(speed_deg_s)) {
                    return Err(err("tracking.speed_deg_s", "a number in 0..=3600"));
                }
            }
            TrackingSource::Trace(rows) => {
                if rows.is_empty() {
                    return Err(err("tracking trace", "at least one row"));
                }
                for (i, r) in rows.iter().enumerate() {
                    let finite = r.t_s.is_finite()
                        && r.yaw_rad.is_finite()
                        && r.pitch_rad.is_finite()
                        && r.roll_rad.is_finite();
                    if !finite {
                        return Err(ConfigError {
                            key: "tracking trace",
                            allowed: format!("finite numbers (row {i} is not)"),
                        });
                    }
                    if i > 0 && r.t_s < rows[i - 1].t_s {
                        return Err(ConfigError {
                            key: "tracking trace",
                            allowed: format!("rows sorted by time_s (row {i} goes back)"),
                        });
                    }
                }
            }
        }
        if self.buffer_bytes == 0 {
            return Err(err("buffer_bytes", "> 0"));
        }
        if self.deadline_us == 0 {
            return Err(err("deadline_us", "> 0"));
        }
        if self.processing_delay_us > MAX_PROCESSING_DELAY_US {
            return Err(err("processing_delay_us", "0..=60000000"));
        }
        if self.max_datagram_bytes < MIN_DATAGRAM_BYTES {
            return Err(ConfigError {
                key: "max_datagram_bytes",
                allowed: format!(">= {MIN_DATAGRAM_BYTES}"),
            });
        }
        Ok(())
    }

    /// Clamp every value into its allowed range (used by `Endpoint::new`, which cannot fail).
    pub(crate) fn clamped(mut self) -> Self {
        self.video_bitrate_bps = self.video_bitrate_bps.max(1);
        self.fps = self.fps.clamp(1, 1000);
        if !self.frame_size_sigma.is_finite() {
            self.frame_size_sigma = 0.0;
        }
        self.frame_size_sigma = self.frame_size_sigma.clamp(0.0, 3.0);
        if !self.keyframe_factor.is_finite() {
            self.keyframe_factor = MAX_KEYFRAME_FACTOR;
        }
        self.keyframe_factor = self.keyframe_factor.clamp(1.0, MAX_KEYFRAME_FACTOR);
        if let Some(t) = &mut self.frame_trace {
            t.iter_mut().for_each(|e| e.1 = e.1.max(1));
            if t.is_empty() {
                self.frame_trace = None;
            }
        }
        self.tracking_hz = self.tracking_hz.clamp(1, 10_000);
        self.tracking = match self.tracking {
            TrackingSource::Synthetic { speed_deg_s } => TrackingSource::Synthetic {
                speed_deg_s: if speed_deg_s.is_finite() {
                    speed_deg_s.clamp(0.0, 3600.0)
                } else {
                    0.0
                },
            },
            TrackingSource::Trace(mut rows) => {
                rows.retain(|r| {
                    r.t_s.is_finite()
                        && r.yaw_rad.is_finite()
                        && r.pitch_rad.is_finite()
                        && r.roll_rad.is_finite()
                });
                rows.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
                if rows.is_empty() {
                    TrackingSource::Synthetic { speed_deg_s: 0.0 }
                } else {
                    TrackingSource::Trace(rows)
                }
            }
        };
        self.buffer_bytes = self.buffer_bytes.max(1);
        self.deadline_us = self.deadline_us.max(1);
        self.processing_delay_us = self.processing_delay_us.min(MAX_PROCESSING_DELAY_US);
        self.max_datagram_bytes = self.max_datagram_bytes.max(MIN_DATAGRAM_BYTES);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid() {
        assert_eq!(Config::default().validate(), Ok(()));
    }

    #[test]
    fn bad_values_name_their_key() {
        let c = Config {
            keyframe_factor: 12.0,
            ..Config::default()
        };
        assert_eq!(c.validate().unwrap_err().key, "keyframe_factor");
        let c = Config {
            fps: 0,
            ..Config::default()
        };
        assert_eq!(c.validate().unwrap_err().key, "fps");
        let c = Config {
            max_datagram_bytes: 10,
            ..Config::default()
        };
        assert_eq!(c.validate().unwrap_err().key, "max_datagram_bytes");
    }

    #[test]
    fn clamped_is_valid() {
        let c = Config {
            keyframe_factor: 50.0,
            fps: 0,
            tracking_hz: 0,
            frame_size_sigma: f64::NAN,
            max_datagram_bytes: 0,
            ..Config::default()
        }
        .clamped();
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.keyframe_factor, 9.0);
    }
}
