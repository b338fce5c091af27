//! The paper's trivial rate controller (seeds/003 §3.3): five levels, 256, 512, 768, 1024
//! and 1280 kbit/s; the growth of the RTP queue (packets waiting to be handed to the
//! transport) decides: it grew → one level down, it shrank or stayed empty → one level up,
//! otherwise stay. The paper gives neither the interval nor the start level: assumption,
//! decide every `interval_us` (default 200 ms, SCReAM's RATE_ADJUST_INTERVAL) starting at the
//! lowest level.

pub const LEVELS_BPS: [f64; 5] = [256_000.0, 512_000.0, 768_000.0, 1_024_000.0, 1_280_000.0];

#[derive(Debug, Clone)]
pub struct Trivial {
    pub interval_us: u64,
    level: usize,
    last: Option<(u64, usize)>, // (time, queue length then)
}

impl Trivial {
    pub fn new(interval_us: u64) -> Self {
        Trivial {
            interval_us,
            level: 0,
            last: None,
        }
    }

    pub fn target_bitrate_bps(&self) -> f64 {
        LEVELS_BPS[self.level]
    }

    /// The RTP queue's length (bytes or packets) at `now_us`; returns the target.
    pub fn on_queue(&mut self, now_us: u64, queue_len: usize) -> f64 {
        match self.last {
            None => self.last = Some((now_us, queue_len)),
            Some((t, q)) if now_us >= t + self.interval_us => {
                if queue_len > q {
                    self.level = self.level.saturating_sub(1);
                } else if queue_len < q || queue_len == 0 {
                    self.level = (self.level + 1).min(LEVELS_BPS.len() - 1);
                }
                self.last = Some((now_us, queue_len));
            }
            Some(_) => {}
        }
        self.target_bitrate_bps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn climbs_on_an_empty_queue_and_falls_on_growth() {
        let mut c = Trivial::new(200_000);
        let mut t = 0;
        for _ in 0..10 {
            c.on_queue(t, 0);
            t += 200_000;
        }
        assert_eq!(c.target_bitrate_bps(), 1_280_000.0);
        for q in [5, 10, 20] {
            c.on_queue(t, q);
            t += 200_000;
        }
        assert_eq!(c.target_bitrate_bps(), 512_000.0);
        c.on_queue(t, 20); // no change, not empty: stays
        assert_eq!(c.target_bitrate_bps(), 512_000.0);
        c.on_queue(t + 100_000, 0); // before the interval: no decision
        assert_eq!(c.target_bitrate_bps(), 512_000.0);
    }
}
