//! The bottleneck queue in front of the rate server: FIFO with a limit in bytes or packets,
//! dropping the arriving packet (tail) or the oldest ones (head) when it would overflow.

use crate::config::{DropPolicy, QueueConfig, QueueLimit};
use std::collections::VecDeque;

/// A packet travelling through the emulator: the caller's payload plus what the model needs.
#[derive(Debug)]
pub struct Packet<T> {
    pub payload: T,
    pub bytes: u64,
    pub arrival_ns: u64,
}

#[derive(Debug)]
pub struct Queue<T> {
    cfg: QueueConfig,
    items: VecDeque<Packet<T>>,
    bytes: u64,
}

impl<T> Queue<T> {
    pub fn new(cfg: QueueConfig) -> Self {
        Queue {
            cfg,
            items: VecDeque::new(),
            bytes: 0,
        }
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn fits(&self, extra_bytes: u64, extra_pkts: u64) -> bool {
        match self.cfg.limit {
            QueueLimit::Bytes(b) => self.bytes + extra_bytes <= b,
            QueueLimit::Packets(n) => self.items.len() as u64 + extra_pkts <= n,
        }
    }

    /// Enqueue `pkt`; every packet dropped to respect the limit is pushed to `dropped`.
    pub fn push(&mut self, pkt: Packet<T>, dropped: &mut Vec<Packet<T>>) {
        if !self.fits(pkt.bytes, 1) {
            let alone_fits = match self.cfg.limit {
                QueueLimit::Bytes(b) => pkt.bytes <= b,
                QueueLimit::Packets(_) => true,
            };
            if self.cfg.drop == DropPolicy::Tail || !alone_fits {
                dropped.push(pkt);
                return;
            }
            while !self.fits(pkt.bytes, 1) {
                match self.pop() {
                    Some(old) => dropped.push(old),
                    None => break,
                }
            }
        }
        self.bytes += pkt.bytes;
        self.items.push_back(pkt);
    }

    pub fn pop(&mut self) -> Option<Packet<T>> {
        let p = self.items.pop_front()?;
        self.bytes -= p.bytes;
        Some(p)
    }
}
