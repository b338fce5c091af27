//! Rate, delay, jitter, queue and trace behaviour of one direction, in virtual time.

mod common;
use common::*;
use linkem::rate::Schedule;
use linkem::DropCause;

const BIG_QUEUE: &str = r#"{"limit_packets": 1000000}"#;

/// Offer `bytes`-sized frames every `gap_ns` until `end_ns`; return bytes sent by `end_ns`.
fn saturate(rate: &str, bytes: u64, gap_ns: u64, end_ns: u64) -> u64 {
    let mut d = direction(&format!(r#"{{"rate": {rate}, "queue": {BIG_QUEUE}}}"#));
    let mut out = Vec::new();
    let mut t = 0;
    let mut i = 0;
    while t < end_ns {
        d.enqueue(t, i, bytes, &mut out);
        i += 1;
        t += gap_ns;
    }
    d.poll(end_ns, &mut out);
    d.counters().bytes_out
}

#[test]
fn constant_rate_is_accurate_over_10s() {
    // 10 Mbit/s for 10 s: 12.5 MB; offered 12 Mbit/s.
    let got = saturate(
        r#"{"kind": "constant", "rate_bps": 10000000}"#,
        1500,
        1_000_000,
        10 * S,
    );
    let want = 12_500_000.0;
    assert!((got as f64 - want).abs() / want < 0.001, "bytes_out {got}");
}

#[test]
fn constant_rate_serialisation_time_is_bit_exact() {
    let mut d = direction(
        r#"{"rate": {"kind": "constant", "rate_bps": 12000000}, "queue": {"limit_packets": 10}}"#,
    );
    let mut out = Vec::new();
    d.enqueue(0, 0, 1500, &mut out);
    d.enqueue(0, 1, 1500, &mut out);
    d.poll(10 * MS, &mut out);
    // 1500 B at 12 Mbit/s = 1 ms each, back to back.
    assert_eq!(sent(&out), vec![(0, MS), (1, 2 * MS)]);
}

#[test]
fn the_backlog_is_what_waits_for_the_rate_server_or_is_in_it() {
    // 1500 B at 12 Mbit/s = 1 ms each; 5 ms of delay behind the server
    let mut d = direction(
        r#"{"rate": {"kind": "constant", "rate_bps": 12000000}, "delay_us": 5000,
            "queue": {"limit_packets": 10}}"#,
    );
    let mut out = Vec::new();
    assert_eq!(d.backlog_bytes(), 0);
    d.enqueue(0, 0, 1500, &mut out);
    d.enqueue(0, 1, 1000, &mut out);
    assert_eq!(d.backlog_bytes(), 2500, "one in transmission, one queued");
    d.poll(MS - 1, &mut out);
    assert_eq!(d.backlog_bytes(), 2500);
    d.poll(MS, &mut out);
    assert_eq!(d.backlog_bytes(), 1000, "the first is in the delay line");
    d.poll(MS + MS * 2 / 3, &mut out);
    assert_eq!(d.backlog_bytes(), 0, "both are in the delay line");
    assert!(out.is_empty(), "and none has left the link");
}

#[test]
fn unlimited_rate_with_delay_is_exact() {
    let mut d = direction(
        r#"{"rate": {"kind": "unlimited"}, "delay_us": 10500, "queue": {"limit_packets": 10}}"#,
    );
    let mut out = Vec::new();
    d.enqueue(1000, 0, 100, &mut out);
    assert!(out.is_empty());
    assert_eq!(d.next_wakeup_ns(), Some(1000 + 10_500_000));
    d.poll(1000 + 10_499_999, &mut out);
    assert!(out.is_empty());
    d.poll(1000 + 10_500_000, &mut out);
    assert_eq!(sent(&out), vec![(0, 1000 + 10_500_000)]);
}

fn jitter_order(reorder: bool, gap_ns: u64) -> (Vec<u64>, Vec<u64>) {
    let mut d = direction(&format!(
        r#"{{"rate": {{"kind": "unlimited"}}, "delay_us": 10000, "jitter_us": 5000,
            "jitter_reorder": {reorder}, "queue": {BIG_QUEUE}}}"#
    ));
    let mut out = Vec::new();
    for i in 0..5000 {
        d.enqueue(i * gap_ns, i, 200, &mut out);
    }
    d.poll(1000 * S, &mut out);
    let s = sent(&out);
    let delays: Vec<u64> = s.iter().map(|&(i, at)| at - i * gap_ns).collect();
    (s.iter().map(|x| x.0).collect(), delays)
}

