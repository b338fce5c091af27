//! Which block gets the next bytes, and which blocks are dropped ([DTP §III-B]).
//!
//! The sender keeps every block the application pushed in this queue until it is fully
//! handed to the transport or dropped. [`Scheduler::pick`] names the block to send next
//! under a [`Policy`]; [`Scheduler::expire`] names the blocks to drop now (the shell resets
//! their streams); [`Scheduler::on_sent`] counts the bytes handed over.
//!
//! ADS (Eq. 1-3): for a block with relative deadline `D`, `passed` µs since it was created,
//! `remain` bytes unsent out of `size`,
//!
//! - Eq. 1: `remain_time = D − remain/bandwidth − passed − one_way_delay`
//! - Eq. 2: `f = remain_time / D` if `remain_time > 0`, else `min(−remain_time / D, 1) + β`
//! - Eq. 3: `weighted_p = ((1 − α)·f + α·priority/pmax) · remain/size`
//!
//! and the block with the smallest `weighted_p` is sent (ties: the earlier block). Priority 1
//! is the most important, `pmax` the least. A block is dropped once it has missed its
//! deadline at the sender (`passed ≥ D`, "a block will be dropped when it already missed the
//! deadline on the sender side"); one predicted to miss (`remain_time < 0`) is only
//! penalised by β. Only blocks whose dependencies were all fully sent are considered; a block
//! whose dependency was dropped is dropped too. The baselines share the queue:
//! `RoundRobin` (QUIC as the paper ran it, the default of quiche 0.2.0 that DTP extends: the
//! sender's blocks take turns, one chunk each, nothing dropped), `Fifo` (a QUIC that sends
//! its blocks one after another in arrival order, nothing dropped) and `FcfsCancel` (SCTP':
//! arrival order, stale blocks dropped).
//!
//! `RoundRobin` follows quiche 0.2.0 (`src/stream.rs`, `StreamMap::flushable`, a `VecDeque`
//! of stream ids; `src/lib.rs`, `Connection::send`): a stream joins the back of the queue
//! when it gets data to send (`stream_send`, so in the order the application wrote the
//! streams), the send loop pops the front stream, puts one STREAM frame of it in the packet
//! and pushes the stream back to the end if it still has data. quiche 0.2.0 has no stream
//! priorities. Here a turn is one `on_sent` (one chunk, about a packet).

use std::collections::{BTreeMap, BTreeSet};

/// How the next block is chosen and whether stale blocks are dropped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    /// Vanilla QUIC as quiche 0.2.0 schedules streams: round robin, one chunk per turn,
    /// in arrival order, no drops.
    RoundRobin,
    /// QUIC sending its blocks one after another: arrival order, no drops.
    Fifo,
    /// SCTP' (the paper's FCFS with cancellation of stale data): arrival order, a block past
    /// its deadline is dropped.
    FcfsCancel,
    /// ADS: α = 0 deadline only (DTP-D), α = 1 priority only (DTP-P), 0.5 DTP.
    Ads { alpha: f64, beta: f64 },
}

impl Policy {
    pub fn drops(&self) -> bool {
        !matches!(self, Policy::Fifo | Policy::RoundRobin)
    }
}

/// One application block as the scheduler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Unique, increasing in arrival order (the tie-break and FIFO order).
    pub id: u64,
    /// Bytes to hand to the transport (everything the block's stream carries).
    pub size_bytes: u64,
    /// 1 = most important … pmax = least.
    pub priority: u32,
    pub created_us: u64,
    /// Relative to `created_us`.
    pub deadline_us: u64,
    /// Blocks this one depends on (sent only after they were fully sent).
    pub deps: Vec<u64>,
}

impl Block {
    pub fn due_us(&self) -> u64 {
        self.created_us.saturating_add(self.deadline_us)
    }
}

/// The network as the transport estimates it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Bytes per second; ≤ 0 means unknown: the transfer-time term of Eq. 1 is then 0.
    pub bandwidth_bytes_per_s: f64,
    pub one_way_delay_us: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushError {
    DuplicateId(u64),
    Priority { id: u64, priority: u32, pmax: u32 },
    Empty(u64),
    ZeroDeadline(u64),
}

impl std::fmt::Display for PushError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PushError::DuplicateId(id) => write!(f, "block {id} pushed twice"),
            PushError::Priority { id, priority, pmax } => {
                write!(f, "block {id}: priority {priority} not in 1..={pmax}")
            }
            PushError::Empty(id) => write!(f, "block {id}: size 0"),
            PushError::ZeroDeadline(id) => write!(f, "block {id}: deadline 0"),
        }
    }
}

