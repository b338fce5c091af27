//! Unit tests and property tests of the scheduler.

use super::*;
use proptest::prelude::*;
use std::collections::VecDeque;

/// A test datagram that remembers where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct D {
    ch: usize,
    seq: u64,
    size: usize,
}

impl Datagram for D {
    fn size(&self) -> usize {
        self.size
    }
}

fn d(ch: usize, seq: u64, size: usize) -> D {
    D { ch, seq, size }
}

/// tracking > video > ack, as the RISE endpoints use it.
fn three(capacity: usize) -> (Scheduler<D>, [ChannelId; 3]) {
    let mut s = Scheduler::new(capacity);
    let ack = s.add_channel(0);
    let video = s.add_channel(1);
    let tracking = s.add_channel(2);
    (s, [tracking, video, ack])
}

#[test]
fn enqueues_while_it_fits_and_never_beyond_capacity() {
    let mut s = Scheduler::new(100);
    let c = s.add_channel(1);
    assert_eq!(s.enqueue(c, vec![0u8; 60]), Ingress::Enqueued);
    assert_eq!(s.enqueue(c, vec![0u8; 40]), Ingress::Enqueued);
    assert_eq!(s.len_bytes(), 100);
    // The paper's `S < B` would admit this one; we keep S <= B.
    assert_eq!(s.enqueue(c, vec![1u8; 1]), Ingress::Dropped(vec![1u8]));
    assert_eq!(s.len_bytes(), 100);
    assert_eq!(s.stats(c).dropped_ingress, 1);
}

#[test]
fn head_drop_channel_drops_its_oldest_like_quinn() {
    // quinn-proto 0.11 `make_space_for`: pop the oldest until the new datagram fits.
    let mut s = Scheduler::new(100);
    let c = s.add_channel_with(1, Overflow::HeadDrop);
    s.enqueue(c, d(0, 0, 40));
    s.enqueue(c, d(0, 1, 40));
    assert_eq!(s.enqueue(c, d(0, 2, 20)), Ingress::Enqueued);
    // full: a datagram of 50 evicts the two oldest (40 + 40), not itself and not the newest
    assert_eq!(
        s.enqueue(c, d(0, 3, 50)),
        Ingress::Evicted(vec![(c, d(0, 0, 40)), (c, d(0, 1, 40))])
    );
    assert_eq!(s.len_bytes(), 70);
    assert_eq!(s.dequeue(usize::MAX), Some((c, d(0, 2, 20))));
    assert_eq!(s.dequeue(usize::MAX), Some((c, d(0, 3, 50))));
    // larger than B: dropped, nothing evicted
    s.enqueue(c, d(0, 4, 10));
    assert_eq!(s.enqueue(c, d(0, 5, 101)), Ingress::Dropped(d(0, 5, 101)));
    assert_eq!(s.len_bytes(), 10);
    let st = s.stats(c);
    assert_eq!((st.evicted, st.dropped_ingress), (2, 1));
}

#[test]
fn tail_drop_channel_keeps_the_oldest() {
    let mut s = Scheduler::new(100);
    let c = s.add_channel_with(1, Overflow::TailDrop);
    s.enqueue(c, d(0, 0, 60));
    assert_eq!(s.enqueue(c, d(0, 1, 50)), Ingress::Dropped(d(0, 1, 50)));
    assert_eq!(s.dequeue(usize::MAX), Some((c, d(0, 0, 60))));
}

#[test]
fn head_drop_channel_evicts_lower_priorities_first() {
    let mut s = Scheduler::new(100);
    let low = s.add_channel(0);
    let hi = s.add_channel_with(1, Overflow::HeadDrop);
    s.enqueue(hi, d(1, 0, 50));
    s.enqueue(low, d(0, 0, 30));
    // needs 60 - 20 free = 40 more: the lower channel's 30 go first, then hi's oldest 50
    assert_eq!(
        s.enqueue(hi, d(1, 1, 60)),
        Ingress::Evicted(vec![(low, d(0, 0, 30)), (hi, d(1, 0, 50))])
    );
    assert_eq!(s.len_bytes(), 60);
}

