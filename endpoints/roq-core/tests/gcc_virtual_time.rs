//! GCC in virtual time against the same bottleneck as SCReAM's test (1 → 0.5 → 1 Mbit/s,
//! 50 ms one way, a 400 ms drop-tail queue): the sender paces each frame's packets over the
//! frame interval, feedback every 20 ms. GCC ramps up, backs off in the dip, recovers.

use std::collections::VecDeque;

use roq_core::gcc::Gcc;

const DELAY_US: u64 = 50_000;
const QUEUE_BYTES: usize = 50_000;

fn capacity_bps(t_us: u64) -> f64 {
    if (30_000_000..50_000_000).contains(&t_us) {
        500_000.0
    } else {
        1_000_000.0
    }
}

type Feedback = Vec<(u64, Option<u64>)>;

#[test]
fn ramps_up_backs_off_in_the_dip_and_recovers() {
    let mut g = Gcc::new(100_000.0, 2_000_000.0, 300_000.0);
    let mut pending: VecDeque<(u64, usize)> = VecDeque::new(); // (send at µs, bytes)
    let mut link: VecDeque<(u64, usize)> = VecDeque::new();
    let (mut link_bytes, mut busy_until, mut seq) = (0usize, 0u64, 0u64);
    let mut sent_seq: VecDeque<(u64, usize)> = VecDeque::new();
    let mut prop: VecDeque<(u64, u64)> = VecDeque::new();
    let mut arrivals: Feedback = Vec::new();
    let mut fb: VecDeque<(u64, Feedback)> = VecDeque::new();
    let mut log: Vec<(u64, f64, f64)> = Vec::new();
    let mut t = 0u64;
    while t < 90_000_000 {
        if t.is_multiple_of(40_000) {
            let mut bytes = (g.target_bitrate_bps() / 8.0 / 25.0) as usize;
            let n = bytes.div_ceil(1200).max(1) as u64;
            let mut k = 0;
            while bytes > 0 {
                let b = bytes.min(1200);
                pending.push_back((t + k * 40_000 / n, b));
                bytes -= b;
                k += 1;
            }
        }
        while pending.front().is_some_and(|&(at, _)| at <= t) {
            let (_, b) = pending.pop_front().unwrap();
            g.on_sent(t, seq, b);
            sent_seq.push_back((seq, b));
            if link_bytes + b <= QUEUE_BYTES {
                link.push_back((seq, b));
                link_bytes += b;
            } else {
                arrivals.push((seq, None));
            }
            seq += 1;
        }
        if t >= busy_until {
            if let Some((s, b)) = link.pop_front() {
                link_bytes -= b;
                let ser = (b as f64 * 8.0 / capacity_bps(t) * 1e6) as u64;
                busy_until = t + ser;
                prop.push_back((t + ser + DELAY_US, s));
            }
        }
        while prop.front().is_some_and(|&(a, _)| a <= t) {
            let (a, s) = prop.pop_front().unwrap();
            arrivals.push((s, Some(a + 3_000_000))); // receiver clock offset: cancels
        }
        if t.is_multiple_of(20_000) && !arrivals.is_empty() {
            let mut r = std::mem::take(&mut arrivals);
            r.sort();
            fb.push_back((t + DELAY_US, r));
        }
        while fb.front().is_some_and(|&(a, _)| a <= t) {
            let (_, r) = fb.pop_front().unwrap();
            g.on_feedback(t, &r);
        }
        if t.is_multiple_of(100_000) {
            let qd = link_bytes as f64 * 8.0 / capacity_bps(t) * 1e6;
            log.push((t, g.target_bitrate_bps(), qd));
        }
        t += 1000;
    }
    let mean = |a: u64, b: u64| {
        let v: Vec<f64> = log
            .iter()
            .filter(|x| (a..b).contains(&x.0))
            .map(|x| x.1)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (before, dip, after) = (
        mean(20_000_000, 30_000_000),
        mean(38_000_000, 50_000_000),
        mean(75_000_000, 90_000_000),
    );
    let qmax = log
        .iter()
        .filter(|x| (38_000_000..50_000_000).contains(&x.0))
        .map(|x| x.2)
        .fold(0.0, f64::max);
    eprintln!(
        "gcc target before {before:.0} dip {dip:.0} after {after:.0}; dip queue max {qmax:.0} µs"
    );
    assert!(
        before > 600_000.0 && before < 1_100_000.0,
        "ramp-up: {before}"
    );
    assert!(dip < 550_000.0, "back-off in the dip: {dip}");
    assert!(after > 600_000.0, "recovery: {after}");
}