impl std::error::Error for PushError {}

/// A block the scheduler gave up: `sent_bytes` of it had been handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    pub id: u64,
    pub sent_bytes: u64,
}

#[derive(Debug, Clone)]
struct Entry {
    block: Block,
    sent: u64,
    /// Place in the round-robin queue: smaller goes first (set on push, and under
    /// `RoundRobin` again after each chunk, which sends the block to the back).
    turn: u64,
}

/// Eq. 1, in µs (negative: predicted to miss).
pub fn remain_time_us(b: &Block, sent: u64, now_us: u64, est: &Estimate) -> f64 {
    let remain = b.size_bytes.saturating_sub(sent) as f64;
    let transfer_us = if est.bandwidth_bytes_per_s > 0.0 {
        remain / est.bandwidth_bytes_per_s * 1e6
    } else {
        0.0
    };
    let passed = now_us.saturating_sub(b.created_us) as f64;
    b.deadline_us as f64 - transfer_us - passed - est.one_way_delay_us as f64
}

/// Eq. 2.
pub fn urgency(remain_time_us: f64, deadline_us: u64, beta: f64) -> f64 {
    let d = deadline_us.max(1) as f64;
    if remain_time_us > 0.0 {
        remain_time_us / d
    } else {
        (-remain_time_us / d).min(1.0) + beta
    }
}

/// Eq. 3: smaller is sent first.
pub fn weighted_p(
    b: &Block,
    sent: u64,
    now_us: u64,
    est: &Estimate,
    alpha: f64,
    beta: f64,
    pmax: u32,
) -> f64 {
    let f = urgency(remain_time_us(b, sent, now_us, est), b.deadline_us, beta);
    let p = f64::from(b.priority) / f64::from(pmax.max(1));
    let unsent = b.size_bytes.saturating_sub(sent) as f64 / b.size_bytes.max(1) as f64;
    ((1.0 - alpha) * f + alpha * p) * unsent
}

/// The sender's queue of blocks under one policy.
#[derive(Debug, Clone)]
pub struct Scheduler {
    policy: Policy,
    pmax: u32,
    queue: BTreeMap<u64, Entry>,
    finished: BTreeSet<u64>,
    dropped: BTreeSet<u64>,
    next_turn: u64,
}

impl Scheduler {
    /// `pmax`: the least important priority value the application uses (≥ 1).
    pub fn new(policy: Policy, pmax: u32) -> Self {
        Scheduler {
            policy,
            pmax: pmax.max(1),
            queue: BTreeMap::new(),
            finished: BTreeSet::new(),
            dropped: BTreeSet::new(),
            next_turn: 0,
        }
    }

    pub fn policy(&self) -> Policy {
        self.policy
    }

    pub fn push(&mut self, block: Block) -> Result<(), PushError> {
        let id = block.id;
        if self.queue.contains_key(&id) || self.finished.contains(&id) || self.dropped.contains(&id)
        {
            return Err(PushError::DuplicateId(id));
        }
        if block.priority == 0 || block.priority > self.pmax {
            return Err(PushError::Priority {
                id,
                priority: block.priority,
                pmax: self.pmax,
            });
        }
        if block.size_bytes == 0 {
            return Err(PushError::Empty(id));
        }
        if block.deadline_us == 0 {
            return Err(PushError::ZeroDeadline(id));
        }
        let turn = self.take_turn();
        self.queue.insert(
            id,
            Entry {
                block,
                sent: 0,
                turn,
            },
        );
        Ok(())
    }

    /// Blocks still queued (not fully sent, not dropped).
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    pub fn sent_bytes(&self, id: u64) -> Option<u64> {
        self.queue.get(&id).map(|e| e.sent)
    }

    pub fn block(&self, id: u64) -> Option<&Block> {
        self.queue.get(&id).map(|e| &e.block)
    }

    /// The earliest time a queued block falls due (when [`Scheduler::expire`] may drop it),
    /// under a dropping policy; None otherwise or when nothing is queued.
    pub fn next_due_us(&self) -> Option<u64> {
        if !self.policy.drops() {
            return None;
        }
        self.queue.values().map(|e| e.block.due_us()).min()
    }

