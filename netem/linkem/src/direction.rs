//! One direction of the link: queue → rate server → delay line → loss, driven by time; a
//! policer replaces queue and rate server with a token bucket that passes or drops at once.
//!
//! Pure state machine: the caller passes the current time (ns, any monotonic origin, never
//! decreasing) and gets `Event`s back; `next_wakeup_ns` says when to call `poll` again.

use crate::config::{DirectionConfig, DropPolicy, QueueConfig, QueueLimit, RateConfig};
use crate::delay::DelayLine;
use crate::loss::Loss;
use crate::queue::{Packet, Queue};
use crate::rate::{Constant, Opportunities, Schedule, TokenBucket};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Why a packet did not make it through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropCause {
    /// The queue was full (tail) or the packet was pushed out (head).
    Queue,
    /// The loss model dropped it after the delay line.
    Loss,
    /// Larger than mtu_bytes + 14: never enters the queue.
    Oversized,
    /// A policer's bucket held fewer tokens than the frame's bytes.
    Police,
}

#[derive(Debug)]
pub enum Event<T> {
    /// Leave now: `at_ns` is the model's exit time (≤ the `now` that produced it).
    Sent { pkt: Packet<T>, at_ns: u64 },
    Dropped {
        pkt: Packet<T>,
        at_ns: u64,
        cause: DropCause,
    },
}

/// Aggregate of queueing delays (arrival → leaving the rate server, own serialisation
/// included).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DelayAgg {
    pub sum_ns: u128,
    pub count: u64,
    pub max_ns: u64,
}

impl DelayAgg {
    pub fn add(&mut self, d_ns: u64) {
        self.sum_ns += d_ns as u128;
        self.count += 1;
        self.max_ns = self.max_ns.max(d_ns);
    }
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }
}

/// Cumulative counters of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    /// Every frame offered, oversized ones included.
    pub arrivals: u64,
    pub departures: u64,
    pub bytes_out: u64,
    pub drops_queue: u64,
    pub drops_loss: u64,
    /// Frames a policer dropped (always 0 for the other rate kinds).
    pub drops_police: u64,
    pub oversized: u64,
    pub queue_delay: DelayAgg,
}

enum Server {
    Unlimited,
    Constant(Constant),
    Schedule(Schedule),
    Opportunities(Opportunities),
    Policer(TokenBucket),
}

/// What a policer direction has instead of a queue: a queue nothing ever enters.
const NO_QUEUE: QueueConfig = QueueConfig {
    limit: QueueLimit::Packets(0),
    drop: DropPolicy::Tail,
};

struct InService<T> {
    pkt: Packet<T>,
    /// Time servers: when the last bit leaves (None: never).
    finish_ns: Option<u64>,
    /// Opportunity server: bytes still to send.
    remaining: u64,
}

pub struct Direction<T> {
    max_frame_bytes: u64,
    queue: Queue<T>,
    server: Server,
    in_service: Option<InService<T>>,
    server_free_ns: u64,
    delay: DelayLine<T>,
    loss: Loss,
    loss_rng: ChaCha8Rng,
    counters: Counters,
    interval_delay: DelayAgg,
    scratch: Vec<Packet<T>>,
}

