//! quinn 0.11's token-bucket pacer, re-stated from quinn-proto 0.11.19
//! (`src/connection/pacing.rs`): capacity = cwnd × 2 ms / sRTT clamped to 10..256 MTU,
//! refill at 1.25 × cwnd per sRTT, and the wake-up at 4/5 of the refill time. Time is ns.

/// quinn's `BURST_INTERVAL_NANOS`.
const BURST_INTERVAL_NS: u128 = 2_000_000;
/// quinn's `MIN_BURST_SIZE` / `MAX_BURST_SIZE`, in MTUs.
pub const MIN_BURST_MTUS: u64 = 10;
const MAX_BURST_MTUS: u64 = 256;

#[derive(Debug, Clone)]
pub struct Pacer {
    capacity: u64,
    last_window: u64,
    last_mtu: u64,
    tokens: u64,
    prev_ns: u64,
}

pub fn optimal_capacity(srtt_ns: u64, window: u64, mtu: u64) -> u64 {
    let rtt = (srtt_ns as u128).max(1);
    let cap = ((window as u128 * BURST_INTERVAL_NS) / rtt) as u64;
    cap.clamp(MIN_BURST_MTUS * mtu, MAX_BURST_MTUS * mtu)
}

impl Pacer {
    pub fn new(srtt_ns: u64, window: u64, mtu: u64, now_ns: u64) -> Self {
        let capacity = optimal_capacity(srtt_ns, window, mtu);
        Pacer {
            capacity,
            last_window: window,
            last_mtu: mtu,
            tokens: capacity,
            prev_ns: now_ns,
        }
    }

    pub fn on_transmit(&mut self, bytes: u64) {
        self.tokens = self.tokens.saturating_sub(bytes);
    }

    /// None: send now; Some(t): call again at `t`.
    pub fn delay(
        &mut self,
        srtt_ns: u64,
        bytes_to_send: u64,
        mtu: u64,
        window: u64,
        now_ns: u64,
    ) -> Option<u64> {
        if window != self.last_window || mtu != self.last_mtu {
            self.capacity = optimal_capacity(srtt_ns, window, mtu);
            self.tokens = self.capacity.min(self.tokens);
            self.last_window = window;
            self.last_mtu = mtu;
        }
        if self.tokens >= bytes_to_send {
            return None;
        }
        if window > u64::from(u32::MAX) || srtt_ns == 0 {
            return None;
        }
        let elapsed_ns = now_ns.saturating_sub(self.prev_ns);
        let elapsed_rtts = elapsed_ns as f64 / srtt_ns as f64;
        let new_tokens = window as f64 * 1.25 * elapsed_rtts;
        self.tokens = self
            .tokens
            .saturating_add(new_tokens as u64)
            .min(self.capacity);
        self.prev_ns = now_ns;
        if self.tokens >= bytes_to_send {
            return None;
        }
        let unscaled = srtt_ns as u128 * (bytes_to_send.max(self.capacity) - self.tokens) as u128
            / window as u128;
        Some(self.prev_ns + (unscaled as u64 / 5) * 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_is_two_ms_of_window_at_least_ten_mtu() {
        // 2 MB window at 20 ms: 2 ms worth = 200 kB, within 10..256 × 1452
        assert_eq!(optimal_capacity(20_000_000, 2_000_000, 1452), 200_000);
        // small window: floor of 10 MTU
        assert_eq!(optimal_capacity(20_000_000, 100_000, 1452), 14_520);
        // huge window: ceiling of 256 MTU
        assert_eq!(optimal_capacity(1_000_000, 1 << 30, 1452), 256 * 1452);
    }

    #[test]
    fn burst_then_rate_limited() {
        let (rtt, win, mtu) = (20_000_000u64, 600_000u64, 1452u64);
        let mut p = Pacer::new(rtt, win, mtu, 0);
        let cap = optimal_capacity(rtt, win, mtu);
        // at one instant, at most `capacity` bytes leave
        let mut sent = 0;
        while p.delay(rtt, mtu, mtu, win, 0).is_none() {
            p.on_transmit(mtu);
            sent += mtu;
        }
        assert!(sent <= cap + mtu && sent + mtu > cap, "{sent} vs {cap}");
        // over 200 ms the rate is about 1.25 × cwnd / rtt (plus the first burst)
        let mut now = 0;
        let mut bytes = 0;
        while now < 200_000_000 {
            match p.delay(rtt, mtu, mtu, win, now) {
                None => {
                    p.on_transmit(mtu);
                    bytes += mtu;
                }
                Some(t) => now = t.max(now + 1),
            }
        }
        let rate = bytes as f64 / 0.2;
        let want = 1.25 * win as f64 / 0.02;
        assert!((rate / want - 1.0).abs() < 0.1, "{rate} vs {want}");
    }
}
