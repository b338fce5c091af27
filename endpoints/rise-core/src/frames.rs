//! Frame-size model of a CBR encoder, or replay of a frame-size trace.
//!
//! Model: the mean frame size is `bitrate / 8 / fps` bytes. A key frame is
//! `keyframe_factor × mean` (factor in 1..=9). The excess of a key frame over the mean,
//! `(factor − 1) × mean`, becomes a *debt* that the rate controller pays back over the
//! following **payback window of one second of frames** (`fps` frames): each delta frame's
//! target is `mean − debt_at_key / fps`, never below 10 % of the mean (any rest carries over).
//! The debt is capped at one second of 90 % of the mean so repeated key frames cannot starve
//! deltas forever. A delta frame's size is its target times a lognormal factor with
//! `σ = frame_size_sigma` and `μ = −σ²/2` (mean 1), so the rate over a window of a second or
//! more stays at the target.
//!
//! Every frame, model or trace, is capped at [`MAX_FRAME_BYTES`] (999,999 bytes: ringmaster's
//! decoder rejects frames of 1 MB or more), so at 30 Mbit/s and 30 fps a key frame is
//! 999,999 bytes, not 9 × 125 kB; the debt is the capped key frame's excess.
//!
//! Trace replay: `(type, size)` rows in a loop. Trace key frames are sent as key frames; a key
//! frame forced by the protocol (first frame, deadline) takes the size of the next trace row
//! or, if that row is a delta, the mean trace key-frame size (or `factor ×` the mean trace size
//! if the trace has no key frames).

use crate::config::{Config, FrameType, MAX_FRAME_BYTES};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};

/// Lower bound of a delta frame's target while paying back a key frame, as a fraction of the
/// mean frame size.
const MIN_DELTA_FRACTION: f64 = 0.1;

pub struct FrameSizer {
    mean_bytes: f64,
    keyframe_factor: f64,
    payback_frames: f64,
    lognormal: Option<LogNormal<f64>>,
    debt_bytes: f64,
    pay_per_frame_bytes: f64,
    trace: Option<Trace>,
}

struct Trace {
    rows: Vec<(FrameType, u32)>,
    next: usize,
    forced_key_bytes: u32,
}

impl FrameSizer {
    pub fn new(cfg: &Config) -> Self {
        let mean_bytes = cfg.video_bitrate_bps as f64 / 8.0 / cfg.fps as f64;
        let sigma = cfg.frame_size_sigma;
        let lognormal = (sigma > 0.0)
            .then(|| LogNormal::new(-sigma * sigma / 2.0, sigma).ok())
            .flatten();
        let trace = cfg.frame_trace.as_ref().map(|rows| {
            let keys: Vec<f64> = rows
                .iter()
                .filter(|r| r.0 == FrameType::Key)
                .map(|r| r.1 as f64)
                .collect();
            let forced = if keys.is_empty() {
                let mean = rows.iter().map(|r| r.1 as f64).sum::<f64>() / rows.len() as f64;
                mean * cfg.keyframe_factor
            } else {
                keys.iter().sum::<f64>() / keys.len() as f64
            };
            Trace {
                rows: rows.clone(),
                next: 0,
                forced_key_bytes: forced.round().clamp(1.0, MAX_FRAME_BYTES as f64) as u32,
            }
        });
        FrameSizer {
            mean_bytes,
            keyframe_factor: cfg.keyframe_factor,
            payback_frames: cfg.fps.max(1) as f64,
            lognormal,
            debt_bytes: 0.0,
            pay_per_frame_bytes: 0.0,
            trace,
        }
    }

    /// Mean frame size of the CBR model, bytes.
    pub fn mean_bytes(&self) -> f64 {
        self.mean_bytes
    }

    /// Type and size (bytes, ≥ 1) of the next frame; `force_key` makes it a key frame.
    pub fn next_frame(&mut self, force_key: bool, rng: &mut ChaCha8Rng) -> (FrameType, u32) {
        if let Some(t) = &mut self.trace {
            let (ty, size) = t.rows[t.next % t.rows.len()];
            t.next = (t.next + 1) % t.rows.len();
            return match (force_key, ty) {
                (true, FrameType::Delta) => (FrameType::Key, t.forced_key_bytes),
                _ => (ty, size.clamp(1, MAX_FRAME_BYTES)),
            };
        }
        if force_key {
            let size = (self.keyframe_factor * self.mean_bytes).min(MAX_FRAME_BYTES as f64);
            let cap = self.payback_frames * self.mean_bytes * (1.0 - MIN_DELTA_FRACTION);
            self.debt_bytes = (self.debt_bytes + size - self.mean_bytes).min(cap);
            self.pay_per_frame_bytes = self.debt_bytes / self.payback_frames;
            return (FrameType::Key, to_bytes(size));
        }
        let pay = self
            .pay_per_frame_bytes
            .min(self.debt_bytes)
            .min(self.mean_bytes * (1.0 - MIN_DELTA_FRACTION));
        self.debt_bytes -= pay;
        if self.debt_bytes <= 0.0 {
            self.debt_bytes = 0.0;
            self.pay_per_frame_bytes = 0.0;
        }
        let target = self.mean_bytes - pay;
        let spread = match &self.lognormal {
            Some(d) => d.sample(rng),
            None => {
                // keep the RNG stream independent of sigma
                let _: f64 = rng.gen();
                1.0
            }
        };
        (FrameType::Delta, to_bytes(target * spread))
    }
}

