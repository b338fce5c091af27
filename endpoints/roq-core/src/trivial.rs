//! The paper's trivial rate controller ([RoQ §3.3]): five levels, 256, 512, 768, 1024
//! and 1280 kbit/s; the growth of the RTP queue (packets waiting to be handed to the
//! transport) decides: it grew → one level down, it shrank or stayed empty → one level up,
//! otherwise stay. The paper gives neither the interval nor the start level: assumption,
//! decide every `interval_us` (default 200 ms, SCReAM's RATE_ADJUST_INTERVAL) starting at the
//! lowest level.
//!
//! Decisions run on their own clock, `first_us + k · interval_us`, whenever the caller looks:
//! a late look decides once, and the next decision stays on the schedule. The caller chooses
//! `first_us` so that decisions never coincide with a frame's arrival (a real sender's
//! decision timer and frame clock are independent; on one virtual clock a decision at a
//! frame's instant would see every frame just queued, a random walk over frame sizes).

pub const LEVELS_BPS: [f64; 5] = [256_000.0, 512_000.0, 768_000.0, 1_024_000.0, 1_280_000.0];

#[derive(Debug, Clone)]
pub struct Trivial {
    pub interval_us: u64,
    level: usize,
    next_us: u64,              // when the next look is due
    last_queue: Option<usize>, // the queue's length at the previous look
}

impl Trivial {
    /// The first look (which only records the queue) is due at `first_us`.
    pub fn new(interval_us: u64, first_us: u64) -> Self {
        assert!(
            interval_us > 0,
            "the trivial controller's interval must be positive"
        );
        Trivial {
            interval_us,
            level: 0,
            next_us: first_us,
            last_queue: None,
        }
    }

    pub fn target_bitrate_bps(&self) -> f64 {
        LEVELS_BPS[self.level]
    }

    /// When the next look is due (the caller wakes for it).
    pub fn next_decision_us(&self) -> u64 {
        self.next_us
    }

    /// The RTP queue's length (bytes or packets) at `now_us`; decides if a look is due;
    /// returns the target.
    pub fn on_queue(&mut self, now_us: u64, queue_len: usize) -> f64 {
        if now_us < self.next_us {
            return self.target_bitrate_bps();
        }
        if let Some(q) = self.last_queue {
            if queue_len > q {
                self.level = self.level.saturating_sub(1);
            } else if queue_len < q || queue_len == 0 {
                self.level = (self.level + 1).min(LEVELS_BPS.len() - 1);
            }
        }
        self.last_queue = Some(queue_len);
        let missed = (now_us - self.next_us) / self.interval_us;
        self.next_us += (missed + 1) * self.interval_us;
        self.target_bitrate_bps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn climbs_on_an_empty_queue_and_falls_on_growth() {
        let mut c = Trivial::new(200_000, 0);
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

    #[test]
    fn decides_on_its_own_schedule_whenever_looked_at() {
        let mut c = Trivial::new(200_000, 20_000);
        c.on_queue(0, 0); // before the first look: nothing recorded
        assert_eq!(c.next_decision_us(), 20_000);
        c.on_queue(20_000, 3); // the first look records 3
        assert_eq!(
            (c.next_decision_us(), c.target_bitrate_bps()),
            (220_000, 256_000.0)
        );
        c.on_queue(223_000, 1); // 3 ms late: decides (shrank → up), the schedule stays
        assert_eq!(
            (c.next_decision_us(), c.target_bitrate_bps()),
            (420_000, 512_000.0)
        );
        c.on_queue(419_999, 0); // early: no decision
        assert_eq!(c.target_bitrate_bps(), 512_000.0);
        c.on_queue(1_050_000, 0); // three looks missed: one decision, the next on schedule
        assert_eq!(
            (c.next_decision_us(), c.target_bitrate_bps()),
            (1_220_000, 768_000.0)
        );
    }
}
