//! Deadline-aware adaptive redundancy ([DTP §III-C]), the decisions and the code.
//!
//! - Redundancy starts when the data left has less than two RTTs to its deadline (one RTT to
//!   detect a loss, one to retransmit): [`needs_redundancy`].
//! - A redundancy group protects the next `m` source symbols (packets) of the block with `n`
//!   parity symbols; any `m` of the `m + n` recover all. `m` is the largest value with
//!   `m × symbol / bandwidth + 2 × RTT < time left` (every packet of the group still meets
//!   the deadline), at least 1, and no more than the block has left (the paper pads a short
//!   group with empty packets and halves `m` when more than half would be empty; ending the
//!   group at the block's end sends no empty packet at all): [`group_size`].
//! - `n` covers the largest loss rate seen over the last 8 RTTs (BBR's cycle), `n = ⌈m × p⌉`,
//!   at least 1: [`parity_count`] with [`LossWindow`].
//! - Reed-Solomon over GF(2^8) (the `reed-solomon-erasure` crate): [`encode`], [`recover`];
//!   symbols shorter than the symbol size (a block's last) are zero-padded.

use reed_solomon_erasure::galois_8::ReedSolomon;
use std::collections::VecDeque;

/// GF(2^8) allows at most 256 shards; a group is kept well below.
pub const MAX_GROUP_SYMBOLS: usize = 64;
pub const MAX_PARITY: usize = 64;

/// Whether data with `time_left_us` to its deadline can no longer afford a retransmission.
pub fn needs_redundancy(time_left_us: f64, rtt_us: f64) -> bool {
    time_left_us < 2.0 * rtt_us
}

/// `m`: the largest group whose every packet still meets the deadline, in 1..=min(left,
/// MAX_GROUP_SYMBOLS). `bandwidth` ≤ 0 (unknown) counts as no transfer time.
pub fn group_size(
    time_left_us: f64,
    bandwidth_bytes_per_s: f64,
    rtt_us: f64,
    symbol_bytes: usize,
    symbols_left: usize,
) -> usize {
    let cap = symbols_left.clamp(1, MAX_GROUP_SYMBOLS);
    let per_symbol_us = if bandwidth_bytes_per_s > 0.0 {
        symbol_bytes as f64 / bandwidth_bytes_per_s * 1e6
    } else {
        0.0
    };
    let mut m = cap;
    while m > 1 && m as f64 * per_symbol_us + 2.0 * rtt_us >= time_left_us {
        m -= 1;
    }
    m
}

/// `n = ⌈m × loss_rate⌉`, at least 1, at most MAX_PARITY.
pub fn parity_count(m: usize, loss_rate: f64) -> usize {
    let p = if loss_rate.is_finite() {
        loss_rate.clamp(0.0, 1.0)
    } else {
        0.0
    };
    ((m as f64 * p).ceil() as usize).clamp(1, MAX_PARITY)
}

/// The largest loss rate over the last 8 RTTs: fed with cumulative (sent, lost) packet counts,
/// one rate per RTT-long interval.
#[derive(Debug, Clone, Default)]
pub struct LossWindow {
    start: Option<(u64, u64, u64)>,
    rates: VecDeque<(u64, f64)>,
}

impl LossWindow {
    pub fn sample(&mut self, now_us: u64, sent: u64, lost: u64, rtt_us: u64) {
        let rtt_us = rtt_us.max(1);
        let Some((t0, s0, l0)) = self.start else {
            self.start = Some((now_us, sent, lost));
            return;
        };
        if now_us.saturating_sub(t0) < rtt_us {
            return;
        }
        let ds = sent.saturating_sub(s0);
        if ds > 0 {
            let rate = lost.saturating_sub(l0) as f64 / ds as f64;
            self.rates.push_back((now_us, rate.min(1.0)));
        }
        self.start = Some((now_us, sent, lost));
        while self
            .rates
            .front()
            .is_some_and(|(t, _)| now_us.saturating_sub(*t) > 8 * rtt_us)
        {
            self.rates.pop_front();
        }
    }

    pub fn max_rate(&self) -> f64 {
        self.rates.iter().map(|(_, r)| *r).fold(0.0, f64::max)
    }
}

fn codec(m: usize, n: usize) -> Result<ReedSolomon, String> {
    ReedSolomon::new(m, n).map_err(|e| format!("Reed-Solomon ({m}, {n}): {e:?}"))
}