#[test]
fn jitter_without_reorder_keeps_order() {
    // Dense traffic: order kept, delays within [delay - jitter, delay + jitter].
    let (order, delays) = jitter_order(false, 100_000);
    assert_eq!(order, (0..5000).collect::<Vec<_>>());
    assert!(delays.iter().all(|&d| (5 * MS..=15 * MS).contains(&d)));
    // Sparse traffic (gap > 2 × jitter): the full uniform spread shows.
    let (order, delays) = jitter_order(false, 20 * MS);
    assert_eq!(order, (0..5000).collect::<Vec<_>>());
    assert!(delays.iter().any(|&d| d < 6 * MS) && delays.iter().any(|&d| d > 14 * MS));
    let mean = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
    assert!((mean - 10e6).abs() < 0.2e6, "mean delay {mean}");
}

#[test]
fn jitter_with_reorder_reorders() {
    let (order, delays) = jitter_order(true, 100_000);
    let inversions = order.windows(2).filter(|w| w[0] > w[1]).count();
    assert!(inversions > 100, "only {inversions} inversions");
    let mean = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
    assert!((mean - 10e6).abs() < 0.2e6, "mean delay {mean}");
}

fn queue_run(queue: &str, n: u64) -> (Vec<u64>, Vec<u64>, u64) {
    // 1000-byte frames at 8 Mbit/s: 1 ms each; all n arrive at t = 0.
    let mut d = direction(&format!(
        r#"{{"rate": {{"kind": "constant", "rate_bps": 8000000}}, "queue": {queue}}}"#
    ));
    let mut out = Vec::new();
    for i in 0..n {
        d.enqueue(0, i, 1000, &mut out);
    }
    let qb = d.queue_bytes();
    d.poll(S, &mut out);
    let dropped = dropped(&out, DropCause::Queue);
    (sent(&out).iter().map(|x| x.0).collect(), dropped, qb)
}