impl<T> Direction<T> {
    /// `stream` separates the random streams of the two directions (0: a_to_b, 1: b_to_a).
    pub fn new(cfg: &DirectionConfig, mtu_bytes: u64, seed: u64, stream: u64) -> Self {
        let server = match &cfg.rate {
            RateConfig::Unlimited => Server::Unlimited,
            RateConfig::Constant { rate_bps } => Server::Constant(Constant::new(*rate_bps)),
            RateConfig::Schedule {
                points,
                period_ns,
                looped,
            } => Server::Schedule(Schedule::new(points.clone(), *period_ns, *looped)),
            RateConfig::Opportunities {
                times_ns,
                period_ns,
                bytes_per_opportunity,
                looped,
            } => Server::Opportunities(Opportunities::new(
                times_ns.clone(),
                *period_ns,
                *bytes_per_opportunity,
                *looped,
            )),
            RateConfig::Policer {
                rate_bps,
                burst_bytes,
            } => Server::Policer(TokenBucket::new(*rate_bps, *burst_bytes)),
        };
        let mut jitter_rng = ChaCha8Rng::seed_from_u64(seed);
        jitter_rng.set_stream(stream * 2);
        let mut loss_rng = ChaCha8Rng::seed_from_u64(seed);
        loss_rng.set_stream(stream * 2 + 1);
        Direction {
            max_frame_bytes: mtu_bytes + 14,
            queue: Queue::new(cfg.queue.unwrap_or(NO_QUEUE)),
            server,
            in_service: None,
            server_free_ns: 0,
            delay: DelayLine::new(cfg.delay_ns, cfg.jitter_ns, cfg.jitter_reorder, jitter_rng),
            loss: Loss::new(cfg.loss.clone()),
            loss_rng,
            counters: Counters::default(),
            interval_delay: DelayAgg::default(),
            scratch: Vec::new(),
        }
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Bytes waiting in the queue (the packet being transmitted excluded).
    pub fn queue_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    /// Bytes not yet through the rate server as of the last `enqueue` or `poll`: the queue
    /// and the packet being transmitted. What a sender that keeps the link just busy watches
    /// (the endpoints' path models in virtual-time tests).
    pub fn backlog_bytes(&self) -> u64 {
        self.queue.bytes() + self.in_service.as_ref().map_or(0, |s| s.pkt.bytes)
    }

    /// Packets anywhere inside the model (queue, server, delay line).
    pub fn in_flight(&self) -> usize {
        self.queue.len() + usize::from(self.in_service.is_some()) + self.delay.len()
    }

    /// Queueing delays since the last call.
    pub fn take_interval_delay(&mut self) -> DelayAgg {
        std::mem::take(&mut self.interval_delay)
    }

    /// A frame of `bytes` wire bytes arrives at `now_ns`.
    pub fn enqueue(&mut self, now_ns: u64, payload: T, bytes: u64, out: &mut Vec<Event<T>>) {
        self.counters.arrivals += 1;
        let pkt = Packet {
            payload,
            bytes,
            arrival_ns: now_ns,
        };
        if bytes > self.max_frame_bytes {
            self.counters.oversized += 1;
            out.push(Event::Dropped {
                pkt,
                at_ns: now_ns,
                cause: DropCause::Oversized,
            });
            return;
        }
        if let Server::Policer(bucket) = &mut self.server {
            // No queue: the frame passes at once (queueing delay 0) or is dropped.
            if bucket.conform(now_ns, bytes) {
                self.leave_server(pkt, now_ns);
            } else {
                self.counters.drops_police += 1;
                out.push(Event::Dropped {
                    pkt,
                    at_ns: now_ns,
                    cause: DropCause::Police,
                });
            }
            self.poll(now_ns, out);
            return;
        }
        // Everything strictly before the arrival happens first, then the arrival, then the
        // rest of this instant (so an opportunity at exactly `now` serves this packet).
        self.advance(now_ns, false);
        let mut dropped = std::mem::take(&mut self.scratch);
        self.queue.push(pkt, &mut dropped);
        for pkt in dropped.drain(..) {
            self.counters.drops_queue += 1;
            out.push(Event::Dropped {
                pkt,
                at_ns: now_ns,
                cause: DropCause::Queue,
            });
        }
        self.scratch = dropped;
        self.poll(now_ns, out);
    }

    /// Advance to `now_ns`, emitting every packet whose fate is decided by then.
    pub fn poll(&mut self, now_ns: u64, out: &mut Vec<Event<T>>) {
        self.advance(now_ns, true);
        while let Some((at_ns, pkt)) = self.delay.pop_due(now_ns) {
            if self.loss.lose(&mut self.loss_rng) {
                self.counters.drops_loss += 1;
                out.push(Event::Dropped {
                    pkt,
                    at_ns,
                    cause: DropCause::Loss,
                });
            } else {
                self.counters.departures += 1;
                self.counters.bytes_out += pkt.bytes;
                out.push(Event::Sent { pkt, at_ns });
            }
        }
    }

    /// When something next happens inside the model (None: nothing pending).
    pub fn next_wakeup_ns(&self) -> Option<u64> {
        earliest(self.next_server_event_ns(), self.delay.next_exit_ns())
    }

    /// The rate server's next event (a finish or an opportunity), if it has work.
    fn next_server_event_ns(&self) -> Option<u64> {
        match &self.server {
            Server::Opportunities(o) if self.in_service.is_some() || !self.queue.is_empty() => {
                o.next_ns()
            }
            Server::Opportunities(_) => None,
            _ => self.in_service.as_ref().and_then(|s| s.finish_ns),
        }
    }

    /// When a packet can next leave the model: the delay line's next exit, or the rate
    /// server's next event plus the smallest delay (a packet leaving the server then cannot
    /// exit sooner). Advancing the model later than `next_wakeup_ns` but by this time makes
    /// the same decisions, so a caller only needs to wake up for departures.
    pub fn next_departure_ns(&self) -> Option<u64> {
        let min_delay = self.delay.min_delay_ns();
        let server = self
            .next_server_event_ns()
            .map(|t| t.saturating_add(min_delay));
        earliest(server, self.delay.next_exit_ns())
    }

    /// When to wake to release frames in batches at most `bound_ns` late, never early: the
    /// latest departure the model already knows of within `bound_ns` of the next one
    /// (`next_departure_ns`). Waking then releases every frame due in that window in one go,
    /// the last of them exactly on time; a frame with no other due within the bound is woken
    /// for at its own time. Frames the model cannot place yet (still queued behind the one in
    /// service, or not arrived) only make the window smaller, never a frame later: the next
    /// wake-up is planned from them. Greedy covering of departures by windows of `bound_ns`,
    /// the fewest wake-ups for that worst case. `bound_ns` 0: `next_departure_ns`.
    pub fn batch_departure_ns(&self, bound_ns: u64) -> Option<u64> {
        let first = self.next_departure_ns()?;
        let limit = first.saturating_add(bound_ns);
        let server = self
            .next_server_event_ns()
            .map(|t| t.saturating_add(self.delay.min_delay_ns()))
            .filter(|&t| t <= limit);
        let line = self.delay.last_exit_within(limit);
        Some(
            first
                .max(server.unwrap_or(first))
                .max(line.unwrap_or(first)),
        )
    }

    fn leave_server(&mut self, pkt: Packet<T>, at_ns: u64) {
        let d = at_ns.saturating_sub(pkt.arrival_ns);
        self.counters.queue_delay.add(d);
        self.interval_delay.add(d);
        self.delay.push(at_ns, pkt);
    }

    /// Run the rate server up to `now_ns`; opportunities exactly at `now_ns` only if
    /// `inclusive` (time servers always finish packets due at `now_ns`).
    fn advance(&mut self, now_ns: u64, inclusive: bool) {
        if let Server::Opportunities(_) = self.server {
            self.advance_opportunities(now_ns, inclusive);
            return;
        }
        loop {
            if self.in_service.is_none() {
                let Some(pkt) = self.queue.pop() else { return };
                let start = self.server_free_ns.max(pkt.arrival_ns);
                let finish_ns = match &mut self.server {
                    Server::Unlimited => Some(start),
                    Server::Constant(c) => Some(c.finish(start, pkt.bytes)),
                    Server::Schedule(s) => s.finish(start, pkt.bytes),
                    Server::Opportunities(_) | Server::Policer(_) => unreachable!(),
                };
                self.in_service = Some(InService {
                    pkt,
                    finish_ns,
                    remaining: 0,
                });
            }
            let due =
                matches!(&self.in_service, Some(s) if s.finish_ns.is_some_and(|f| f <= now_ns));
            if !due {
                return;
            }
            let s = self.in_service.take().expect("checked above");
            let f = s.finish_ns.expect("checked above");
            self.server_free_ns = f;
            self.leave_server(s.pkt, f);
        }
    }

    fn advance_opportunities(&mut self, now_ns: u64, inclusive: bool) {
        loop {
            let Server::Opportunities(o) = &mut self.server else {
                unreachable!()
            };
            let Some(t) = o.next_ns() else { return };
            if t > now_ns || (t == now_ns && !inclusive) {
                return;
            }
            if self.in_service.is_none() && self.queue.is_empty() {
                if inclusive {
                    o.skip_through(now_ns);
                } else if now_ns > 0 {
                    o.skip_through(now_ns - 1);
                }
                return;
            }
            o.advance();
            let mut budget = o.bytes_per_opportunity;
            while budget > 0 {
                if self.in_service.is_none() {
                    let Some(pkt) = self.queue.pop() else { break };
                    let remaining = pkt.bytes;
                    self.in_service = Some(InService {
                        pkt,
                        finish_ns: None,
                        remaining,
                    });
                }
                let s = self.in_service.as_mut().expect("set above");
                let used = budget.min(s.remaining);
                s.remaining -= used;
                budget -= used;
                if s.remaining == 0 {
                    let s = self.in_service.take().expect("set above");
                    self.leave_server(s.pkt, t);
                }
            }
        }
    }
}

fn earliest(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
