//! Benchmark: virtual ÷ wall time of one sim run (not a test: figures to read).
//!
//! `cargo run --release -p priolab-sim --example bench [-- RATE_MBPS DURATION_S]`
//!
//! sim-dgram sends RATE_MBPS (default 30) of 1100-byte QUIC datagrams for DURATION_S
//! (default 30) over a 70 Mbit/s, 10.5 ms link (both ways, 131,250-byte queues, no loss),
//! through the whole priolab-sim path (spec, processes, report). Prints virtual, wall and
//! CPU seconds and the speed-ups.

use priolab_sim::dgram_run::{self, DgramRun};
use priolab_sim::{cost, report, run, spec};
use serde_json::{json, Value};

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let rate_mbps = args.first().copied().unwrap_or(30.0);
    let duration_s = args.get(1).copied().unwrap_or(30.0);
    let dir = std::env::temp_dir().join(format!("priolab-sim-bench-{}", std::process::id()));
    let way = dgram_run::direction(json!({"kind": "constant", "rate_bps": 70_000_000}), 0.0);
    let link = dgram_run::link(1, way);
    let path = DgramRun {
        link: link.clone(),
        rate_mbps,
        duration_s,
        host_rcvbuf: Value::Null,
    }
    .write(&dir)
    .expect("scratch folder");
    let text = std::fs::read_to_string(&path).expect("the spec was written");
    let spec = spec::parse(&path, &text).expect("the bench spec is valid");
    let cfg = linkem::parse_config(&link.to_string()).expect("the bench link is valid");
    let meter = cost::Meter::start();
    let out = run::run(&spec, cfg).expect("the run runs");
    let (wall_s, cpu_s) = meter.read();
    let r = report::build(&spec, &out, wall_s, cpu_s).expect("report");
    let virtual_s = out.virtual_ns as f64 / 1e9;
    let packets = r["link"]["a_to_b"]["departures"].as_u64().unwrap_or(0)
        + r["link"]["b_to_a"]["departures"].as_u64().unwrap_or(0);
    println!("sim-dgram {rate_mbps} Mbit/s for {duration_s} s over 70 Mbit/s, 10.5 ms:");
    let codes: Vec<Option<u8>> = out.processes.iter().map(|p| p.exit_code).collect();
    println!("  exit codes {codes:?}");
    println!("  packets over the link {packets}");
    println!("  virtual {virtual_s:.2} s, wall {wall_s:.3} s, cpu {cpu_s:.3} s");
    println!(
        "  virtual / wall {:.1}x, virtual / cpu {:.1}x",
        virtual_s / wall_s,
        virtual_s / cpu_s
    );
    println!(
        "  cpu per packet {:.2} us",
        cpu_s * 1e6 / packets.max(1) as f64
    );
    let _ = std::fs::remove_dir_all(&dir);
}