#[test]
fn queue_limit_in_bytes_drops_tail() {
    let (s, dr, qb) = queue_run(r#"{"limit_bytes": 3000}"#, 6);
    assert_eq!(qb, 3000);
    assert_eq!(s, vec![0, 1, 2, 3]);
    assert_eq!(dr, vec![4, 5]);
}

#[test]
fn queue_limit_in_packets_drops_tail() {
    let (s, dr, _) = queue_run(r#"{"limit_packets": 2, "limit_bytes": null}"#, 6);
    assert_eq!(s, vec![0, 1, 2]);
    assert_eq!(dr, vec![3, 4, 5]);
}

#[test]
fn drop_head_pushes_out_the_oldest() {
    let (s, dr, _) = queue_run(r#"{"limit_packets": 2, "drop": "head"}"#, 6);
    assert_eq!(s, vec![0, 4, 5]);
    assert_eq!(dr, vec![1, 2, 3]);
}

#[test]
fn a_queue_of_one_frame_holds_one_behind_the_one_in_service() {
    // limit 1000 B with 1000-byte frames: one in service (not counted) + one waiting.
    let (s, dr, qb) = queue_run(r#"{"limit_bytes": 1000}"#, 5);
    assert_eq!(qb, 1000);
    assert_eq!(s, vec![0, 1]);
    assert_eq!(dr, vec![2, 3, 4]);
}

#[test]
fn a_queue_smaller_than_a_frame_drops_that_frame_even_on_an_idle_link() {
    // Every frame enters the queue before the server takes it, so a frame larger than
    // limit_bytes is dropped on arrival, busy link or not (Linux bfifo under HTB alike);
    // smaller frames still pass.
    let mut d = direction(
        r#"{"rate": {"kind": "constant", "rate_bps": 8000000}, "queue": {"limit_bytes": 999}}"#,
    );
    let mut out = Vec::new();
    d.enqueue(0, 0, 1000, &mut out);
    d.enqueue(10 * MS, 1, 999, &mut out);
    d.enqueue(20 * MS, 2, 1000, &mut out);
    d.poll(S, &mut out);
    let s: Vec<u64> = sent(&out).iter().map(|x| x.0).collect();
    assert_eq!(s, vec![1]);
    assert_eq!(d.counters().drops_queue, 2);
}

#[test]
fn oversized_frames_are_counted_and_dropped() {
    let mut d = direction(r#"{"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 10}}"#);
    let mut out = Vec::new();
    d.enqueue(0, 0, 1514, &mut out);
    d.enqueue(0, 1, 1515, &mut out);
    assert_eq!(sent(&out), vec![(0, 0)]);
    assert_eq!(d.counters().oversized, 1);
    assert_eq!(d.counters().arrivals, 2);
}

#[test]
fn queue_delay_is_recorded() {
    let mut d = direction(
        r#"{"rate": {"kind": "constant", "rate_bps": 8000000}, "queue": {"limit_packets": 10}}"#,
    );
    let mut out = Vec::new();
    for i in 0..3 {
        d.enqueue(0, i, 1000, &mut out);
    }
    d.poll(S, &mut out);
    let agg = d.take_interval_delay();
    assert_eq!((agg.count, agg.max_ns), (3, 3 * MS));
    assert_eq!(agg.mean_ns(), 2e6);
    assert_eq!(d.take_interval_delay().count, 0);
}

#[test]
fn schedule_wraps_and_spans_segments() {
    // 8 Mbit/s for 1 s, then 0 for 1 s, looping every 2 s.
    let s = Schedule::new(vec![(0, 8_000_000), (1000 * MS, 0)], 2000 * MS, true);
    assert_eq!(s.finish(0, 1000), Some(MS));
    // Starts 0.5 ms before the outage: 500 B now, 500 B after the wrap.
    assert_eq!(s.finish(999_500_000, 1000), Some(2000 * MS + 500_000));
    assert_eq!(s.finish(5500 * MS, 1000), Some(6001 * MS));
    let got = saturate(
        r#"{"kind": "schedule", "points": [[0, 8000000], [1000, 0]], "period_ms": 2000, "loop": true}"#,
        1000,
        500_000,
        10 * S,
    );
    assert!((got as f64 - 5e6).abs() < 2000.0, "bytes_out {got}");
}

#[test]
fn schedule_without_loop_holds_last_rate() {
    let s = Schedule::new(vec![(0, 8_000_000), (10 * MS, 16_000_000)], 0, false);
    assert_eq!(s.finish(100 * S, 2000), Some(100 * S + MS));
    let dead = Schedule::new(vec![(0, 8_000_000), (10 * MS, 0)], 0, false);
    assert_eq!(dead.finish(20 * MS, 1), None);
}

#[test]
fn opportunities_carry_partial_bytes() {
    let mut d = direction(
        r#"{"rate": {"kind": "opportunities", "times_ms": [1, 10], "period_ms": 20,
        "bytes_per_opportunity": 1500}, "queue": {"limit_packets": 10}}"#,
    );
    let mut out = Vec::new();
    for i in 0..3 {
        d.enqueue(0, i, 1000, &mut out);
    }
    d.poll(S, &mut out);
    // 1 ms: packet 0 and 500 B of packet 1; 10 ms: the rest of 1 and all of 2.
    assert_eq!(sent(&out), vec![(0, MS), (1, 10 * MS), (2, 10 * MS)]);
}

#[test]
fn opportunities_wrap_and_waste_when_idle() {
    // 4 opportunities of 1500 B per 4 ms = 12 Mbit/s.
    let rate = r#"{"kind": "opportunities", "times_ms": [0, 0, 1, 3], "period_ms": 4, "bytes_per_opportunity": 1500, "loop": true}"#;
    let got = saturate(rate, 1500, 500_000, S);
    assert!((got as i64 - 1_500_000).abs() <= 3000, "bytes_out {got}");
    // Idle link: opportunities that met an empty queue are gone.
    let mut d = direction(&format!(
        r#"{{"rate": {rate}, "queue": {{"limit_packets": 10}}}}"#
    ));
    let mut out = Vec::new();
    d.enqueue(5 * S + 2 * MS, 0, 1500, &mut out);
    d.enqueue(5 * S + 2 * MS, 1, 1500, &mut out);
    d.poll(6 * S, &mut out);
    assert_eq!(sent(&out), vec![(0, 5 * S + 3 * MS), (1, 5 * S + 4 * MS)]);
}

#[test]
fn an_opportunity_at_the_period_is_mahimahis_last_line() {
    // A Mahimahi file whose last line (the period) is an opportunity, as every file that
    // priolab's trace tools write and as mahimahi replays it: at 4, 8, 12 ... ms, i.e. one
    // per loop at the loop's end, the same rate as one at its start.
    let rate = r#"{"kind": "opportunities", "times_ms": [2, 4], "period_ms": 4, "bytes_per_opportunity": 1500, "loop": true}"#;
    let mut d = direction(&format!(
        r#"{{"rate": {rate}, "queue": {{"limit_packets": 10}}}}"#
    ));
    let mut out = Vec::new();
    for i in 0..4 {
        d.enqueue(0, i, 1500, &mut out);
    }
    d.poll(S, &mut out);
    assert_eq!(
        sent(&out),
        vec![(0, 2 * MS), (1, 4 * MS), (2, 6 * MS), (3, 8 * MS)]
    );
    let got = saturate(rate, 1500, 500_000, S);
    assert!((got as i64 - 750_000).abs() <= 3000, "bytes_out {got}");
}

#[test]
fn opportunity_at_arrival_instant_serves_the_packet() {
    let mut d = direction(
        r#"{"rate": {"kind": "opportunities", "times_ms": [1], "period_ms": 4,
        "bytes_per_opportunity": 1500}, "queue": {"limit_packets": 10}}"#,
    );
    let mut out = Vec::new();
    d.enqueue(MS, 0, 100, &mut out);
    assert_eq!(sent(&out), vec![(0, MS)]);
}

#[test]
fn next_departure_skips_server_events_by_the_delay() {
    let mut d = direction(
        r#"{"rate": {"kind": "constant", "rate_bps": 8000000}, "delay_us": 5000,
            "queue": {"limit_packets": 10}}"#,
    );
    let mut out = Vec::new();
    d.enqueue(0, 1, 1000, &mut out);
    // 1000 bytes at 8 Mbit/s: the server finishes at 1 ms, the packet exits at 6 ms.
    assert_eq!(d.next_wakeup_ns(), Some(MS));
    assert_eq!(d.next_departure_ns(), Some(6 * MS));
    // Advancing late (at 6 ms, not at 1 ms) gives the exact exit.
    d.poll(6 * MS, &mut out);
    assert_eq!(sent(&out), vec![(1, 6 * MS)]);
    assert_eq!(d.next_departure_ns(), None);
}