#[test]
fn higher_priority_evicts_oldest_of_lowest_channel() {
    let (mut s, [t, v, a]) = three(100);
    s.enqueue(a, d(2, 0, 30));
    s.enqueue(a, d(2, 1, 30));
    s.enqueue(v, d(1, 0, 30));
    // 90 queued; tracking needs 20: one ack (the oldest) goes.
    assert_eq!(
        s.enqueue(t, d(0, 0, 20)),
        Ingress::Evicted(vec![(a, d(2, 0, 30))])
    );
    assert_eq!(s.len_bytes(), 80);
    // video of 50 needs 30 more: the remaining ack goes, video is untouched.
    assert_eq!(
        s.enqueue(v, d(1, 1, 50)),
        Ingress::Evicted(vec![(a, d(2, 1, 30))])
    );
    assert_eq!(s.len_bytes(), 100);
    // an ack cannot evict anything: dropped.
    assert_eq!(s.enqueue(a, d(2, 2, 1)), Ingress::Dropped(d(2, 2, 1)));
    // tracking evicts the oldest video datagrams until it fits.
    assert_eq!(
        s.enqueue(t, d(0, 1, 60)),
        Ingress::Evicted(vec![(v, d(1, 0, 30)), (v, d(1, 1, 50))])
    );
    assert_eq!(s.len_bytes(), 80);
    assert_eq!(s.stats(a).evicted, 2);
    assert_eq!(s.stats(v).evicted, 2);
    assert_eq!(s.stats(a).dropped_ingress, 1);
}

#[test]
fn equal_priority_is_tail_dropped() {
    let mut s = Scheduler::new(10);
    let c1 = s.add_channel(1);
    let c2 = s.add_channel(1);
    s.enqueue(c1, d(0, 0, 10));
    assert_eq!(s.enqueue(c2, d(1, 0, 5)), Ingress::Dropped(d(1, 0, 5)));
    assert_eq!(s.channel_len(c1), 1);
}

#[test]
fn drops_without_evicting_when_eviction_cannot_make_room() {
    let (mut s, [t, v, a]) = three(100);
    s.enqueue(a, d(2, 0, 10));
    s.enqueue(t, d(0, 0, 85));
    // Evicting the 10-byte ack would leave 85 + 20 > 100: keep the ack, drop the new one.
    assert_eq!(s.enqueue(v, d(1, 0, 20)), Ingress::Dropped(d(1, 0, 20)));
    assert_eq!(s.channel_len(a), 1);
    // Larger than B: always dropped.
    assert_eq!(s.enqueue(t, d(0, 1, 101)), Ingress::Dropped(d(0, 1, 101)));
    assert_eq!(s.len_bytes(), 95);
}

#[test]
fn egress_serves_highest_priority_first() {
    let (mut s, [t, v, a]) = three(1000);
    s.enqueue(a, d(2, 0, 10));
    s.enqueue(v, d(1, 0, 10));
    s.enqueue(t, d(0, 0, 10));
    assert_eq!(s.dequeue(1500), Some((t, d(0, 0, 10))));
    assert_eq!(s.dequeue(1500), Some((v, d(1, 0, 10))));
    assert_eq!(s.dequeue(1500), Some((a, d(2, 0, 10))));
    assert_eq!(s.dequeue(1500), None);
    assert!(s.is_empty());
}

#[test]
fn egress_skips_the_round_when_the_head_does_not_fit() {
    let (mut s, [t, v, _a]) = three(1000);
    s.enqueue(t, d(0, 0, 50));
    s.enqueue(v, d(1, 0, 10));
    assert_eq!(s.peek_size(), Some(50));
    // The video datagram would fit, but egress does not look past the selected head.
    assert_eq!(s.dequeue(20), None);
    assert_eq!(s.dequeue(50), Some((t, d(0, 0, 50))));
    assert_eq!(s.dequeue(20), Some((v, d(1, 0, 10))));
}

