//! Figures from the simulated path in the paper's three settings ([RISE setup], section 4.1),
//! w/ and w/o prioritisation, from the Guest's perspective. Not a test: prints a table and,
//! with `--json FILE`, writes the rows as JSON.
//!
//! `cargo run --release -p rise-core --example paper_settings -- [--secs 10] [--json out.json]`
//!
//! Path model: Guest uplink as in the table, downlink 1 Gbit/s, RTT 21 ms split evenly,
//! drop-tail queue of one bandwidth-delay product, 40 B overhead per datagram, endpoints fed
//! to their link whenever its backlog is below one datagram (no congestion control).

use rise_core::sim::{LinkConfig, PathConfig, Sim, START_US};
use rise_core::{Config, Event, Role};

struct Setting {
    name: &'static str,
    up_bps: u64,
    video_bps: u64,
    fps: u32,
}

const SETTINGS: [Setting; 3] = [
    Setting {
        name: "5G/FHD/Low",
        up_bps: 20_000_000,
        video_bps: 10_000_000,
        fps: 30,
    },
    Setting {
        name: "FB/4K/Low",
        up_bps: 70_000_000,
        video_bps: 30_000_000,
        fps: 30,
    },
    Setting {
        name: "FB/4K/High",
        up_bps: 70_000_000,
        video_bps: 40_000_000,
        fps: 60,
    },
];

fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut secs = 10u64;
    let mut json = None;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--secs" => {
                secs = args
                    .get(i + 1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| {
                        eprintln!("--secs needs a positive integer");
                        std::process::exit(2)
                    });
                i += 1;
            }
            "--json" => {
                json = args.get(i + 1).cloned();
                i += 1;
            }
            other => {
                eprintln!("unknown argument {other}; allowed: --secs N, --json FILE");
                std::process::exit(2);
            }
        }
        i += 1;
    }
    let one_way_us = 10_500;
    let mut rows = Vec::new();
    println!(
        "{:<11} {:>4} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9}",
        "setting",
        "prio",
        "mtp_p50",
        "mtp_p95",
        "mtp_p99",
        "freeze/fr",
        "retx_H",
        "retx_G",
        "key_H"
    );
    for s in &SETTINGS {
        for prio in [true, false] {
            let cfg = |role, seed| Config {
                role,
                video_bitrate_bps: s.video_bps,
                fps: s.fps,
                prio,
                seed,
                ..Config::default()
            };
            let bdp = |bps: u64| (bps as u128 * 2 * one_way_us as u128 / 8 / 1_000_000) as usize;
            let link = |bps, seed| LinkConfig {
                rate_bps: bps,
                delay_us: one_way_us,
                queue_bytes: bdp(bps).max(3000),
                loss: 0.0,
                overhead_bytes: 40,
                seed,
            };
            let path = PathConfig {
                up: link(s.up_bps, 1),
                down: link(1_000_000_000, 2),
                nic_bytes: 1500,
            };
            let mut sim = Sim::new(cfg(Role::Host, 1), cfg(Role::Guest, 2), path);
            sim.run_until(START_US + secs * 1_000_000);
            let mut mtp: Vec<f64> = sim
                .guest_events
                .iter()
                .filter_map(|(_, e)| match e {
                    Event::FrameDisplayed { mtp_ms, .. } => *mtp_ms,
                    _ => None,
                })
                .collect();
            let g = sim.guest.counters();
            let h = sim.host.counters();
            let rate = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
            let row = (
                s.name,
                prio,
                quantile(&mut mtp, 0.5),
                quantile(&mut mtp, 0.95),
                quantile(&mut mtp, 0.99),
                rate(g.freezes, g.frames_displayed),
                rate(h.video_datagrams_retransmitted, h.video_datagrams_sent),
                rate(g.video_datagrams_retransmitted, g.video_datagrams_sent),
                rate(h.key_frames, h.frames_encoded),
            );
            println!(
                "{:<11} {:>4} {:>8.1} {:>8.1} {:>8.1} {:>9.4} {:>9.4} {:>9.4} {:>9.4}",
                row.0,
                if prio { "on" } else { "off" },
                row.2,
                row.3,
                row.4,
                row.5,
                row.6,
                row.7,
                row.8
            );
            rows.push(row);
        }
    }
    if let Some(path) = json {
        let body: Vec<String> = rows
            .iter()
            .map(|r| {
                format!(
                    "{{\"setting\":\"{}\",\"prio\":{},\"mtp_p50_ms\":{},\"mtp_p95_ms\":{},\"mtp_p99_ms\":{},\"freezes_per_frame\":{},\"retx_rate_host\":{},\"retx_rate_guest\":{},\"keyframe_rate_host\":{}}}",
                    r.0, r.1, r.2, r.3, r.4, r.5, r.6, r.7, r.8
                )
            })
            .collect();
        if let Err(e) = std::fs::write(&path, format!("[{}]\n", body.join(",\n"))) {
            eprintln!("writing {path}: {e}");
            std::process::exit(1);
        }
    }
}