    /// Drops what cannot be useful any more at `now_us`: under a dropping policy, blocks past
    /// their deadline, and (any policy) blocks depending on a dropped block. In id order.
    pub fn expire(&mut self, now_us: u64) -> Vec<Dropped> {
        let mut out = Vec::new();
        loop {
            let gone: Vec<u64> = self
                .queue
                .values()
                .filter(|e| {
                    (self.policy.drops() && now_us >= e.block.due_us())
                        || e.block.deps.iter().any(|d| self.dropped.contains(d))
                })
                .map(|e| e.block.id)
                .collect();
            if gone.is_empty() {
                break;
            }
            for id in gone {
                let e = self.queue.remove(&id).expect("listed from the queue");
                self.dropped.insert(id);
                out.push(Dropped {
                    id,
                    sent_bytes: e.sent,
                });
            }
        }
        out.sort_by_key(|d| d.id);
        out
    }

    /// Drops one block on the application's request (`cancel` of Fig. 2). None if unknown.
    pub fn cancel(&mut self, id: u64) -> Option<Dropped> {
        let e = self.queue.remove(&id)?;
        self.dropped.insert(id);
        Some(Dropped {
            id,
            sent_bytes: e.sent,
        })
    }

    fn take_turn(&mut self) -> u64 {
        self.next_turn += 1;
        self.next_turn
    }

    fn eligible(&self, e: &Entry) -> bool {
        e.block.deps.iter().all(|d| self.finished.contains(d))
    }

    /// The block to send next at `now_us`, or None if no queued block may be sent.
    pub fn pick(&self, now_us: u64, est: &Estimate) -> Option<u64> {
        let mut cands = self.queue.values().filter(|e| self.eligible(e));
        match self.policy {
            Policy::Fifo | Policy::FcfsCancel => cands.next().map(|e| e.block.id),
            Policy::RoundRobin => cands.min_by_key(|e| e.turn).map(|e| e.block.id),
            Policy::Ads { alpha, beta } => {
                let mut best: Option<(f64, u64)> = None;
                for e in cands {
                    let w = weighted_p(&e.block, e.sent, now_us, est, alpha, beta, self.pmax);
                    // Strictly smaller wins, so equal weights keep the earlier block.
                    if best.is_none_or(|(bw, _)| w < bw) {
                        best = Some((w, e.block.id));
                    }
                }
                best.map(|(_, id)| id)
            }
        }
    }