#[test]
fn round_robin_keeps_the_turn_across_a_skipped_round() {
    let mut s = Scheduler::new(1000);
    let c1 = s.add_channel(1);
    let c2 = s.add_channel(1);
    s.enqueue(c1, d(0, 0, 10));
    s.enqueue(c1, d(0, 1, 10));
    s.enqueue(c2, d(1, 0, 90));
    s.enqueue(c2, d(1, 1, 10));
    assert_eq!(s.dequeue(100).unwrap().0, c1);
    assert_eq!(s.dequeue(20), None); // c2's turn, its head is 90
    assert_eq!(s.dequeue(100).unwrap().0, c2);
    assert_eq!(s.dequeue(100).unwrap().0, c1);
    assert_eq!(s.dequeue(100).unwrap().0, c2);
}

#[test]
fn enqueue_front_goes_to_the_head() {
    let mut s = Scheduler::new(1000);
    let c = s.add_channel(1);
    s.enqueue(c, d(0, 1, 10));
    s.enqueue_front(c, d(0, 0, 10));
    assert_eq!(s.dequeue(100), Some((c, d(0, 0, 10))));
    assert_eq!(s.dequeue(100), Some((c, d(0, 1, 10))));
}

#[test]
fn retain_frees_bytes_and_counts() {
    let mut s = Scheduler::new(1000);
    let c = s.add_channel(1);
    for i in 0..5 {
        s.enqueue(c, d(0, i, 10));
    }
    assert_eq!(s.retain(c, |x| x.seq % 2 == 0), 2);
    assert_eq!(s.len_bytes(), 30);
    assert_eq!(s.channel_len(c), 3);
    assert_eq!(s.stats(c).removed, 2);
}

#[test]
fn channels_added_later_slot_into_priority_order() {
    let mut s = Scheduler::new(1000);
    let low = s.add_channel(1);
    s.enqueue(low, d(0, 0, 10));
    let high = s.add_channel(5);
    let mid = s.add_channel(3);
    s.enqueue(mid, d(2, 0, 10));
    s.enqueue(high, d(1, 0, 10));
    assert_eq!(s.dequeue(100).unwrap().0, high);
    assert_eq!(s.dequeue(100).unwrap().0, mid);
    assert_eq!(s.dequeue(100).unwrap().0, low);
    assert_eq!(s.priority(mid), 3);
}

#[derive(Debug, Clone)]
enum Op {
    Enqueue { ch: usize, size: usize },
    EnqueueFront { ch: usize, size: usize },
    Dequeue { space: usize },
    Retain { ch: usize, modulo: u64 },
}

fn op(n_channels: usize, front: bool) -> impl Strategy<Value = Op> {
    let enq = (0..n_channels, 0usize..400).prop_map(|(ch, size)| Op::Enqueue { ch, size });
    let front_w = if front { 1 } else { 0 };
    let fr = (0..n_channels, 0usize..400).prop_map(|(ch, size)| Op::EnqueueFront { ch, size });
    let deq = (0usize..500).prop_map(|space| Op::Dequeue { space });
    let ret = (0..n_channels, 2u64..5).prop_map(|(ch, modulo)| Op::Retain { ch, modulo });
    prop_oneof![4 => enq, front_w => fr, 3 => deq, 1 => ret]
}