fn to_bytes(x: f64) -> u32 {
    if x.is_finite() {
        x.round().clamp(1.0, MAX_FRAME_BYTES as f64) as u32
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn cfg(sigma: f64) -> Config {
        Config {
            video_bitrate_bps: 24_000_000,
            fps: 30,
            frame_size_sigma: sigma,
            ..Config::default()
        }
    }

    #[test]
    fn key_frame_is_factor_times_mean_and_paid_back_within_a_second() {
        let c = cfg(0.0);
        let mut s = FrameSizer::new(&c);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(s.mean_bytes(), 100_000.0);
        let (t, k) = s.next_frame(true, &mut rng);
        assert_eq!((t, k), (FrameType::Key, 900_000));
        let mut total = k as u64;
        for _ in 1..30 {
            let (t, d) = s.next_frame(false, &mut rng);
            assert_eq!(t, FrameType::Delta);
            assert!(d < 100_000);
            total += d as u64;
        }
        // 30 frames including the key frame ≈ one second at 24 Mbit/s (the last payback
        // installment falls on frame 31).
        let one_second = 3_000_000u64;
        assert!(total.abs_diff(one_second) < 300_000, "total {total}");
        let (_, d) = s.next_frame(false, &mut rng);
        assert!(d < 100_000);
        let (_, d) = s.next_frame(false, &mut rng);
        assert_eq!(d, 100_000, "debt paid: back to the mean");
    }

    #[test]
    fn key_frames_are_capped_below_one_megabyte() {
        // 30 Mbit/s at 30 fps: 9 × 125 kB = 1.125 MB, above ringmaster's decoder limit
        let c = Config {
            video_bitrate_bps: 30_000_000,
            fps: 30,
            frame_size_sigma: 3.0,
            ..Config::default()
        };
        let mut s = FrameSizer::new(&c);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        assert_eq!(
            s.next_frame(true, &mut rng),
            (FrameType::Key, MAX_FRAME_BYTES)
        );
        // a wide lognormal spread never produces a frame the decoder would reject
        let max = (0..3000).map(|_| s.next_frame(false, &mut rng).1).max();
        assert_eq!(max, Some(MAX_FRAME_BYTES));
        // below the cap the factor is kept exactly
        let c = Config {
            video_bitrate_bps: 8_000_000,
            ..c
        };
        let mut s = FrameSizer::new(&c);
        assert_eq!(s.next_frame(true, &mut rng).1, 300_000);
        // trace frames are capped too
        let c = Config {
            frame_trace: Some(vec![(FrameType::Key, 2_000_000)]),
            ..c
        };
        let mut s = FrameSizer::new(&c);
        assert_eq!(s.next_frame(false, &mut rng).1, MAX_FRAME_BYTES);
    }

    #[test]
    fn long_run_rate_meets_target_with_spread_and_keys() {
        let c = cfg(0.5);
        let mut s = FrameSizer::new(&c);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 3000;
        let mut total = 0u64;
        for i in 0..n {
            total += s.next_frame(i % 300 == 0, &mut rng).1 as u64;
        }
        let rate_bps = total as f64 * 8.0 * 30.0 / n as f64;
        assert!((rate_bps / 24e6 - 1.0).abs() < 0.05, "rate {rate_bps}");
    }

    #[test]
    fn trace_replays_in_a_loop_and_forces_keys() {
        let c = Config {
            frame_trace: Some(vec![
                (FrameType::Key, 5000),
                (FrameType::Delta, 100),
                (FrameType::Delta, 200),
            ]),
            ..cfg(0.2)
        };
        let mut s = FrameSizer::new(&c);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let got: Vec<_> = (0..5).map(|_| s.next_frame(false, &mut rng)).collect();
        assert_eq!(
            got,
            vec![
                (FrameType::Key, 5000),
                (FrameType::Delta, 100),
                (FrameType::Delta, 200),
                (FrameType::Key, 5000),
                (FrameType::Delta, 100)
            ]
        );
        assert_eq!(s.next_frame(true, &mut rng), (FrameType::Key, 5000));
    }
}