    /// `bytes` of block `id` were handed to the transport. Returns true when the block is now
    /// fully sent (it leaves the queue). Under `RoundRobin` a block not yet fully sent goes
    /// to the back of the queue. Err if the block is not queued or `bytes` exceeds what is
    /// left of it.
    pub fn on_sent(&mut self, id: u64, bytes: u64) -> Result<bool, String> {
        let e = self
            .queue
            .get_mut(&id)
            .ok_or_else(|| format!("block {id} is not queued"))?;
        let left = e.block.size_bytes - e.sent;
        if bytes > left {
            return Err(format!("block {id}: {bytes} bytes sent, {left} left"));
        }
        e.sent += bytes;
        if e.sent == e.block.size_bytes {
            self.queue.remove(&id);
            self.finished.insert(id);
            return Ok(true);
        }
        if self.policy == Policy::RoundRobin {
            let turn = self.take_turn();
            self.queue.get_mut(&id).expect("still queued").turn = turn;
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1000;

    fn blk(id: u64, size: u64, prio: u32, created_ms: u64, deadline_ms: u64) -> Block {
        Block {
            id,
            size_bytes: size,
            priority: prio,
            created_us: created_ms * MS,
            deadline_us: deadline_ms * MS,
            deps: vec![],
        }
    }

    fn est(bytes_per_s: f64, owd_ms: u64) -> Estimate {
        Estimate {
            bandwidth_bytes_per_s: bytes_per_s,
            one_way_delay_us: owd_ms * MS,
        }
    }

    const DTP: Policy = Policy::Ads {
        alpha: 0.5,
        beta: 3.0,
    };

    #[test]
    fn eq1_counts_transfer_passed_and_one_way_delay() {
        let b = blk(0, 100_000, 1, 10, 200);
        // 50 kB left at 1 MB/s = 50 ms; passed 30 ms; OWD 5 ms: 200 - 50 - 30 - 5 = 115 ms.
        let r = remain_time_us(&b, 50_000, 40 * MS, &est(1e6, 5));
        assert!((r - 115_000.0).abs() < 1e-6, "{r}");
        // Unknown bandwidth: no transfer term.
        let r = remain_time_us(&b, 50_000, 40 * MS, &est(0.0, 5));
        assert!((r - 165_000.0).abs() < 1e-6, "{r}");
    }

    #[test]
    fn eq2_overdue_gets_beta_and_is_capped() {
        assert!((urgency(50.0, 200, 3.0) - 0.25).abs() < 1e-12);
        assert!((urgency(-50.0, 200, 3.0) - 3.25).abs() < 1e-12);
        assert!((urgency(-1e9, 200, 3.0) - 4.0).abs() < 1e-12); // min(., 1) + β
    }

    #[test]
    fn block_past_its_deadline_is_dropped_except_by_fifo() {
        for (policy, dropped) in [
            (DTP, true),
            (Policy::FcfsCancel, true),
            (Policy::Fifo, false),
            (Policy::RoundRobin, false),
        ] {
            let mut s = Scheduler::new(policy, 3);
            s.push(blk(0, 1000, 1, 0, 200)).unwrap();
            s.push(blk(1, 1000, 1, 100, 200)).unwrap();
            s.on_sent(0, 400).unwrap();
            assert!(s.expire(199 * MS).is_empty());
            let d = s.expire(200 * MS);
            if dropped {
                assert_eq!(
                    d,
                    vec![Dropped {
                        id: 0,
                        sent_bytes: 400
                    }],
                    "{policy:?}"
                );
                assert_eq!(s.pick(200 * MS, &est(1e6, 0)), Some(1));
            } else {
                assert!(d.is_empty());
                assert_eq!(s.pending(), 2, "{policy:?}");
                // FIFO stays on the started block; round robin moved it to the back
                let next = if policy == Policy::Fifo { 0 } else { 1 };
                assert_eq!(s.pick(200 * MS, &est(1e6, 0)), Some(next), "{policy:?}");
            }
        }
    }

    #[test]
    fn alpha_one_orders_purely_by_priority() {
        let p = Policy::Ads {
            alpha: 1.0,
            beta: 3.0,
        };
        let mut s = Scheduler::new(p, 3);
        // The least important block is the most urgent: α = 1 ignores that.
        s.push(blk(0, 1000, 3, 0, 20)).unwrap();
        s.push(blk(1, 1000, 2, 0, 500)).unwrap();
        s.push(blk(2, 1000, 1, 0, 900)).unwrap();
        let e = est(1e5, 1);
        assert_eq!(s.pick(10 * MS, &e), Some(2));
        s.on_sent(2, 1000).unwrap();
        assert_eq!(s.pick(10 * MS, &e), Some(1));
    }

    #[test]
    fn alpha_zero_sends_the_most_urgent_first() {
        let mut s = Scheduler::new(
            Policy::Ads {
                alpha: 0.0,
                beta: 3.0,
            },
            3,
        );
        s.push(blk(0, 1000, 1, 0, 900)).unwrap();
        s.push(blk(1, 1000, 3, 0, 100)).unwrap();
        assert_eq!(s.pick(0, &est(1e6, 1)), Some(1));
    }

    #[test]
    fn a_block_predicted_to_miss_yields_to_fresh_ones_but_is_kept() {
        let mut s = Scheduler::new(DTP, 3);
        // 100 kB at 1 MB/s needs 100 ms; only 50 ms are left: predicted to miss.
        s.push(blk(0, 100_000, 1, 0, 200)).unwrap();
        s.push(blk(1, 100_000, 3, 100, 200)).unwrap();
        let e = est(1e6, 0);
        assert!(remain_time_us(s.block(0).unwrap(), 0, 150 * MS, &e) < 0.0);
        assert_eq!(s.pick(150 * MS, &e), Some(1));
        assert!(s.expire(150 * MS).is_empty());
        assert_eq!(s.pending(), 2);
    }

    #[test]
    fn an_almost_sent_block_is_finished_first() {
        let mut s = Scheduler::new(DTP, 3);
        s.push(blk(0, 100_000, 3, 0, 200)).unwrap();
        s.push(blk(1, 100_000, 1, 0, 200)).unwrap();
        s.on_sent(0, 95_000).unwrap();
        assert_eq!(s.pick(10 * MS, &est(1e7, 1)), Some(0));
    }

    /// quiche 0.2.0's `stream_round_robin` case: streams go out in the order they were
    /// written, then take turns; a finished stream leaves, a new one joins at the back.
    #[test]
    fn round_robin_takes_turns_in_arrival_order() {
        let mut s = Scheduler::new(Policy::RoundRobin, 3);
        s.push(blk(8, 20, 3, 0, 100)).unwrap();
        s.push(blk(0, 20, 1, 0, 100)).unwrap();
        s.push(blk(4, 10, 2, 0, 100)).unwrap();
        let e = est(1e6, 0);
        let mut order = vec![];
        let send = |s: &mut Scheduler, order: &mut Vec<u64>| {
            let id = s.pick(0, &e).unwrap();
            order.push(id);
            s.on_sent(id, 10).unwrap();
        };
        for _ in 0..4 {
            send(&mut s, &mut order);
        }
        assert_eq!(order, vec![8, 0, 4, 8]); // 4 is done after one chunk, 8 after two
        s.push(blk(9, 20, 1, 0, 100)).unwrap();
        while s.pending() > 0 {
            send(&mut s, &mut order);
        }
        assert_eq!(order, vec![8, 0, 4, 8, 0, 9, 9]);
        // nothing is dropped, even long past every deadline
        let mut s = Scheduler::new(Policy::RoundRobin, 3);
        s.push(blk(0, 20, 1, 0, 100)).unwrap();
        assert!(s.expire(10_000 * MS).is_empty());
        assert_eq!(s.next_due_us(), None);
    }

    #[test]
    fn a_pick_that_is_not_sent_keeps_its_turn() {
        let mut s = Scheduler::new(Policy::RoundRobin, 3);
        s.push(blk(0, 20, 1, 0, 100)).unwrap();
        s.push(blk(1, 20, 1, 0, 100)).unwrap();
        let e = est(1e6, 0);
        assert_eq!(s.pick(0, &e), Some(0));
        assert_eq!(s.pick(5 * MS, &e), Some(0));
        s.on_sent(0, 3).unwrap(); // a partial chunk is a turn too
        assert_eq!(s.pick(5 * MS, &e), Some(1));
    }

    #[test]
    fn fifo_and_fcfs_keep_arrival_order() {
        for p in [Policy::Fifo, Policy::FcfsCancel] {
            let mut s = Scheduler::new(p, 3);
            s.push(blk(5, 10, 3, 0, 100)).unwrap();
            s.push(blk(7, 10, 1, 0, 10)).unwrap();
            assert_eq!(s.pick(0, &est(1e6, 0)), Some(5));
        }
    }

    #[test]
    fn dependencies_gate_and_propagate_drops() {
        let mut s = Scheduler::new(DTP, 3);
        s.push(blk(0, 100, 3, 0, 100)).unwrap();
        let mut b1 = blk(1, 100, 1, 0, 1000);
        b1.deps = vec![0];
        s.push(b1).unwrap();
        let mut b2 = blk(2, 100, 1, 0, 1000);
        b2.deps = vec![1];
        s.push(b2).unwrap();
        assert_eq!(s.pick(0, &est(1e6, 0)), Some(0)); // 1 and 2 wait for their dependency
        let d = s.expire(100 * MS); // 0 expires: 1 and then 2 are useless
        assert_eq!(d.iter().map(|d| d.id).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(s.pending(), 0);

        let mut s = Scheduler::new(DTP, 3);
        s.push(blk(0, 100, 3, 0, 100)).unwrap();
        let mut b1 = blk(1, 100, 1, 0, 1000);
        b1.deps = vec![0];
        s.push(b1).unwrap();
        assert!(s.on_sent(0, 100).unwrap());
        assert_eq!(s.pick(0, &est(1e6, 0)), Some(1));
    }

    #[test]
    fn bad_blocks_are_refused() {
        let mut s = Scheduler::new(DTP, 3);
        assert!(matches!(
            s.push(blk(0, 10, 4, 0, 10)),
            Err(PushError::Priority { .. })
        ));
        assert!(matches!(
            s.push(blk(0, 10, 0, 0, 10)),
            Err(PushError::Priority { .. })
        ));
        assert_eq!(s.push(blk(0, 0, 1, 0, 10)), Err(PushError::Empty(0)));
        assert_eq!(s.push(blk(0, 10, 1, 0, 0)), Err(PushError::ZeroDeadline(0)));
        s.push(blk(0, 10, 1, 0, 10)).unwrap();
        assert_eq!(s.push(blk(0, 10, 1, 0, 10)), Err(PushError::DuplicateId(0)));
        assert!(s.on_sent(0, 11).is_err());
        assert!(s.on_sent(9, 1).is_err());
        assert!(s.on_sent(0, 10).unwrap());
        assert_eq!(s.push(blk(0, 10, 1, 0, 10)), Err(PushError::DuplicateId(0)));
    }
}
