//! Property tests of the ADS scheduler and its baselines, and the paper's claim in virtual
//! time (the `sim` model path): under a bottleneck below the blocks' rate, DTP meets more
//! deadlines than QUIC, round robin (quiche's default) or FIFO.

use dtp::ads::{Block, Estimate, Policy, Scheduler};
use dtp::pattern::Pattern;
use dtp::sim::{self, on_time_ratio, Path};
use proptest::prelude::*;

fn policies() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::Fifo),
        Just(Policy::RoundRobin),
        Just(Policy::FcfsCancel),
        (0.0f64..=1.0, 0.0f64..5.0).prop_map(|(alpha, beta)| Policy::Ads { alpha, beta }),
    ]
}

/// (size, priority 1..=3, created ms, deadline ms)
fn blocks() -> impl Strategy<Value = Vec<(u64, u32, u64, u64)>> {
    prop::collection::vec((1u64..50_000, 1u32..=3, 0u64..500, 1u64..300), 1..20)
}

fn push_all(s: &mut Scheduler, bs: &[(u64, u32, u64, u64)]) {
    for (i, &(size, prio, created, deadline)) in bs.iter().enumerate() {
        s.push(Block {
            id: i as u64,
            size_bytes: size,
            priority: prio,
            created_us: created * 1000,
            deadline_us: deadline * 1000,
            deps: vec![],
        })
        .unwrap();
    }
}

proptest! {
    /// Driving any policy to the end: every block is either fully sent or dropped, never
    /// both; dropped blocks were due; FIFO drops nothing and sends in arrival order.
    #[test]
    fn every_block_is_sent_or_dropped_once(policy in policies(), bs in blocks(),
                                           chunk in 1u64..20_000, step_us in 1u64..5000) {
        let mut s = Scheduler::new(policy, 3);
        push_all(&mut s, &bs);
        let est = Estimate { bandwidth_bytes_per_s: 1e6, one_way_delay_us: 2000 };
        let mut sent = vec![0u64; bs.len()];
        let mut done = vec![false; bs.len()];
        let mut dropped = vec![false; bs.len()];
        let mut order = vec![];
        let mut now = 0u64;
        while s.pending() > 0 {
            for d in s.expire(now) {
                let i = d.id as usize;
                prop_assert!(!dropped[i] && !done[i]);
                prop_assert_eq!(d.sent_bytes, sent[i]);
                prop_assert!(now >= (bs[i].2 + bs[i].3) * 1000, "dropped before its deadline");
                dropped[i] = true;
            }
            if let Some(id) = s.pick(now, &est) {
                let i = id as usize;
                prop_assert!(!done[i] && !dropped[i]);
                let n = chunk.min(bs[i].0 - sent[i]);
                sent[i] += n;
                if order.last() != Some(&id) { order.push(id); }
                if s.on_sent(id, n).unwrap() {
                    prop_assert_eq!(sent[i], bs[i].0);
                    done[i] = true;
                }
            }
            now += step_us;
        }
        for i in 0..bs.len() {
            prop_assert!(done[i] ^ dropped[i]);
        }
        if matches!(policy, Policy::Fifo | Policy::RoundRobin) {
            prop_assert!(dropped.iter().all(|d| !d));
        }
        if policy == Policy::Fifo {
            prop_assert!(order.windows(2).all(|w| w[0] < w[1]), "{:?}", order);
        }
    }

    /// Round robin over blocks all queued from the start: every block gets one chunk per
    /// cycle, in arrival order, so the chunks two unfinished blocks got never differ by
    /// more than one, and the picks cycle through the unfinished blocks in id order.
    #[test]
    fn round_robin_gives_every_block_a_turn_per_cycle(sizes in prop::collection::vec(1u64..20, 1..12)) {
        let mut s = Scheduler::new(Policy::RoundRobin, 3);
        let bs: Vec<_> = sizes.iter().map(|&n| (n * 100, 1u32, 0u64, 100u64)).collect();
        push_all(&mut s, &bs);
        let est = Estimate { bandwidth_bytes_per_s: 1e6, one_way_delay_us: 0 };
        let mut chunks = vec![0u64; bs.len()];
        let mut last: Option<u64> = None;
        while let Some(id) = s.pick(0, &est) {
            let i = id as usize;
            // the next unfinished block after the last one picked, cyclically in id order
            let unfinished: Vec<u64> = (0..bs.len() as u64).filter(|&j| chunks[j as usize] < sizes[j as usize]).collect();
            let want = match last {
                Some(l) => *unfinished.iter().find(|&&j| j > l).unwrap_or(&unfinished[0]),
                None => unfinished[0],
            };
            prop_assert_eq!(id, want);
            chunks[i] += 1;
            s.on_sent(id, 100).unwrap();
            last = Some(id);
            let open: Vec<u64> = (0..bs.len()).filter(|&j| chunks[j] < sizes[j]).map(|j| chunks[j]).collect();
            if let (Some(lo), Some(hi)) = (open.iter().min(), open.iter().max()) {
                prop_assert!(hi - lo <= 1, "{:?}", chunks);
            }
        }
        prop_assert_eq!(chunks, sizes);
    }

    /// α = 1 with nothing sent yet: the pick is a block of the most important priority.
    #[test]
    fn alpha_one_picks_the_most_important(bs in blocks(), beta in 0.0f64..5.0, now in 0u64..200) {
        let mut s = Scheduler::new(Policy::Ads { alpha: 1.0, beta }, 3);
        push_all(&mut s, &bs);
        let est = Estimate { bandwidth_bytes_per_s: 1e5, one_way_delay_us: 1000 };
        let id = s.pick(now * 1000, &est).unwrap() as usize;
        let best = bs.iter().map(|b| b.1).min().unwrap();
        prop_assert_eq!(bs[id].1, best);
        // ... and the earliest of them (ties keep arrival order).
        prop_assert_eq!(bs.iter().position(|b| b.1 == best), Some(id));
    }

    /// α = 0 with equal sizes, nothing sent and no block predicted late: the pick has the
    /// earliest deadline (the least remaining time).
    #[test]
    fn alpha_zero_picks_the_least_time_left(deadlines in prop::collection::vec(100u64..1000, 1..10)) {
        let mut s = Scheduler::new(Policy::Ads { alpha: 0.0, beta: 3.0 }, 3);
        let bs: Vec<_> = deadlines.iter().map(|&d| (1000u64, 2u32, 0u64, d)).collect();
        push_all(&mut s, &bs);
        let est = Estimate { bandwidth_bytes_per_s: 1e7, one_way_delay_us: 1000 };
        let id = s.pick(0, &est).unwrap() as usize;
        // f = remain/D is smallest for the smallest D when the fixed terms are equal
        prop_assert_eq!(deadlines[id], *deadlines.iter().min().unwrap());
    }
}