/// `batch_departure_ns`: the latest exit within the bound of the next one, for the FIFO delay
/// line and the reordering one alike; 0 gives the next departure itself.
#[test]
fn batch_departure_is_the_last_exit_within_the_bound() {
    for reorder in [false, true] {
        let mut d = direction(&format!(
            r#"{{"rate": {{"kind": "unlimited"}}, "delay_us": 1000, "jitter_reorder": {reorder},
                 "queue": {{"limit_packets": 100}}}}"#
        ));
        let mut out = Vec::new();
        for (i, t) in [0u64, 100_000, 250_000, 600_000].into_iter().enumerate() {
            d.enqueue(t, i as u64, 100, &mut out);
        }
        assert_eq!(d.next_departure_ns(), Some(MS));
        assert_eq!(d.batch_departure_ns(0), Some(MS));
        assert_eq!(d.batch_departure_ns(200_000), Some(MS + 100_000));
        assert_eq!(d.batch_departure_ns(250_000), Some(MS + 250_000));
        assert_eq!(d.batch_departure_ns(10 * MS), Some(MS + 600_000));
        d.poll(MS + 250_000, &mut out);
        assert_eq!(sent(&out).len(), 3, "reorder {reorder}");
        assert_eq!(d.batch_departure_ns(100_000), Some(MS + 600_000));
    }
}

/// A frame still in the rate server counts at its earliest exit (finish + delay).
#[test]
fn batch_departure_counts_the_frame_in_service() {
    // 1 Mbit/s: a 125-byte frame takes 1 ms; 1 ms delay.
    let mut d = direction(
        r#"{"rate": {"kind": "constant", "rate_bps": 1000000}, "delay_us": 1000,
            "queue": {"limit_packets": 100}}"#,
    );
    let mut out = Vec::new();
    d.enqueue(0, 0, 125, &mut out);
    d.poll(MS, &mut out);
    d.enqueue(MS, 1, 125, &mut out);
    // Frame 0 exits at 2 ms, frame 1 (in service until 2 ms) at 3 ms.
    assert_eq!(d.batch_departure_ns(500_000), Some(2 * MS));
    assert_eq!(d.batch_departure_ns(MS), Some(3 * MS));
}
