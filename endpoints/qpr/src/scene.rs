//! The scene: four point-cloud objects, five qualities each, 1 s segments ([QPR §IV-A],
//! Table 2), and the size of every (object, quality, segment).
//!
//! Sizes: Table 2 gives each bitrate as "mean ± x" Mbit/s. assumption: x is the standard
//! deviation of the per-segment bitrate (the paper does not say), so a segment's size is
//! `scale × (mean + x·z) × segment_s / 8` bytes with z ~ N(0, 1) drawn from the seed, the
//! object, the quality and the segment index (the same sizes for every scheme of a run),
//! clipped at 0.1 × mean. `scale` rescales the content with the link (workload README).

/// Table 2: mean bitrate (Mbit/s) per object (columns #1..#4) and quality (rows 1..5).
pub const BITRATE_MBPS: [[f64; 5]; 4] = [
    [2.40, 3.62, 5.81, 10.00, 18.00],
    [3.50, 5.03, 7.83, 13.63, 24.72],
    [4.48, 7.14, 12.08, 21.95, 40.35],
    [5.00, 8.65, 15.86, 30.16, 53.51],
];

/// Table 2: the "±" of every bitrate (Mbit/s), read as a per-segment standard deviation.
pub const BITRATE_SD_MBPS: [[f64; 5]; 4] = [
    [0.01, 0.01, 0.03, 0.07, 0.13],
    [0.03, 0.04, 0.05, 0.09, 0.24],
    [0.01, 0.01, 0.03, 0.07, 0.14],
    [0.03, 0.05, 0.11, 0.21, 0.37],
];

/// [QPR §IV-A]: "temporally split into one-second-long segments".
pub const SEGMENT_S: f64 = 1.0;

/// The content as the player and the server see it.
#[derive(Debug, Clone, Copy)]
pub struct Scene {
    pub scale: f64,
    pub seed: u64,
}

/// SplitMix64: a tiny, well-mixed hash for per-(object, quality, segment) draws.
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn unit(x: u64) -> f64 {
    // (0, 1]: never 0, so ln() below is finite
    ((x >> 11) as f64 + 1.0) / (1u64 << 53) as f64
}

/// A standard normal draw from a key (Box-Muller on two hashed uniforms).
pub fn normal(key: u64) -> f64 {
    let a = splitmix64(key);
    let b = splitmix64(a);
    (-2.0 * unit(a).ln()).sqrt() * (2.0 * std::f64::consts::PI * unit(b)).cos()
}

impl Scene {
    /// Mean bitrate (bit/s) of `object` at `quality` (0-based), rescaled.
    pub fn bitrate_bps(&self, object: usize, quality: usize) -> f64 {
        BITRATE_MBPS[object][quality] * 1e6 * self.scale
    }

    /// Bytes of segment `segment` of `object` at `quality` (0-based).
    pub fn size_bytes(&self, object: usize, quality: usize, segment: u64) -> u64 {
        let key = self.seed ^ (segment << 8) ^ ((object as u64) << 4) ^ quality as u64;
        let z = normal(splitmix64(key));
        let mean = BITRATE_MBPS[object][quality];
        let mbps = (mean + BITRATE_SD_MBPS[object][quality] * z).max(0.1 * mean);
        (mbps * 1e6 * self.scale * SEGMENT_S / 8.0).round().max(1.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_table_2_mean_and_spread() {
        let s = Scene {
            scale: 1.0,
            seed: 7,
        };
        for (o, row) in BITRATE_MBPS.iter().enumerate() {
            for (q, &mean) in row.iter().enumerate() {
                let n = 2000u64;
                let v: Vec<f64> = (0..n)
                    .map(|k| s.size_bytes(o, q, k) as f64 * 8.0 / 1e6)
                    .collect();
                let m = v.iter().sum::<f64>() / n as f64;
                let sd = (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64).sqrt();
                assert!(
                    (m - mean).abs() < 0.01 * mean,
                    "o{o} q{q}: mean {m} vs {mean}"
                );
                let want = BITRATE_SD_MBPS[o][q];
                assert!(
                    (sd - want).abs() < 0.15 * want + 1e-4,
                    "o{o} q{q}: sd {sd} vs {want}"
                );
            }
        }
    }

    #[test]
    fn sizes_are_deterministic_scaled_and_seeded() {
        let a = Scene {
            scale: 1.0,
            seed: 1,
        };
        let b = Scene {
            scale: 0.1,
            seed: 1,
        };
        let c = Scene {
            scale: 1.0,
            seed: 2,
        };
        assert_eq!(a.size_bytes(3, 4, 17), a.size_bytes(3, 4, 17));
        let r = b.size_bytes(3, 4, 17) as f64 / a.size_bytes(3, 4, 17) as f64;
        assert!((r - 0.1).abs() < 1e-3, "{r}");
        assert!((0..50).any(|k| a.size_bytes(0, 0, k) != c.size_bytes(0, 0, k)));
        // quality increases size for every object (Table 2 is monotone)
        for o in 0..4 {
            for q in 1..5 {
                assert!(a.bitrate_bps(o, q) > a.bitrate_bps(o, q - 1));
            }
        }
    }
}
