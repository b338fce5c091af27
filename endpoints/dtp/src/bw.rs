//! The sender's bandwidth estimate for Eq. 1: the largest delivery rate measured over the
//! last `window` intervals (a windowed maximum, like BBR's bottleneck-bandwidth filter that
//! DTP takes its estimate from). The shell feeds the cumulative bytes quinn accepted; while
//! the sender is backlogged (quinn's send window full), that rate is the delivery rate. An
//! interval in which the sender was not backlogged only counts if it raises the estimate
//! (an application-limited rate says nothing about the path's limit).

use std::collections::VecDeque;

#[derive(Debug, Clone)]
pub struct BwEstimator {
    interval_us: u64,
    window: usize,
    initial_bytes_per_s: f64,
    start: Option<(u64, u64)>,
    backlogged: bool,
    rates: VecDeque<f64>,
}

impl BwEstimator {
    /// `initial_bytes_per_s` is the estimate until the first interval was measured.
    pub fn new(interval_us: u64, window: usize, initial_bytes_per_s: f64) -> Self {
        BwEstimator {
            interval_us: interval_us.max(1),
            window: window.max(1),
            initial_bytes_per_s,
            start: None,
            backlogged: true,
            rates: VecDeque::new(),
        }
    }

    /// `total_bytes`: cumulative bytes handed to the transport by `now_us`; `backlogged`:
    /// whether the sender had more to send than the transport took since the last call.
    pub fn sample(&mut self, now_us: u64, total_bytes: u64, backlogged: bool) {
        self.backlogged &= backlogged;
        let Some((t0, b0)) = self.start else {
            self.start = Some((now_us, total_bytes));
            return;
        };
        let dt = now_us.saturating_sub(t0);
        if dt < self.interval_us {
            return;
        }
        let rate = total_bytes.saturating_sub(b0) as f64 / (dt as f64 / 1e6);
        if self.backlogged || rate > self.estimate() {
            self.rates.push_back(rate);
        } else {
            self.rates.push_back(f64::NAN); // ages the window without a sample
        }
        while self.rates.len() > self.window {
            self.rates.pop_front();
        }
        self.start = Some((now_us, total_bytes));
        self.backlogged = true;
    }

    /// Bytes per second.
    pub fn estimate(&self) -> f64 {
        let m = self
            .rates
            .iter()
            .copied()
            .filter(|r| r.is_finite())
            .fold(f64::NAN, f64::max);
        if m.is_finite() && m > 0.0 {
            m
        } else {
            self.initial_bytes_per_s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_a_backlogged_rate_and_forgets_after_the_window() {
        let mut e = BwEstimator::new(100_000, 3, 1e6);
        assert_eq!(e.estimate(), 1e6);
        let mut bytes = 0;
        for i in 0..=5u64 {
            e.sample(i * 100_000, bytes, true);
            bytes += 500_000; // 5 MB/s
        }
        assert!((e.estimate() - 5e6).abs() < 1.0, "{}", e.estimate());
        for i in 6..=9u64 {
            e.sample(i * 100_000, bytes, true);
            bytes += 200_000; // 2 MB/s
        }
        assert!((e.estimate() - 2e6).abs() < 1.0, "{}", e.estimate());
    }

    #[test]
    fn an_app_limited_interval_does_not_lower_the_estimate() {
        let mut e = BwEstimator::new(100_000, 3, 1e6);
        e.sample(0, 0, true);
        e.sample(100_000, 800_000, true); // 8 MB/s
        e.sample(200_000, 810_000, false); // app limited: 0.1 MB/s
        e.sample(300_000, 820_000, false);
        assert!((e.estimate() - 8e6).abs() < 1.0);
        e.sample(400_000, 830_000, false); // the 8 MB/s sample aged out: back to initial
        assert_eq!(e.estimate(), 1e6);
    }
}
