//! Whole runs: determinism, and the mechanism behind prioritisation's effect (issue 10).

use rise_sim::metrics::summarize;
use rise_sim::run::Run;
use rise_sim::scenario::{Loss, Params, Scheme};
use serde_json::Value;

fn run(p: &Params) -> Value {
    let mut r = Run::new(p.run_config());
    r.run();
    summarize(&r, p.warmup_s)
}

fn f(v: &Value, path: &[&str]) -> f64 {
    let mut x = v;
    for k in path {
        x = &x[*k];
    }
    x.as_f64().unwrap_or_else(|| panic!("{path:?} is {x}"))
}

fn params(scheme: Scheme, loss_pct: f64) -> Params {
    Params {
        scheme,
        duration_s: 15.0,
        up_loss: if loss_pct > 0.0 {
            Loss::Iid { pct: loss_pct }
        } else {
            Loss::None
        },
        ..Params::default()
    }
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    let mut p = params(Scheme::Pri, 0.05);
    p.duration_s = 6.0;
    let a = run(&p);
    assert_eq!(a, run(&p));
    p.seed = 2;
    assert_ne!(a, run(&p));
}

#[test]
fn one_bdp_no_loss_b_stays_empty_and_schemes_agree() {
    let pri = run(&params(Scheme::Pri, 0.0));
    let nopri = run(&params(Scheme::NoPriTail, 0.0));
    for m in [&pri, &nopri] {
        assert_eq!(f(m, &["guest_endpoint", "b_occupancy_bytes_p90"]), 0.0);
        assert_eq!(f(m, &["guest", "stall_s"]), 0.0);
    }
    let (a, b) = (
        f(&pri, &["guest", "mtp_median_ms"]),
        f(&nopri, &["guest", "mtp_median_ms"]),
    );
    assert!((a - b).abs() < 2.0, "{a} vs {b}");
}

#[test]
fn random_uplink_loss_makes_fifo_wait_and_priority_not() {
    let pri = run(&params(Scheme::Pri, 0.05));
    let nopri = run(&params(Scheme::NoPriTail, 0.05));
    let (a, b) = (
        f(&pri, &["guest", "mtp_median_ms"]),
        f(&nopri, &["guest", "mtp_median_ms"]),
    );
    assert!(b > 3.0 * a, "w/o Pri {b} ms vs w/ Pri {a} ms");
    // the Guest's sender is held by its window and B holds a standing queue
    assert!(f(&nopri, &["guest_endpoint", "window_limited_frac"]) > 0.5);
    assert!(f(&nopri, &["guest_endpoint", "b_occupancy_bytes_p50"]) > 100_000.0);
}

#[test]
fn nopri_is_the_channels_fifo_with_head_drop() {
    // the rise binary's `--prio off` default: B's oldest datagrams go first (evicted), where
    // the tail-drop variant refuses the new one (dropped at ingress, nothing evicted)
    let head = run(&params(Scheme::NoPri, 0.05));
    let tail = run(&params(Scheme::NoPriTail, 0.05));
    let evicted = |m: &Value| {
        ["video", "ack"]
            .iter()
            .map(|c| f(m, &["guest_endpoint", "channels", c, "evicted"]))
            .sum::<f64>()
    };
    assert!(evicted(&head) > 1000.0, "{}", evicted(&head));
    assert_eq!(evicted(&tail), 0.0);
    // both hand datagrams to quinn's small buffer, none is dropped inside quinn
    assert_eq!(
        f(
            &head,
            &["guest_endpoint", "channels", "video", "dropped_in_quinn"]
        ),
        0.0
    );
}

#[test]
fn downlink_loss_with_evicted_acks_makes_pri_stall() {
    // issue 10: the real w/ Pri runs lose Host packets on a loss-free downlink (at the Guest's
    // socket) and stall until the Host's next deadline key frame, because the Guest evicts
    // the ACKs that would make the Host retransmit. The same losses here do the same.
    let mut p = params(Scheme::Pri, 0.1);
    let clean = run(&p);
    p.down_loss = Loss::GeMean {
        pct: 0.2,
        burst_pkts: 50.0,
    };
    let lossy = run(&p);
    assert_eq!(f(&clean, &["host", "lost_packets"]), 0.0);
    assert_eq!(f(&clean, &["guest", "stall_s"]), 0.0);
    assert!(f(&lossy, &["host", "lost_packets"]) > 0.0);
    // the Host's controller backs off on those losses: its window shrinks
    assert!(f(&lossy, &["host", "congestion_events"]) > 0.0);
    assert!(f(&lossy, &["host", "cwnd_bytes_p50"]) < 0.8 * f(&clean, &["host", "cwnd_bytes_p50"]));
    // most ACKs are evicted at the Guest, so a lost fragment waits for the deadline's key frame
    assert!(f(&lossy, &["guest_endpoint", "channels", "ack", "evicted"]) > 10_000.0);
    assert!(
        f(&lossy, &["guest", "stall_s"]) >= 1.0,
        "{}",
        f(&lossy, &["guest", "stall_s"])
    );
}

#[test]
fn a_receiver_slower_than_its_arrivals_starves_its_own_sending() {
    // `rx_cost_us`: 300 µs per received packet is more than the Host's packet interval at
    // 30 Mbit/s (≈ 370 µs per 1.4 kB, plus tracking and ACKs), so the Guest's thread is rarely
    // free to refill quinn's buffer and its uplink carries far fewer packets
    let mut p = params(Scheme::NoPri, 0.0);
    p.duration_s = 6.0;
    let free = run(&p);
    p.rx_cost_us = 300.0;
    let busy = run(&p);
    let sent = |m: &Value| f(m, &["guest_endpoint", "sent_packets"]);
    assert!(
        sent(&busy) < 0.7 * sent(&free),
        "{} vs {}",
        sent(&busy),
        sent(&free)
    );
}
