//! The delay line: fixed delay plus optional jitter, uniform in [-jitter, +jitter] (netem's
//! behaviour without a distribution table), clamped so no packet leaves before it entered.
//! Without `reorder` a packet never leaves before its predecessor (its exit time is raised to
//! the previous exit time); with it, packets leave in exit-time order.

use crate::queue::Packet;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

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

/// Packets in exit-time order: without reordering exit times never decrease, so a FIFO holds
/// them in order (and can be searched by time); with it, a min-heap.
enum Store<T> {
    Fifo(VecDeque<Entry<T>>),
    Heap(BinaryHeap<Reverse<Entry<T>>>),
}

pub struct DelayLine<T> {
    delay_ns: u64,
    jitter_ns: u64,
    reorder: bool,
    rng: ChaCha8Rng,
    last_exit_ns: u64,
    seq: u64,
    store: Store<T>,
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
            store: if reorder {
                Store::Heap(BinaryHeap::new())
            } else {
                Store::Fifo(VecDeque::new())
            },
        }
    }

    pub fn len(&self) -> usize {
        match &self.store {
            Store::Fifo(q) => q.len(),
            Store::Heap(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        let e = Entry {
            exit_ns,
            seq: self.seq,
            pkt,
        };
        match &mut self.store {
            Store::Fifo(q) => q.push_back(e),
            Store::Heap(h) => h.push(Reverse(e)),
        }
    }

    /// The shortest time any packet spends in the line (delay − jitter, at least 0).
    pub fn min_delay_ns(&self) -> u64 {
        self.delay_ns.saturating_sub(self.jitter_ns)
    }

    pub fn next_exit_ns(&self) -> Option<u64> {
        match &self.store {
            Store::Fifo(q) => q.front().map(|e| e.exit_ns),
            Store::Heap(h) => h.peek().map(|e| e.0.exit_ns),
        }
    }

    /// The latest exit time ≤ `limit_ns` of a packet in the line (None: no exit that early).
    /// O(log n) without reordering, O(n) with it.
    pub fn last_exit_within(&self, limit_ns: u64) -> Option<u64> {
        match &self.store {
            Store::Fifo(q) => {
                let k = q.partition_point(|e| e.exit_ns <= limit_ns);
                k.checked_sub(1).map(|i| q[i].exit_ns)
            }
            Store::Heap(h) => h
                .iter()
                .map(|e| e.0.exit_ns)
                .filter(|&t| t <= limit_ns)
                .max(),
        }
    }

    pub fn pop_due(&mut self, now_ns: u64) -> Option<(u64, Packet<T>)> {
        if self.next_exit_ns()? > now_ns {
            return None;
        }
        let e = match &mut self.store {
            Store::Fifo(q) => q.pop_front()?,
            Store::Heap(h) => h.pop()?.0,
        };
        Some((e.exit_ns, e.pkt))
    }
}