fn paper_pattern() -> Pattern {
    // [DTP §VI-A]: 3 blocks of 200 KB every 100 ms, deadline 200 ms.
    Pattern {
        interval_us: 100_000,
        sizes_bytes: vec![200_000; 3],
        deadline_us: 200_000,
    }
}

fn ratio(policy: Policy, rate_mbyte_s: f64, prio: Option<u32>) -> f64 {
    let path = Path {
        rate_bytes_per_s: rate_mbyte_s * 1e6,
        one_way_delay_us: 2500,
    };
    on_time_ratio(
        &sim::run(policy, &paper_pattern(), path, 5_000_000, 1200),
        prio,
    )
}

const DTP: Policy = Policy::Ads {
    alpha: 0.5,
    beta: 3.0,
};

#[test]
fn dtp_meets_more_deadlines_than_quic_when_bandwidth_limited() {
    for rate in [2.0, 3.0, 4.0, 5.0] {
        let d = ratio(DTP, rate, None);
        for q in [Policy::RoundRobin, Policy::Fifo] {
            let r = ratio(q, rate, None);
            assert!(d > r + 0.2, "{rate} MB/s: DTP {d} vs {q:?} {r}");
        }
    }
    // Enough bandwidth (> 6 MB/s): everyone is on time.
    for p in [DTP, Policy::RoundRobin, Policy::Fifo, Policy::FcfsCancel] {
        assert_eq!(ratio(p, 8.0, None), 1.0, "{p:?}");
    }
}

#[test]
fn dtp_keeps_the_most_important_blocks_on_time() {
    // 3 MB/s carries 1.5 of the 3 blocks per round: priority 1 is always on time under DTP.
    assert_eq!(ratio(DTP, 3.0, Some(1)), 1.0);
    assert!(ratio(Policy::Fifo, 3.0, Some(1)) < 0.5);
    assert!(ratio(Policy::RoundRobin, 3.0, Some(1)) < 0.5);
}

#[test]
fn round_robin_finishes_a_round_together_where_fifo_finishes_it_in_turn() {
    // 6.5 MB/s, a little above the 6 MB/s the pattern needs: FIFO finishes block 1 of a
    // round after ~31 ms, round robin all three together at ~92 ms (+ 2.5 ms one way).
    let path = Path {
        rate_bytes_per_s: 6.5e6,
        one_way_delay_us: 2500,
    };
    let median = |p: Policy, prio: u32| {
        let f = sim::run(p, &paper_pattern(), path, 2_000_000, 1200);
        let mut t: Vec<u64> = f
            .iter()
            .filter(|b| b.priority == prio)
            .map(|b| b.arrival_us.unwrap() - (b.due_us - 200_000))
            .collect();
        t.sort();
        t[t.len() / 2]
    };
    let (fifo1, rr1) = (median(Policy::Fifo, 1), median(Policy::RoundRobin, 1));
    assert!((30_000..40_000).contains(&fifo1), "{fifo1}");
    assert!((88_000..100_000).contains(&rr1), "{rr1}");
    let rr3 = median(Policy::RoundRobin, 3);
    assert!(rr3 - rr1 < 2_000, "{rr1} {rr3}");
}

proptest! {
    /// Reed-Solomon round trip: any n of the m + n symbols lost, the m sources come back.
    #[test]
    fn fec_recovers_any_n_losses(m in 1usize..20, n in 1usize..8, symbol in 1usize..300,
                                 seed in any::<u64>(), lost in prop::collection::vec(any::<prop::sample::Index>(), 0..8)) {
        use dtp::fec::{encode, recover};
        let sources: Vec<Vec<u8>> = (0..m)
            .map(|i| (0..symbol).map(|j| (seed.wrapping_mul(i as u64 + 7).wrapping_add(j as u64) >> 3) as u8).collect())
            .collect();
        let refs: Vec<&[u8]> = sources.iter().map(|s| s.as_slice()).collect();
        let parity = encode(&refs, n, symbol).unwrap();
        let mut symbols: Vec<Option<Vec<u8>>> =
            sources.iter().cloned().chain(parity).map(Some).collect();
        for ix in lost.iter().take(n) {
            let i = ix.index(m + n);
            symbols[i] = None;
        }
        prop_assert_eq!(recover(m, n, symbols).unwrap(), sources);
    }
}