/// The `n` parity symbols of `sources` (each at most `symbol_bytes`, zero-padded).
pub fn encode(sources: &[&[u8]], n: usize, symbol_bytes: usize) -> Result<Vec<Vec<u8>>, String> {
    let m = sources.len();
    let rs = codec(m, n)?;
    let mut shards: Vec<Vec<u8>> = Vec::with_capacity(m + n);
    for s in sources {
        if s.len() > symbol_bytes {
            return Err(format!(
                "a source symbol of {} > {symbol_bytes} bytes",
                s.len()
            ));
        }
        let mut v = s.to_vec();
        v.resize(symbol_bytes, 0);
        shards.push(v);
    }
    shards.extend((0..n).map(|_| vec![0u8; symbol_bytes]));
    rs.encode(&mut shards).map_err(|e| format!("{e:?}"))?;
    Ok(shards.split_off(m))
}

/// The `m` source symbols (zero-padded to the symbol size) from any `m` of the `m + n`
/// symbols: `symbols[i]` is source i for i < m, parity i − m after; None = missing.
pub fn recover(
    m: usize,
    n: usize,
    mut symbols: Vec<Option<Vec<u8>>>,
) -> Result<Vec<Vec<u8>>, String> {
    if symbols.len() != m + n {
        return Err(format!(
            "{} symbols for a group of {m} + {n}",
            symbols.len()
        ));
    }
    let have = symbols.iter().filter(|s| s.is_some()).count();
    if have < m {
        return Err(format!("{have} of {m} + {n} symbols: cannot recover"));
    }
    codec(m, n)?
        .reconstruct_data(&mut symbols)
        .map_err(|e| format!("{e:?}"))?;
    Ok(symbols
        .into_iter()
        .take(m)
        .map(|s| s.expect("reconstructed"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redundancy_starts_below_two_rtts() {
        assert!(!needs_redundancy(40_001.0, 20_000.0));
        assert!(needs_redundancy(39_999.0, 20_000.0));
    }

    #[test]
    fn group_size_keeps_every_packet_before_the_deadline() {
        // 1200-byte symbols at 1.2 MB/s = 1 ms each; RTT 20 ms; 50 ms left: m·1 + 40 < 50.
        assert_eq!(group_size(50_000.0, 1.2e6, 20_000.0, 1200, 100), 9);
        // limited by what the block has left
        assert_eq!(group_size(50_000.0, 1.2e6, 20_000.0, 1200, 3), 3);
        // too late for any group: still one symbol (protect what can be)
        assert_eq!(group_size(10_000.0, 1.2e6, 20_000.0, 1200, 100), 1);
        // huge time: capped
        assert_eq!(
            group_size(1e9, 1.2e6, 20_000.0, 1200, 1000),
            MAX_GROUP_SYMBOLS
        );
    }

    #[test]
    fn parity_covers_the_loss_rate() {
        assert_eq!(parity_count(10, 0.0), 1);
        assert_eq!(parity_count(10, 0.1), 1);
        assert_eq!(parity_count(10, 0.11), 2);
        assert_eq!(parity_count(1, 0.2), 1);
        assert_eq!(parity_count(20, 0.2), 4);
        assert_eq!(parity_count(64, 1.0), MAX_PARITY);
    }

    #[test]
    fn loss_window_keeps_the_maximum_of_eight_rtts() {
        let mut w = LossWindow::default();
        w.sample(0, 0, 0, 10_000);
        w.sample(10_000, 100, 20, 10_000); // 20 %
        w.sample(20_000, 200, 21, 10_000); // 1 %
        assert!((w.max_rate() - 0.2).abs() < 1e-12);
        for i in 3..=11u64 {
            w.sample(i * 10_000, 100 * i, 21, 10_000); // no more loss
        }
        assert!(
            w.max_rate() < 0.2,
            "the 20 % interval aged out: {}",
            w.max_rate()
        );
    }

    #[test]
    fn encode_then_recover_from_any_m_symbols() {
        let sources: Vec<Vec<u8>> = (0..5u8)
            .map(|i| {
                (0..100)
                    .map(|j| i.wrapping_mul(37).wrapping_add(j))
                    .collect()
            })
            .collect();
        let mut last = sources[4].clone();
        last.truncate(60); // a short last symbol
        let refs: Vec<&[u8]> = sources[..4]
            .iter()
            .map(|s| s.as_slice())
            .chain([last.as_slice()])
            .collect();
        let parity = encode(&refs, 2, 100).unwrap();
        assert_eq!(parity.len(), 2);
        // lose sources 1 and 3
        let mut symbols: Vec<Option<Vec<u8>>> = refs
            .iter()
            .map(|s| {
                let mut v = s.to_vec();
                v.resize(100, 0);
                Some(v)
            })
            .chain(parity.iter().cloned().map(Some))
            .collect();
        symbols[1] = None;
        symbols[3] = None;
        let got = recover(5, 2, symbols.clone()).unwrap();
        assert_eq!(got[1], sources[1]);
        assert_eq!(got[3], sources[3]);
        assert_eq!(&got[4][..60], &last[..]);
        // a third loss is beyond n
        symbols[0] = None;
        assert!(recover(5, 2, symbols).is_err());
    }
}
