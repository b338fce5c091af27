//! This endpoint's own head orientation (3DoF), sampled at the tracking ticks.
//!
//! Synthetic movement (seeded, smooth, no teleports): the view direction (yaw, pitch) moves at
//! a constant angular speed `speed_deg_s` on the unit sphere along a heading ψ (direction of
//! travel in the tangent plane, 0 = increasing yaw). The heading performs a random walk,
//! `dψ = N(0, TURN_SIGMA_RAD_PER_SQRT_S² · dt)`, so the path curves smoothly. Pitch is kept
//! within ±`MAX_PITCH_RAD` (60°) by reflecting the heading at the bound. Roll is a slow
//! bounded sway, `ROLL_AMPLITUDE_RAD · sin(2π · 0.1 Hz · t + φ)`, φ from the seed. Yaw is
//! wrapped into (−π, π]. Per step: pitch += d·sin ψ, yaw += d·cos ψ / cos(pitch), d = ω·dt,
//! which moves the view direction by the angle d.
//!
//! Trace replay: the row with the largest `t_s` ≤ the time since start (sample and hold),
//! looping with period `last.t_s − first.t_s + last row gap` (the gap is the last inter-row
//! interval, or 1 / tracking_hz for a single row).

use crate::config::{TrackingRow, TrackingSource};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use std::f64::consts::PI;

/// Standard deviation of the heading random walk, rad per √s.
pub const TURN_SIGMA_RAD_PER_SQRT_S: f64 = 1.5;
/// Bound of the synthetic pitch, rad (60°).
pub const MAX_PITCH_RAD: f64 = PI / 3.0;
/// Amplitude of the synthetic roll sway, rad (about 5.7°).
pub const ROLL_AMPLITUDE_RAD: f64 = 0.1;
/// Frequency of the synthetic roll sway, Hz.
pub const ROLL_FREQ_HZ: f64 = 0.1;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Orientation {
    pub yaw_rad: f64,
    pub pitch_rad: f64,
    pub roll_rad: f64,
}

pub enum Tracker {
    Synthetic {
        speed_rad_s: f64,
        yaw: f64,
        pitch: f64,
        heading: f64,
        roll_phase: f64,
        t_s: f64,
    },
    Trace {
        rows: Vec<TrackingRow>,
        period_s: f64,
    },
}

fn wrap_pi(a: f64) -> f64 {
    let mut x = (a + PI).rem_euclid(2.0 * PI) - PI;
    if x <= -PI {
        x += 2.0 * PI;
    }
    x
}

impl Tracker {
    pub fn new(src: &TrackingSource, tracking_hz: u32, rng: &mut ChaCha8Rng) -> Self {
        match src {
            TrackingSource::Synthetic { speed_deg_s } => Tracker::Synthetic {
                speed_rad_s: speed_deg_s.to_radians(),
                yaw: rng.gen_range(-PI..PI),
                pitch: 0.0,
                heading: rng.gen_range(-PI..PI),
                roll_phase: rng.gen_range(0.0..2.0 * PI),
                t_s: 0.0,
            },
            TrackingSource::Trace(rows) => {
                let first = rows.first().map_or(0.0, |r| r.t_s);
                let last = rows.last().map_or(0.0, |r| r.t_s);
                let gap = if rows.len() >= 2 {
                    rows[rows.len() - 1].t_s - rows[rows.len() - 2].t_s
                } else {
                    1.0 / tracking_hz.max(1) as f64
                };
                let gap = if gap > 0.0 {
                    gap
                } else {
                    1.0 / tracking_hz.max(1) as f64
                };
                Tracker::Trace {
                    rows: rows.clone(),
                    period_s: (last - first) + gap,
                }
            }
        }
    }

    /// Advance the synthetic movement by `dt_s` (no-op for traces).
    pub fn step(&mut self, dt_s: f64, rng: &mut ChaCha8Rng) {
        if let Tracker::Synthetic {
            speed_rad_s,
            yaw,
            pitch,
            heading,
            t_s,
            ..
        } = self
        {
            let n: f64 = StandardNormal.sample(rng);
            *heading = wrap_pi(*heading + n * TURN_SIGMA_RAD_PER_SQRT_S * dt_s.sqrt());
            let d = *speed_rad_s * dt_s;
            let mut p = *pitch + d * heading.sin();
            if p.abs() > MAX_PITCH_RAD {
                p = p.signum() * (2.0 * MAX_PITCH_RAD - p.abs());
                *heading = wrap_pi(-*heading);
            }
            *yaw = wrap_pi(*yaw + d * heading.cos() / p.cos());
            *pitch = p;
            *t_s += dt_s;
        }
    }

