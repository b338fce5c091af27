//! How long datagrams wait inside quinn's own datagram send buffer.
//!
//! quinn does not report when it takes a datagram out of its buffer, so we mirror the buffer:
//! a FIFO of (insert time, size) for every datagram handed to quinn, consumed from the front
//! as `datagram_send_buffer_space()` grows back (quinn's buffer is a FIFO too). quinn books
//! `overhead` bytes per queued datagram besides the payload; `empty_space` is the space
//! reported with an empty buffer. The resolution is how often [`WaitMeter::observe`] runs.

use std::collections::VecDeque;

#[derive(Debug)]
pub struct WaitMeter {
    empty_space: usize,
    overhead: usize,
    fifo: VecDeque<(u64, usize)>,
    /// Payload plus overhead of the datagrams in `fifo`.
    tracked_bytes: usize,
    waits_us: Vec<u64>,
    waited: u64,
    inserted: u64,
}

/// What the meter saw over a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WaitSummary {
    pub inserted: u64,
    /// Datagrams measured leaving quinn's buffer.
    pub measured: u64,
    /// Datagrams that entered while quinn's buffer was not empty, or had to wait for room.
    pub waited: u64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

impl WaitMeter {
    pub fn new(empty_space: usize, overhead: usize) -> Self {
        WaitMeter {
            empty_space,
            overhead,
            fifo: VecDeque::new(),
            tracked_bytes: 0,
            waits_us: Vec::new(),
            waited: 0,
            inserted: 0,
        }
    }

    /// A datagram of `size` payload bytes entered quinn's buffer at `now_us`; `blocked` if it
    /// had to wait for room first (its wait then counts from `since_us`, when it was handed over).
    pub fn insert(&mut self, since_us: u64, size: usize, blocked: bool) {
        if blocked || !self.fifo.is_empty() {
            self.waited += 1;
        }
        self.inserted += 1;
        self.fifo.push_back((since_us, size));
        self.tracked_bytes += size + self.overhead;
    }

    /// quinn reports `space` bytes free at `now_us`: account for the datagrams that left.
    pub fn observe(&mut self, now_us: u64, space: usize) {
        if space == 0 {
            // Saturated: quinn's buffer is full, nothing can be concluded.
            return;
        }
        let used = self.empty_space.saturating_sub(space);
        while self.tracked_bytes > used {
            let Some((t0, size)) = self.fifo.pop_front() else {
                break;
            };
            self.tracked_bytes -= size + self.overhead;
            self.waits_us.push(now_us.saturating_sub(t0));
        }
    }

    /// Datagrams believed to be inside quinn now.
    pub fn pending(&self) -> usize {
        self.fifo.len()
    }

    pub fn summary(&self) -> WaitSummary {
        let mut w = self.waits_us.clone();
        w.sort_unstable();
        let q = |p: f64| -> u64 {
            if w.is_empty() {
                0
            } else {
                // nearest rank
                let rank = (p * w.len() as f64).ceil().max(1.0) as usize;
                w[rank.min(w.len()) - 1]
            }
        };
        WaitSummary {
            inserted: self.inserted,
            measured: w.len() as u64,
            waited: self.waited,
            p50_us: q(0.5),
            p99_us: q(0.99),
            max_us: w.last().copied().unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_measured_as_space_comes_back() {
        // quinn: buffer 1500, 32 bytes of bookkeeping per datagram, 32 reserved.
        let mut m = WaitMeter::new(1468, 32);
        m.insert(1000, 600, false);
        m.insert(1100, 600, false); // behind the first one: waited
        m.observe(1150, 1468 - 2 * 632); // both still inside
        assert_eq!(m.pending(), 2);
        m.observe(1500, 1468 - 632); // the first left
        assert_eq!(m.pending(), 1);
        m.observe(2100, 1468); // the second left
        let s = m.summary();
        assert_eq!(s.inserted, 2);
        assert_eq!(s.measured, 2);
        assert_eq!(s.waited, 1);
        assert_eq!(s.max_us, 1000);
        assert_eq!(s.p50_us, 500);
    }

    #[test]
    fn a_full_buffer_says_nothing() {
        let mut m = WaitMeter::new(1468, 32);
        m.insert(0, 1436, true);
        m.observe(10, 0);
        assert_eq!(m.pending(), 1);
        m.observe(20, 1468);
        assert_eq!(m.pending(), 0);
        let s = m.summary();
        assert_eq!((s.waited, s.max_us), (1, 20));
    }
}
