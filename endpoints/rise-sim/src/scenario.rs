//! Runs described the way scenarios describe them: a paper setting, a scheme, the uplink's loss,
//! queue and policer. Defaults are quick.yaml's (sources there and in SPEC-rise.md).

use crate::cc::CcKind;
use crate::conn::Feed;
use crate::link::{Policer, LINK_MTU_BYTES};
use crate::run::{RunConfig, SideConfig};
use linkem::config::{
    DirectionConfig, DropPolicy, LossConfig, QueueConfig, QueueLimit, RateConfig,
};
use rise_core::{Config, FifoDrop, Role, TrackingSource};

/// SPEC-rise.md, settings table (paper section 4.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setting {
    pub name: &'static str,
    pub up_mbps: f64,
    pub down_mbps: f64,
    pub video_mbps: f64,
    pub fps: u32,
}

pub const SETTINGS: [Setting; 3] = [
    Setting {
        name: "5G-FHD-Low",
        up_mbps: 20.0,
        down_mbps: 1000.0,
        video_mbps: 10.0,
        fps: 30,
    },
    Setting {
        name: "FB-4K-Low",
        up_mbps: 70.0,
        down_mbps: 1000.0,
        video_mbps: 30.0,
        fps: 30,
    },
    Setting {
        name: "FB-4K-High",
        up_mbps: 70.0,
        down_mbps: 1000.0,
        video_mbps: 40.0,
        fps: 60,
    },
];

pub fn setting(name: &str) -> Option<Setting> {
    SETTINGS.iter().copied().find(|s| s.name == name)
}

/// Which ends prioritise, and what the baseline is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Both ends: tracking > video > ACK.
    Pri,
    /// Neither: one FIFO with head drop at B in the channels, feeding quinn's small buffer
    /// (the rise binary's `--prio off`, its default `--fifo-drop head`: what priolab's real
    /// `nopri` runs).
    NoPri,
    /// Neither: one FIFO with tail drop at B in the channels (the rise binary's
    /// `--prio off --fifo-drop tail`).
    NoPriTail,
    /// Neither: vanilla quinn, datagrams straight into quinn's buffer of B bytes, oldest
    /// dropped first (SPEC-rise.md's "baseline QUIC").
    NoPriHead,
    /// Guest only.
    PriU,
    /// Host only.
    PriD,
}