/// Runs `ops` and checks the invariants after each one. Returns the dequeued datagrams.
fn run_checked(
    priorities: &[u8],
    capacity: usize,
    ops: &[Op],
) -> Result<Vec<(usize, D)>, TestCaseError> {
    let mut s = Scheduler::new(capacity);
    let ids: Vec<ChannelId> = priorities.iter().map(|&p| s.add_channel(p)).collect();
    let mut seq = vec![0u64; priorities.len()];
    let mut calls = vec![0u64; priorities.len()];
    let mut out = Vec::new();
    let mut last_out = vec![None::<u64>; priorities.len()];
    let front_used = ops.iter().any(|o| matches!(o, Op::EnqueueFront { .. }));
    for o in ops {
        match *o {
            Op::Enqueue { ch, size } | Op::EnqueueFront { ch, size } => {
                let p = priorities[ch];
                let x = d(ch, seq[ch], size);
                seq[ch] += 1;
                calls[ch] += 1;
                let before = s.len_bytes();
                let not_lower: usize = (0..ids.len())
                    .filter(|&i| priorities[i] >= p)
                    .map(|i| s.channel_bytes(ids[i]))
                    .sum();
                let lowest_before: Option<u8> = (0..ids.len())
                    .filter(|&i| s.channel_len(ids[i]) > 0)
                    .map(|i| priorities[i])
                    .min();
                let r = if matches!(o, Op::Enqueue { .. }) {
                    s.enqueue(ids[ch], x)
                } else {
                    s.enqueue_front(ids[ch], x)
                };
                match r {
                    Ingress::Enqueued => prop_assert!(before + size <= capacity),
                    Ingress::Evicted(v) => {
                        prop_assert!(before + size > capacity);
                        prop_assert!(!v.is_empty());
                        for (cid, e) in &v {
                            // only strictly lower priorities are evicted, lowest first
                            prop_assert!(priorities[cid.0] < p);
                            prop_assert_eq!(cid.0, e.ch);
                            prop_assert!(Some(priorities[cid.0]) >= lowest_before);
                            if !front_used {
                                prop_assert!(last_out[e.ch].is_none_or(|l| l < e.seq));
                                last_out[e.ch] = Some(e.seq);
                            }
                        }
                    }
                    Ingress::Dropped(x) => {
                        prop_assert_eq!(x.size, size);
                        // Higher priority is dropped only if evicting every lower-priority
                        // datagram could not have made room.
                        prop_assert!(not_lower + size > capacity);
                        prop_assert_eq!(s.len_bytes(), before);
                    }
                }
            }
            Op::Dequeue { space } => {
                let top = (0..ids.len())
                    .filter(|&i| s.channel_len(ids[i]) > 0)
                    .map(|i| priorities[i])
                    .max();
                let peek = s.peek_size();
                match s.dequeue(space) {
                    Some((cid, x)) => {
                        prop_assert_eq!(Some(priorities[cid.0]), top);
                        prop_assert_eq!(peek, Some(x.size));
                        prop_assert!(x.size <= space);
                        if !front_used {
                            // FIFO within a channel
                            prop_assert!(last_out[x.ch].is_none_or(|l| l < x.seq));
                            last_out[x.ch] = Some(x.seq);
                        }
                        out.push((cid.0, x));
                    }
                    None => match peek {
                        None => prop_assert!(s.is_empty()),
                        Some(n) => prop_assert!(n > space),
                    },
                }
            }
            Op::Retain { ch, modulo } => {
                s.retain(ids[ch], |x| x.seq % modulo != 0);
            }
        }
        // Invariants after every operation.
        prop_assert!(s.len_bytes() <= capacity);
        let sum: usize = ids.iter().map(|&c| s.channel_bytes(c)).sum();
        prop_assert_eq!(sum, s.len_bytes());
        for (i, &c) in ids.iter().enumerate() {
            let st = s.stats(c);
            prop_assert_eq!(
                st.enqueued,
                st.dequeued + st.evicted + st.removed + s.channel_len(c) as u64
            );
            prop_assert_eq!(st.enqueued + st.dropped_ingress, calls[i]);
        }
    }
    let total_out: u64 = out.iter().map(|(_, x)| x.size as u64).sum();
    let total_stats: u64 = ids.iter().map(|&c| s.stats(c).bytes_dequeued).sum();
    prop_assert_eq!(total_out, total_stats);
    Ok(out)
}

