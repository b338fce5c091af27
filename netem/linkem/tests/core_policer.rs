//! The token-bucket policer in virtual time: a burst above the bucket is cut, the long-run
//! rate is the configured rate, and a packet never waits (it passes at once or is dropped).

mod common;
use common::*;
use linkem::{DropCause, Event};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const FRAME: u64 = 1514;

fn policer(rate_bps: u64, burst_bytes: u64, delay_us: u64) -> linkem::Direction<u64> {
    direction(&format!(
        r#"{{"rate": {{"kind": "policer", "rate_bps": {rate_bps}, "burst_bytes": {burst_bytes}}},
            "delay_us": {delay_us}}}"#
    ))
}

fn police_drops(events: &[Event<u64>]) -> Vec<u64> {
    dropped(events, DropCause::Police)
}

#[test]
fn a_burst_above_the_bucket_is_cut() {
    // Bucket of 10 full frames; 30 frames arrive back to back at t = 1 s (bucket full).
    let mut d = policer(10_000_000, 10 * FRAME, 0);
    let mut out = Vec::new();
    for i in 0..30 {
        d.enqueue(S, i, FRAME, &mut out);
    }
    let passed: Vec<u64> = sent(&out).iter().map(|x| x.0).collect();
    assert_eq!(passed, (0..10).collect::<Vec<_>>());
    assert_eq!(police_drops(&out), (10..30).collect::<Vec<_>>());
    let c = d.counters();
    assert_eq!((c.departures, c.drops_police, c.drops_queue), (10, 20, 0));
    assert_eq!(d.queue_bytes(), 0);
    assert_eq!(d.in_flight(), 0);
}

#[test]
fn tokens_refill_at_the_rate_exactly() {
    // 12.112 Mbit/s: one 1514-byte frame's tokens take exactly 1 ms to come back.
    let mut d = policer(12_112_000, FRAME, 0);
    let mut out = Vec::new();
    d.enqueue(0, 0, FRAME, &mut out); // the bucket starts full
    d.enqueue(MS - 1, 1, FRAME, &mut out); // one ns short of a frame's tokens
    d.enqueue(MS, 2, FRAME, &mut out); // the failed frame took nothing: tokens for one frame
    d.enqueue(MS, 3, 100, &mut out); // empty again
    d.enqueue(2 * MS, 4, 100, &mut out);
    assert_eq!(sent(&out), vec![(0, 0), (2, MS), (4, 2 * MS)]);
    assert_eq!(police_drops(&out), vec![1, 3]);
}

#[test]
fn the_long_run_rate_equals_the_rate() {
    // Offer twice the rate as full frames, evenly, for 10 s: what passes is the bucket's
    // initial content plus rate × time, less at most one frame.
    let rate_bps = 20_000_000;
    let burst = 25_000;
    let mut d = policer(rate_bps, burst, 0);
    let mut out = Vec::new();
    let gap_ns = FRAME * 8 * S / (2 * rate_bps);
    let end = 10 * S;
    let (mut t, mut i) = (0, 0);
    while t < end {
        d.enqueue(t, i, FRAME, &mut out);
        out.clear();
        t += gap_ns;
        i += 1;
    }
    let last_arrival = t - gap_ns;
    let bound = burst + rate_bps * last_arrival / 8 / S;
    let got = d.counters().bytes_out;
    assert!(got <= bound && got + FRAME > bound, "{got} vs {bound}");
    // And half of what was offered was dropped (2× overload), to within the bucket.
    let c = d.counters();
    let dropped_share = c.drops_police as f64 / c.arrivals as f64;
    assert!((dropped_share - 0.5).abs() < 0.005, "{dropped_share}");
}

#[test]
fn a_packet_never_waits() {
    // Random sizes and arrival times around the rate: every packet leaves exactly
    // `delay` after it arrived, or is dropped on arrival; nothing is ever queued.
    let mut d = policer(10_000_000, 8_000, 5_000);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut out = Vec::new();
    let mut arrivals = Vec::new();
    let mut t = 0;
    for i in 0..20_000u64 {
        t += rng.gen_range(0..1_000_000u64); // ~12.6 Mbit/s offered
        let bytes = rng.gen_range(64..=FRAME);
        arrivals.push(t);
        d.enqueue(t, i, bytes, &mut out);
        assert_eq!(d.queue_bytes(), 0);
    }
    d.poll(t + S, &mut out);
    let mut sent_n = 0;
    for e in &out {
        match e {
            Event::Sent { pkt, at_ns } => {
                assert_eq!(*at_ns, arrivals[pkt.payload as usize] + 5 * MS);
                sent_n += 1;
            }
            Event::Dropped { pkt, at_ns, cause } => {
                assert_eq!(*cause, DropCause::Police);
                assert_eq!(*at_ns, arrivals[pkt.payload as usize]);
            }
        }
    }
    let c = d.counters();
    assert_eq!(c.queue_delay.max_ns, 0);
    assert!(sent_n > 1000 && c.drops_police > 1000, "{sent_n} {c:?}");
    assert_eq!(c.arrivals, c.departures + c.drops_police);
}

#[test]
fn loss_applies_after_the_policer() {
    // A conforming frame still meets the loss model (after the delay line), as on a shaper.
    let mut d = direction(
        r#"{"rate": {"kind": "policer", "rate_bps": 1000000000, "burst_bytes": 100000},
            "loss": {"kind": "iid", "p": 1.0}}"#,
    );
    let mut out = Vec::new();
    d.enqueue(0, 0, FRAME, &mut out);
    let c = d.counters();
    assert_eq!((c.drops_loss, c.drops_police, c.departures), (1, 0, 0));
}