    /// The orientation now; `elapsed_s` is the time since the endpoint started (traces).
    pub fn orientation(&self, elapsed_s: f64) -> Orientation {
        match self {
            Tracker::Synthetic {
                yaw,
                pitch,
                roll_phase,
                t_s,
                ..
            } => Orientation {
                yaw_rad: *yaw,
                pitch_rad: *pitch,
                roll_rad: ROLL_AMPLITUDE_RAD * (2.0 * PI * ROLL_FREQ_HZ * t_s + roll_phase).sin(),
            },
            Tracker::Trace { rows, period_s } => {
                let Some(first) = rows.first() else {
                    return Orientation {
                        yaw_rad: 0.0,
                        pitch_rad: 0.0,
                        roll_rad: 0.0,
                    };
                };
                let t = first.t_s + elapsed_s.max(0.0).rem_euclid(*period_s);
                let i = rows.partition_point(|r| r.t_s <= t).saturating_sub(1);
                let r = rows[i];
                Orientation {
                    yaw_rad: r.yaw_rad,
                    pitch_rad: r.pitch_rad,
                    roll_rad: r.roll_rad,
                }
            }
        }
    }
}

/// Unit view direction of a (yaw, pitch) orientation.
pub fn view_direction(o: &Orientation) -> [f64; 3] {
    [
        o.pitch_rad.cos() * o.yaw_rad.cos(),
        o.pitch_rad.cos() * o.yaw_rad.sin(),
        o.pitch_rad.sin(),
    ]
}

/// Geodesic angle between two 3DoF orientations (intrinsic Z-Y-X yaw, pitch, roll), rad.
pub fn geodesic_angle_rad(a: &Orientation, b: &Orientation) -> f64 {
    let qa = quat(a);
    let qb = quat(b);
    let dot = (qa[0] * qb[0] + qa[1] * qb[1] + qa[2] * qb[2] + qa[3] * qb[3]).abs();
    2.0 * dot.min(1.0).acos()
}

fn quat(o: &Orientation) -> [f64; 4] {
    let (sy, cy) = (o.yaw_rad / 2.0).sin_cos();
    let (sp, cp) = (o.pitch_rad / 2.0).sin_cos();
    let (sr, cr) = (o.roll_rad / 2.0).sin_cos();
    [
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn angle_between(a: [f64; 3], b: [f64; 3]) -> f64 {
        let d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        d.clamp(-1.0, 1.0).acos()
    }

    #[test]
    fn synthetic_moves_at_the_configured_speed_without_jumps() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut t = Tracker::new(
            &TrackingSource::Synthetic { speed_deg_s: 90.0 },
            60,
            &mut rng,
        );
        let dt = 1.0 / 60.0;
        let expect = 90f64.to_radians() * dt;
        let mut prev = view_direction(&t.orientation(0.0));
        let mut sum = 0.0;
        let n = 60 * 60;
        for i in 0..n {
            t.step(dt, &mut rng);
            let o = t.orientation(i as f64 * dt);
            assert!(o.pitch_rad.abs() <= MAX_PITCH_RAD + 1e-9);
            assert!(o.yaw_rad > -PI - 1e-12 && o.yaw_rad <= PI + 1e-12);
            let v = view_direction(&o);
            let moved = angle_between(prev, v);
            // no teleports: never more than the speed allows (reflections at the pitch bound
            // may move less)
            assert!(
                moved < 1.05 * expect,
                "step {i}: moved {moved} want {expect}"
            );
            sum += moved;
            prev = v;
        }
        let mean = sum / n as f64;
        assert!(
            (mean / expect - 1.0).abs() < 0.05,
            "mean step {mean} want {expect}"
        );
    }

    #[test]
    fn same_seed_same_path() {
        let path = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut t = Tracker::new(
                &TrackingSource::Synthetic { speed_deg_s: 30.0 },
                60,
                &mut rng,
            );
            (0..100)
                .map(|_| {
                    t.step(1.0 / 60.0, &mut rng);
                    t.orientation(0.0).yaw_rad
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(path(5), path(5));
        assert_ne!(path(5), path(6));
    }

    #[test]
    fn trace_sample_and_hold_loops() {
        let row = |t_s, yaw_rad| TrackingRow {
            t_s,
            yaw_rad,
            pitch_rad: 0.0,
            roll_rad: 0.0,
        };
        let rows = vec![row(1.0, 0.1), row(1.5, 0.2), row(2.0, 0.3)];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let t = Tracker::new(&TrackingSource::Trace(rows), 60, &mut rng);
        // period = 1.0 + 0.5
        assert_eq!(t.orientation(0.0).yaw_rad, 0.1);
        assert_eq!(t.orientation(0.6).yaw_rad, 0.2);
        assert_eq!(t.orientation(1.2).yaw_rad, 0.3);
        assert_eq!(t.orientation(1.5).yaw_rad, 0.1);
        assert_eq!(t.orientation(2.1).yaw_rad, 0.2);
    }

    #[test]
    fn geodesic_angle_of_pure_yaw() {
        let a = Orientation {
            yaw_rad: 0.0,
            pitch_rad: 0.0,
            roll_rad: 0.0,
        };
        let b = Orientation { yaw_rad: 0.5, ..a };
        assert!((geodesic_angle_rad(&a, &b) - 0.5).abs() < 1e-9);
        assert!(geodesic_angle_rad(&a, &a) < 1e-6);
    }
}
