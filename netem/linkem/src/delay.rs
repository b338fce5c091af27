//! The delay line: fixed delay plus optional jitter, uniform in [-jitter, +jitter] (netem's
//! behaviour without a distribution table), clamped so no packet leaves before it entered.
//! Without `reorder` a packet never leaves before its predecessor (its exit time is raised to
//! the previous exit time); with it, packets leave in exit-time order.

use crate::queue::Packet;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

struct Entry<T> {
    exit_ns: u64,
    seq: u64,
    pkt: Packet<T>,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, o: &Self) -> bool {
        (self.exit_ns, self.seq) == (o.exit_ns, o.seq)
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.exit_ns, self.seq).cmp(&(o.exit_ns, o.seq))
    }
}

pub struct DelayLine<T> {
    delay_ns: u64,
    jitter_ns: u64,
    reorder: bool,
    rng: ChaCha8Rng,
    last_exit_ns: u64,
    seq: u64,
    heap: BinaryHeap<Reverse<Entry<T>>>,
}

impl<T> DelayLine<T> {
    pub fn new(delay_ns: u64, jitter_ns: u64, reorder: bool, rng: ChaCha8Rng) -> Self {
        DelayLine {
            delay_ns,
            jitter_ns,
            reorder,
            rng,
            last_exit_ns: 0,
            seq: 0,
            heap: BinaryHeap::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn push(&mut self, enter_ns: u64, pkt: Packet<T>) {
        let mut exit_ns = enter_ns + self.delay_ns;
        if self.jitter_ns > 0 {
            let j = self.rng.gen_range(0..=2 * self.jitter_ns) as i128 - self.jitter_ns as i128;
            exit_ns = (exit_ns as i128 + j).max(enter_ns as i128) as u64;
        }
        if !self.reorder {
            exit_ns = exit_ns.max(self.last_exit_ns);
        }
        self.last_exit_ns = self.last_exit_ns.max(exit_ns);
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            exit_ns,
            seq: self.seq,
            pkt,
        }));
    }

    /// The shortest time any packet spends in the line (delay − jitter, at least 0).
    pub fn min_delay_ns(&self) -> u64 {
        self.delay_ns.saturating_sub(self.jitter_ns)
    }

    pub fn next_exit_ns(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.0.exit_ns)
    }

    pub fn pop_due(&mut self, now_ns: u64) -> Option<(u64, Packet<T>)> {
        if self.next_exit_ns()? > now_ns {
            return None;
        }
        let Reverse(e) = self.heap.pop()?;
        Some((e.exit_ns, e.pkt))
    }
}
