//! quinn 0.11's RTT estimator (`RttEstimator` in quinn-proto's `connection/paths.rs`, RFC 9002
//! section 5). Time is ns.

/// quinn's `TransportConfig::initial_rtt` default (RFC 9002: 333 ms).
pub const INITIAL_RTT_NS: u64 = 333_000_000;
/// RFC 9002 kGranularity, quinn's `TIMER_GRANULARITY`.
pub const GRANULARITY_NS: u64 = 1_000_000;

#[derive(Debug, Clone)]
pub struct Rtt {
    latest: u64,
    smoothed: Option<u64>,
    var: u64,
    min: u64,
}

impl Default for Rtt {
    fn default() -> Self {
        Rtt {
            latest: INITIAL_RTT_NS,
            smoothed: None,
            var: INITIAL_RTT_NS / 2,
            min: INITIAL_RTT_NS,
        }
    }
}

impl Rtt {
    pub fn get(&self) -> u64 {
        self.smoothed.unwrap_or(self.latest)
    }

    pub fn conservative(&self) -> u64 {
        self.get().max(self.latest)
    }

    pub fn pto_base(&self) -> u64 {
        self.get() + (4 * self.var).max(GRANULARITY_NS)
    }

    pub fn has_sample(&self) -> bool {
        self.smoothed.is_some()
    }

    pub fn update(&mut self, ack_delay: u64, rtt: u64) {
        self.latest = rtt;
        self.min = self.min.min(rtt);
        if let Some(smoothed) = self.smoothed {
            let adjusted = if self.min + ack_delay <= self.latest {
                self.latest - ack_delay
            } else {
                self.latest
            };
            let var_sample = smoothed.abs_diff(adjusted);
            self.var = (3 * self.var + var_sample) / 4;
            self.smoothed = Some((7 * smoothed + adjusted) / 8);
        } else {
            self.smoothed = Some(rtt);
            self.var = rtt / 2;
            self.min = rtt;
        }
    }
}
