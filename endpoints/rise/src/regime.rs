//! Regime diagnostics of the sender: how long it was transport-limited and how full B was.
//!
//! quinn 0.11 does not expose bytes in flight or whether its congestion window or pacer holds
//! data back. What we can see is our own hand-over: the event loop gives quinn's (about
//! one-datagram) buffer the next datagram as soon as it has room. **Transport-limited** time is
//! time during which a datagram was waiting for room in quinn's buffer (handed to
//! `send_datagram_wait` and not yet taken), i.e. quinn had not yet packetised the previous one
//! because its congestion window or pacer was full, or because the send path itself was busy
//! (a burst of fragments draining at CPU speed also counts, for tens of µs per datagram). The
//! state is read after each hand-over attempt and holds until the next loop iteration.
//!
//! B occupancy (`pending_bytes` of the core's channels) is integrated over time between loop
//! iterations: every 100 ms row holds the interval's time-weighted mean and its maximum. An
//! instantaneous sample would be useless here: the 100 ms timer is phase-locked to the frame
//! ticks (both start together), so it would always catch B right after a frame was enqueued.

/// One `sender.csv` row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SenderSample {
    pub time_us: u64,
    /// Time-weighted mean of B's occupancy over the interval since the previous row.
    pub queued_bytes_mean: usize,
    pub queued_bytes_max: usize,
    /// Cumulative transport-limited time since the start, µs.
    pub limited_us: u64,
}

#[derive(Debug, Default)]
pub struct Regime {
    since_us: Option<u64>,
    limited: bool,
    limited_us: u64,
    queued: usize,
    interval_start_us: Option<u64>,
    /// Byte-µs of occupancy in the current interval.
    interval_area: u128,
    interval_max: usize,
    samples: Vec<usize>,
    run_max: usize,
}

/// Over a whole run (summary.json); analysis/ recomputes it after the warm-up from the CSV.
/// p50/p90 are over the 100 ms intervals' time-weighted means.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RegimeSummary {
    pub limited_us: u64,
    pub queued_p50: usize,
    pub queued_p90: usize,
    pub queued_max: usize,
}

impl Regime {
    /// The state after a hand-over attempt at `now_us`: `limited` if a datagram waits for room
    /// in quinn's buffer; `queued_bytes` what the channels hold.
    pub fn observe(&mut self, now_us: u64, limited: bool, queued_bytes: usize) {
        if let Some(t) = self.since_us {
            let dt = now_us.saturating_sub(t);
            if self.limited {
                self.limited_us += dt;
            }
            self.interval_area += self.queued as u128 * dt as u128;
        }
        self.interval_start_us.get_or_insert(now_us);
        self.since_us = Some(now_us);
        self.limited = limited;
        self.queued = queued_bytes;
        self.interval_max = self.interval_max.max(queued_bytes);
        self.run_max = self.run_max.max(queued_bytes);
    }

    /// A row at `now_us` (the current state counts up to now); starts a new interval.
    pub fn sample(&mut self, now_us: u64, queued_bytes: usize) -> SenderSample {
        self.observe(now_us, self.limited, queued_bytes);
        let span = now_us.saturating_sub(self.interval_start_us.unwrap_or(now_us));
        let mean = if span > 0 {
            (self.interval_area / span as u128) as usize
        } else {
            queued_bytes
        };
        let s = SenderSample {
            time_us: now_us,
            queued_bytes_mean: mean,
            queued_bytes_max: self.interval_max,
            limited_us: self.limited_us,
        };
        self.samples.push(mean);
        self.interval_max = queued_bytes;
        self.interval_area = 0;
        self.interval_start_us = Some(now_us);
        s
    }

    pub fn summary(&self) -> RegimeSummary {
        let mut v = self.samples.clone();
        v.sort_unstable();
        // nearest rank
        let q = |p: f64| -> usize {
            if v.is_empty() {
                return 0;
            }
            let k = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
            v[k - 1]
        };
        RegimeSummary {
            limited_us: self.limited_us,
            queued_p50: q(0.5),
            queued_p90: q(0.9),
            queued_max: self.run_max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limited_time_is_integrated_until_the_next_observation() {
        let mut r = Regime::default();
        r.observe(0, false, 0);
        r.observe(100, true, 5000); // limited from 100 ...
        r.observe(350, true, 9000);
        r.observe(400, false, 100); // ... to 400
        let s = r.sample(1000, 100);
        assert_eq!(s.limited_us, 300);
        assert_eq!(s.queued_bytes_max, 9000);
        r.observe(1000, true, 0);
        let s = r.sample(1500, 0); // still limited: counts up to the sample
        assert_eq!(s.limited_us, 800);
        assert_eq!(
            s.queued_bytes_max, 100,
            "a new interval starts at the last sample"
        );
    }

    #[test]
    fn occupancy_is_time_weighted_not_sampled() {
        // a frame of 100 kB enqueued every 33 ms drains in 2 ms: a sample taken right after
        // an enqueue would say 100 kB; the time-weighted mean says ~6 kB
        let mut r = Regime::default();
        let mut t = 0;
        for _ in 0..3 {
            r.observe(t, true, 100_000);
            r.observe(t + 2_000, false, 0);
            t += 33_333;
        }
        let s = r.sample(t, 100_000);
        assert_eq!(s.queued_bytes_mean, 3 * 100_000 * 2_000 / t as usize);
        assert_eq!(s.queued_bytes_max, 100_000);
        assert_eq!(s.limited_us, 6_000);
    }

    #[test]
    fn percentiles_are_over_interval_means_and_max_over_everything() {
        let mut r = Regime::default();
        for (i, b) in [10, 20, 30, 40, 50, 60, 70, 80, 90, 100].iter().enumerate() {
            let t0 = i as u64 * 100;
            r.observe(t0, false, *b);
            r.observe(t0 + 99, false, 5000); // a 1 µs burst at the end of each interval
            r.sample(t0 + 100, *b);
        }
        let s = r.summary();
        // each interval: (b × 99 + 5000 × 1) / 100
        let mean = |b: usize| (b * 99 + 5000) / 100;
        assert_eq!((s.queued_p50, s.queued_p90), (mean(50), mean(90)));
        assert_eq!(s.queued_max, 5000);
    }
}