impl Scheme {
    pub const ALL: [Scheme; 6] = [
        Scheme::Pri,
        Scheme::NoPri,
        Scheme::NoPriTail,
        Scheme::NoPriHead,
        Scheme::PriU,
        Scheme::PriD,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Pri => "pri",
            Scheme::NoPri => "nopri",
            Scheme::NoPriTail => "nopri-tail",
            Scheme::NoPriHead => "nopri-head",
            Scheme::PriU => "pri-u",
            Scheme::PriD => "pri-d",
        }
    }

    pub fn parse(s: &str) -> Option<Scheme> {
        Scheme::ALL.iter().copied().find(|x| x.as_str() == s)
    }

    fn prio(self, role: Role) -> bool {
        match self {
            Scheme::Pri => true,
            Scheme::NoPri | Scheme::NoPriTail | Scheme::NoPriHead => false,
            Scheme::PriU => role == Role::Guest,
            Scheme::PriD => role == Role::Host,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Loss {
    None,
    Iid {
        pct: f64,
    },
    /// Simple Gilbert model from mean loss and mean burst length (netem/resolve.py's
    /// conversion: r = 1/burst, p = r·loss/(1−loss), loss 100 % in bad, 0 % in good).
    GeMean {
        pct: f64,
        burst_pkts: f64,
    },
}

impl Loss {
    /// None at 0 %, iid without a burst length, else the mean-burst Gilbert model.
    pub fn from_pct(pct: f64, burst_pkts: Option<f64>) -> Loss {
        match burst_pkts {
            _ if pct <= 0.0 => Loss::None,
            Some(b) => Loss::GeMean { pct, burst_pkts: b },
            None => Loss::Iid { pct },
        }
    }

    fn linkem(&self) -> LossConfig {
        match *self {
            Loss::None => LossConfig::None,
            Loss::Iid { pct } => LossConfig::Iid { p: pct / 100.0 },
            Loss::GeMean { pct, burst_pkts } => {
                let mean = pct / 100.0;
                let r = 1.0 / burst_pkts;
                LossConfig::GilbertElliott {
                    p: (r * mean / (1.0 - mean)).min(1.0),
                    r,
                    h: 0.0,
                    k: 1.0,
                }
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub setting: Setting,
    pub scheme: Scheme,
    pub cc: CcKind,
    pub duration_s: f64,
    pub seed: u64,
    /// One-way delay each direction (quick.yaml: RTT 21 ms split evenly).
    pub delay_ms: f64,
    pub up_loss: Loss,
    pub down_loss: Loss,
    /// Uplink queue as a multiple of rate × RTT (quick.yaml: 1.0); the downlink keeps 1 BDP.
    pub up_queue_bdp: f64,
    pub up_queue_drop_head: bool,
    /// Replace the uplink shaper by a policer of the same rate with this bucket.
    pub up_policer_burst_bytes: Option<u64>,
    /// B (quick.yaml: quinn's default 1 MiB).
    pub buffer_bytes: usize,
    /// quick.yaml: 1500 (about one datagram).
    pub quinn_buffer_bytes: usize,
    pub keyframe_factor: f64,
    pub frame_size_sigma: f64,
    pub speed_deg_s: f64,
    pub deadline_ms: u64,
    pub max_retx: u32,
    /// quinn's path MTU once MTU discovery has run (its default upper bound 1452).
    /// assumption: discovery completes in the first RTTs, inside the warm-up.
    pub quic_mtu: u64,
    /// Frames displayed in the first `warmup_s` are left out of percentiles and rates.
    /// assumption: 3 s, the window the first real check used.
    pub warmup_s: f64,
    /// Each endpoint's thread time per received packet, µs (`RunConfig::rx_cost_ns`).
    /// Default 0: the endpoints take no CPU time.
    pub rx_cost_us: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            setting: SETTINGS[1],
            scheme: Scheme::Pri,
            cc: CcKind::Cubic,
            duration_s: 30.0,
            seed: 1,
            delay_ms: 10.5,
            up_loss: Loss::None,
            down_loss: Loss::None,
            up_queue_bdp: 1.0,
            up_queue_drop_head: false,
            up_policer_burst_bytes: None,
            buffer_bytes: 1 << 20,
            quinn_buffer_bytes: 1500,
            keyframe_factor: 9.0,
            frame_size_sigma: 0.2,
            speed_deg_s: 40.0,
            deadline_ms: 1000,
            max_retx: 3,
            quic_mtu: 1452,
            warmup_s: 3.0,
            rx_cost_us: 0.0,
        }
    }
}

/// netem/resolve.py: ceil(factor × rate / 8 × RTT), at least one full frame.
pub fn bdp_queue_bytes(factor: f64, rate_mbps: f64, rtt_ms: f64) -> u64 {
    let limit = (factor * rate_mbps * 1e6 / 8.0 * rtt_ms / 1000.0).ceil() as u64;
    limit.max(LINK_MTU_BYTES + 14)
}

impl Params {
    pub fn rtt_ms(&self) -> f64 {
        2.0 * self.delay_ms
    }

    fn endpoint(&self, role: Role) -> SideConfig {
        let head = self.scheme == Scheme::NoPriHead;
        let endpoint = Config {
            role,
            video_bitrate_bps: (self.setting.video_mbps * 1e6) as u64,
            fps: self.setting.fps,
            frame_size_sigma: self.frame_size_sigma,
            keyframe_factor: self.keyframe_factor,
            frame_trace: None,
            tracking_hz: 60,
            tracking: TrackingSource::Synthetic {
                speed_deg_s: self.speed_deg_s,
            },
            prio: self.scheme.prio(role),
            buffer_bytes: self.buffer_bytes,
            // a non-prioritising end of Pri-U / Pri-D is the rise binary's default baseline
            fifo_drop: if self.scheme == Scheme::NoPriTail {
                FifoDrop::Tail
            } else {
                FifoDrop::Head
            },
            processing_delay_us: 0,
            deadline_us: self.deadline_ms * 1000,
            max_retx: self.max_retx,
            max_datagram_bytes: 1200,
            // assumption: the two ends draw from different streams of one run seed
            seed: self.seed * 2 + u64::from(role == Role::Guest),
        };
        SideConfig {
            endpoint,
            feed: if head { Feed::Vanilla } else { Feed::Channels },
            quinn_buffer_bytes: if head {
                self.buffer_bytes
            } else {
                self.quinn_buffer_bytes
            },
        }
    }

    fn direction(
        &self,
        rate_mbps: f64,
        queue_bdp: f64,
        head: bool,
        loss: &Loss,
    ) -> DirectionConfig {
        DirectionConfig {
            rate: RateConfig::Constant {
                rate_bps: (rate_mbps * 1e6) as u64,
            },
            delay_ns: (self.delay_ms * 1e6) as u64,
            jitter_ns: 0,
            jitter_reorder: false,
            loss: loss.linkem(),
            queue: Some(QueueConfig {
                limit: QueueLimit::Bytes(bdp_queue_bytes(queue_bdp, rate_mbps, self.rtt_ms())),
                drop: if head {
                    DropPolicy::Head
                } else {
                    DropPolicy::Tail
                },
            }),
        }
    }

    /// assumption: the phase between the two endpoints' clocks is uniform over one frame
    /// period, drawn from the seed (splitmix64), since the real stack's phase is set by process
    /// start and handshake timing, which nothing controls.
    pub fn host_start_offset_us(&self) -> u64 {
        let mut z = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        z % (1_000_000 / u64::from(self.setting.fps.max(1)))
    }

    pub fn run_config(&self) -> RunConfig {
        RunConfig {
            host: self.endpoint(Role::Host),
            guest: self.endpoint(Role::Guest),
            up: self.direction(
                self.setting.up_mbps,
                self.up_queue_bdp,
                self.up_queue_drop_head,
                &self.up_loss,
            ),
            up_policer: self.up_policer_burst_bytes.map(|b| Policer {
                rate_bps: (self.setting.up_mbps * 1e6) as u64,
                burst_bytes: b,
            }),
            down: self.direction(self.setting.down_mbps, 1.0, false, &self.down_loss),
            down_policer: None,
            cc: self.cc,
            quic_mtu: self.quic_mtu,
            duration_ns: (self.duration_s * 1e9) as u64,
            link_seed: self.seed,
            host_start_offset_us: self.host_start_offset_us(),
            // assumption: the handshake crossed the idle path, so it measured the base RTT
            handshake_rtt_ns: Some((self.rtt_ms() * 1e6) as u64),
            rx_cost_ns: (self.rx_cost_us * 1000.0) as u64,
        }
    }
}
