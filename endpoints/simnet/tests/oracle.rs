//! simnet against linkem's core itself: for links of every kind, the datagrams a socket
//! receives and when are exactly what a bare `linkem::Direction` fed the same frames at the
//! same times releases (the oracle), so simnet adds and loses nothing.

mod common;
use common::*;
use std::time::Duration;

/// Bursts of datagrams: (ms, count, payload bytes).
const SENDS: &[(u64, u32, usize)] = &[
    (0, 12, 1200),
    (1, 3, 100),
    (5, 20, 1400),
    (7, 1, 50),
    (12, 8, 900),
    (30, 40, 1200),
    (31, 5, 300),
];

/// (tag, exit ns) of what the core releases, fed as linkem's shell feeds it.
fn oracle(cfg: &linkem::Config) -> Vec<(u32, u64)> {
    let mut d = linkem::Direction::new(&cfg.a_to_b, cfg.mtu_bytes, cfg.seed, 0);
    let mut ev = Vec::new();
    let mut tag = 0u32;
    for &(ms, n, size) in SENDS {
        for _ in 0..n {
            d.enqueue(
                ms * 1_000_000,
                tag,
                size as u64 + simnet::FRAME_OVERHEAD_BYTES,
                &mut ev,
            );
            tag += 1;
        }
    }
    d.poll(u64::MAX / 2, &mut ev);
    let mut out: Vec<(u32, u64)> = ev
        .into_iter()
        .filter_map(|e| match e {
            linkem::Event::Sent { pkt, at_ns } => Some((pkt.payload, at_ns)),
            linkem::Event::Dropped { .. } => None,
        })
        .collect();
    out.sort_by_key(|&(tag, t)| (t, tag));
    out
}

/// (tag, arrival ns) of what the host's socket receives over simnet.
fn simulated(cfg: linkem::Config) -> Vec<(u32, u64)> {
    let rt = simnet::build().unwrap();
    rt.rt.block_on(async {
        let net = net(&rt, cfg, None, None);
        let a = bind(&net, GUEST, 5000);
        let b = bind(&net, HOST, 6000);
        let origin = tokio::time::Instant::now();
        let sender = tokio::spawn(async move {
            let mut tag = 0u32;
            for &(ms, n, size) in SENDS {
                tokio::time::sleep_until(origin + Duration::from_millis(ms)).await;
                for _ in 0..n {
                    let mut p = vec![0u8; size];
                    p[..4].copy_from_slice(&tag.to_be_bytes());
                    send(&*a, addr(HOST, 6000), &p);
                    tag += 1;
                }
            }
        });
        let mut got = Vec::new();
        while let Ok((t, _, p)) =
            tokio::time::timeout(Duration::from_secs(10), recv(&net, &*b)).await
        {
            got.push((u32::from_be_bytes(p[..4].try_into().unwrap()), t));
        }
        sender.await.unwrap();
        got.sort_by_key(|&(tag, t)| (t, tag));
        got
    })
}

fn check(name: &str, dir: &str) {
    let cfg = link(9, dir);
    let want = oracle(&cfg);
    assert!(!want.is_empty(), "{name}: the oracle delivers nothing");
    assert_eq!(simulated(cfg), want, "{name}");
}

const QUEUE: &str = r#""queue": {"limit_bytes": 20000, "limit_packets": null, "drop": "tail"}"#;
const PLAIN: &str =
    r#""delay_us": 3000, "jitter_us": 0, "jitter_reorder": false, "loss": {"kind": "none"}"#;

#[test]
fn a_rate_schedule() {
    let rate = r#"{"kind": "schedule", "points": [[0, 8000000], [4, 2000000], [9, 50000000]], "period_ms": 20, "loop": true}"#;
    check(
        "schedule",
        &format!(r#"{{"rate": {rate}, {PLAIN}, {QUEUE}}}"#),
    );
}

#[test]
fn delivery_opportunities() {
    let rate = r#"{"kind": "opportunities", "times_ms": [0, 0, 1, 3], "period_ms": 4, "bytes_per_opportunity": 1500, "loop": true}"#;
    check(
        "opportunities",
        &format!(r#"{{"rate": {rate}, {PLAIN}, {QUEUE}}}"#),
    );
}

#[test]
fn a_policer() {
    let rate = r#"{"kind": "policer", "rate_bps": 4000000, "burst_bytes": 6000}"#;
    check("policer", &format!(r#"{{"rate": {rate}, {PLAIN}}}"#));
}

#[test]
fn gilbert_elliott_loss_jitter_with_reordering_and_head_drop() {
    let dir = r#"{"rate": {"kind": "constant", "rate_bps": 20000000}, "delay_us": 5000,
        "jitter_us": 2000, "jitter_reorder": true,
        "loss": {"kind": "gilbert_elliott", "p": 0.1, "r": 0.3, "h": 0.2, "k": 0.95},
        "queue": {"limit_bytes": null, "limit_packets": 15, "drop": "head"}}"#;
    check("GE + jitter + head drop", dir);
}
