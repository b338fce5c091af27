//! One direction of the emulated path. The shaper is linkem's own pure core
//! (`linkem::Direction`: queue → rate server → delay line → loss), so the predictor and the
//! emulator share one model. The policer puts a token bucket (rate, burst; no queue) in front
//! of a linkem direction without a rate limit, which adds the delay and the loss.

use crate::conn::Packet;
use linkem::config::{DirectionConfig, DropPolicy, QueueConfig, QueueLimit, RateConfig};
use linkem::{Direction, DropCause, Event};

/// IPv4 (20) + UDP (8) + Ethernet (14) bytes around a QUIC packet: linkem counts Ethernet
/// frames.
pub const WIRE_OVERHEAD_BYTES: u64 = 42;
/// Ethernet MTU of the emulated interfaces (linkem's default `mtu_bytes`).
pub const LINK_MTU_BYTES: u64 = 1500;

#[derive(Debug, Clone, PartialEq)]
pub struct Policer {
    pub rate_bps: u64,
    pub burst_bytes: u64,
}

/// A token bucket that starts full; a packet passes if the bucket holds its size.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    cfg: Policer,
    tokens_bits: u128,
    last_ns: u64,
}

impl TokenBucket {
    pub fn new(cfg: Policer) -> Self {
        TokenBucket {
            tokens_bits: cfg.burst_bytes as u128 * 8,
            cfg,
            last_ns: 0,
        }
    }

    /// Whether a packet of `bytes` arriving at `now_ns` conforms (and takes its tokens).
    pub fn admit(&mut self, now_ns: u64, bytes: u64) -> bool {
        let dt = now_ns.saturating_sub(self.last_ns) as u128;
        self.last_ns = self.last_ns.max(now_ns);
        let cap = self.cfg.burst_bytes as u128 * 8;
        // bits = rate_bps × dt_ns / 1e9, kept in bit·ns units below to avoid rounding
        self.tokens_bits =
            (self.tokens_bits + self.cfg.rate_bps as u128 * dt / 1_000_000_000).min(cap);
        let need = bytes as u128 * 8;
        if self.tokens_bits >= need {
            self.tokens_bits -= need;
            true
        } else {
            false
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub offered: u64,
    pub delivered: u64,
    pub dropped_queue: u64,
    pub dropped_loss: u64,
    pub dropped_policer: u64,
    pub bytes_delivered: u64,
}

pub struct Link {
    policer: Option<TokenBucket>,
    dir: Direction<Packet>,
    out: Vec<Event<Packet>>,
    pub stats: LinkStats,
    /// Queue occupancy (bytes) sampled by the caller.
    pub queue_samples: Vec<u64>,
}

impl Link {
    /// A shaper (linkem direction as configured) or, with `policer`, a token bucket followed
    /// by `cfg`'s delay and loss with no rate limit and no queue limit.
    pub fn new(cfg: &DirectionConfig, policer: Option<Policer>, seed: u64, stream: u64) -> Self {
        let dir = match &policer {
            None => Direction::new(cfg, LINK_MTU_BYTES, seed, stream),
            Some(_) => {
                let free = DirectionConfig {
                    rate: RateConfig::Unlimited,
                    queue: Some(QueueConfig {
                        limit: QueueLimit::Packets(u64::MAX),
                        drop: cfg.queue.map_or(DropPolicy::Tail, |q| q.drop),
                    }),
                    ..cfg.clone()
                };
                Direction::new(&free, LINK_MTU_BYTES, seed, stream)
            }
        };
        Link {
            policer: policer.map(TokenBucket::new),
            dir,
            out: Vec::new(),
            stats: LinkStats::default(),
            queue_samples: Vec::new(),
        }
    }

    pub fn send(&mut self, now_ns: u64, pkt: Packet) {
        self.stats.offered += 1;
        let bytes = pkt.size + WIRE_OVERHEAD_BYTES;
        if let Some(p) = &mut self.policer {
            if !p.admit(now_ns, bytes) {
                self.stats.dropped_policer += 1;
                return;
            }
        }
        self.dir.enqueue(now_ns, pkt, bytes, &mut self.out);
    }

    /// Packets that reach the far end by `now_ns`, in order.
    pub fn poll(&mut self, now_ns: u64, delivered: &mut Vec<Packet>) {
        self.dir.poll(now_ns, &mut self.out);
        for e in self.out.drain(..) {
            match e {
                Event::Sent { pkt, .. } => {
                    self.stats.delivered += 1;
                    self.stats.bytes_delivered += pkt.bytes;
                    delivered.push(pkt.payload);
                }
                Event::Dropped { cause, .. } => match cause {
                    DropCause::Loss => self.stats.dropped_loss += 1,
                    DropCause::Queue | DropCause::Oversized => self.stats.dropped_queue += 1,
                    DropCause::Police => self.stats.dropped_policer += 1,
                },
            }
        }
    }

    pub fn has_output(&self) -> bool {
        !self.out.is_empty()
    }

    pub fn next_wakeup_ns(&self) -> Option<u64> {
        self.dir.next_wakeup_ns()
    }

    pub fn queue_bytes(&self) -> u64 {
        self.dir.queue_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_passes_its_burst_then_the_rate() {
        let mut b = TokenBucket::new(Policer {
            rate_bps: 8_000_000, // 1 byte/µs
            burst_bytes: 10_000,
        });
        let passed = (0..20).filter(|_| b.admit(0, 1000)).count();
        assert_eq!(
            passed, 10,
            "a burst of 20 kB at once: the bucket's 10 kB pass"
        );
        // 1 ms later, 1000 bytes of tokens
        assert!(b.admit(1_000_000, 1000));
        assert!(!b.admit(1_000_000, 1000));
    }
}