proptest! {
    #[test]
    fn invariants_hold_with_three_priorities(
        cap in 0usize..2000,
        ops in proptest::collection::vec(op(3, true), 0..200),
    ) {
        run_checked(&[2, 1, 0], cap, &ops)?;
    }

    #[test]
    fn fifo_and_invariants_with_mixed_priorities(
        prios in proptest::collection::vec(0u8..3, 1..5),
        cap in 0usize..2000,
        seed_ops in proptest::collection::vec(op(4, false), 0..200),
    ) {
        let n = prios.len();
        let ops: Vec<Op> = seed_ops.into_iter().map(|o| match o {
            Op::Enqueue { ch, size } => Op::Enqueue { ch: ch % n, size },
            Op::Retain { ch, modulo } => Op::Retain { ch: ch % n, modulo },
            other => other,
        }).collect();
        run_checked(&prios, cap, &ops)?;
    }

    /// One channel is a plain FIFO with the same B: compare with a VecDeque model.
    #[test]
    fn single_channel_is_a_plain_fifo(
        cap in 0usize..2000,
        ops in proptest::collection::vec(op(1, false), 0..300),
    ) {
        let mut s = Scheduler::new(cap);
        let c = s.add_channel(0);
        let mut model: std::collections::VecDeque<D> = Default::default();
        let mut model_bytes = 0usize;
        let mut seq = 0;
        for o in ops {
            match o {
                Op::Enqueue { size, .. } => {
                    let x = d(0, seq, size);
                    seq += 1;
                    let r = s.enqueue(c, x.clone());
                    if model_bytes + size <= cap {
                        prop_assert_eq!(r, Ingress::Enqueued);
                        model_bytes += size;
                        model.push_back(x);
                    } else {
                        prop_assert_eq!(r, Ingress::Dropped(x));
                    }
                }
                Op::Dequeue { space } => {
                    let expect = match model.front() {
                        Some(h) if h.size <= space => {
                            model_bytes -= h.size;
                            model.pop_front()
                        }
                        _ => None,
                    };
                    prop_assert_eq!(s.dequeue(space).map(|(_, x)| x), expect);
                }
                _ => {}
            }
            prop_assert_eq!(s.len_bytes(), model_bytes);
        }
    }

    /// One head-drop channel behaves exactly like quinn's datagram buffer: a FIFO that pops
    /// its oldest entries until the new one fits (and refuses one larger than B).
    #[test]
    fn single_head_drop_channel_equals_quinn_model(
        ops in proptest::collection::vec((proptest::bool::ANY, 1usize..120, 0usize..150), 1..300),
        cap in 50usize..400,
    ) {
        let mut s = Scheduler::new(cap);
        let c = s.add_channel_with(1, Overflow::HeadDrop);
        let mut model: VecDeque<D> = VecDeque::new();
        let mut bytes = 0usize;
        for (i, &(enq, size, space)) in ops.iter().enumerate() {
            if enq {
                let x = d(0, i as u64, size);
                let r = s.enqueue(c, x.clone());
                if size > cap {
                    prop_assert_eq!(r, Ingress::Dropped(x));
                } else {
                    let mut gone = Vec::new();
                    while bytes + size > cap {
                        let o = model.pop_front().unwrap();
                        bytes -= o.size;
                        gone.push((c, o));
                    }
                    model.push_back(x);
                    bytes += size;
                    if gone.is_empty() {
                        prop_assert_eq!(r, Ingress::Enqueued);
                    } else {
                        prop_assert_eq!(r, Ingress::Evicted(gone));
                    }
                }
            } else {
                let expect = match model.front() {
                    Some(h) if h.size <= space => {
                        bytes -= h.size;
                        model.pop_front()
                    }
                    _ => None,
                };
                prop_assert_eq!(s.dequeue(space).map(|(_, x)| x), expect);
            }
            prop_assert_eq!(s.len_bytes(), bytes);
            prop_assert!(s.len_bytes() <= cap);
        }
    }

    /// Equal priorities, both backlogged: after any number of dequeues the counts differ by at
    /// most one, even while a higher-priority channel takes some turns and rounds get skipped.
    #[test]
    fn equal_priorities_are_served_round_robin(
        sizes in proptest::collection::vec(1usize..100, 1..150),
        high in proptest::collection::vec(proptest::bool::ANY, 1..150),
        spaces in proptest::collection::vec(0usize..120, 1..150),
    ) {
        let mut s = Scheduler::new(usize::MAX);
        let h = s.add_channel(9);
        let a = s.add_channel(4);
        let b = s.add_channel(4);
        for (i, &sz) in sizes.iter().enumerate() {
            s.enqueue(a, d(1, i as u64, sz));
            s.enqueue(b, d(2, i as u64, 100 - sz));
        }
        let mut count = [0i64; 3];
        for (i, &space) in spaces.iter().enumerate() {
            if high[i % high.len()] {
                s.enqueue(h, d(0, i as u64, 10));
            }
            if s.channel_len(a) == 0 || s.channel_len(b) == 0 {
                break;
            }
            if let Some((cid, _)) = s.dequeue(space) {
                count[cid.0] += 1;
            }
            prop_assert!((count[a.0] - count[b.0]).abs() <= 1);
        }
    }
}
