//! Benchmark: virtual ÷ wall time of one sim run (not a test: figures to read).
//!
//! `cargo run --release -p priolab-sim --example bench [-- RATE_MBPS DURATION_S]`
//! `cargo run --release -p priolab-sim --example bench -- SPEC.json`
//!
//! sim-dgram sends RATE_MBPS (default 30) of 1100-byte QUIC datagrams for DURATION_S
//! (default 30) over a 70 Mbit/s, 10.5 ms link (both ways, 131,250-byte queues, no loss),
//! through the whole priolab-sim path (spec, processes, report); or any run's SPEC.json (a
//! workload's, as the sim site writes it; its outputs are written where it says). Prints
//! virtual, wall and CPU seconds, the speed-ups and CPU per packet over the link.

use priolab_sim::dgram_run::{self, DgramRun};
use priolab_sim::{alloc_tuning, cost, report, run, spec};
use serde_json::{json, Value};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, scratch) = match args.first() {
        Some(a) if a.ends_with(".json") => (std::path::PathBuf::from(a), None),
        _ => {
            let n: Vec<f64> = args.iter().map(|a| a.parse().expect("a number")).collect();
            let (rate_mbps, duration_s) = (
                n.first().copied().unwrap_or(30.0),
                n.get(1).copied().unwrap_or(30.0),
            );
            println!("sim-dgram {rate_mbps} Mbit/s for {duration_s} s over 70 Mbit/s, 10.5 ms:");
            let dir =
                std::env::temp_dir().join(format!("priolab-sim-bench-{}", std::process::id()));
            let way =
                dgram_run::direction(json!({"kind": "constant", "rate_bps": 70_000_000}), 0.0);
            let run = DgramRun {
                link: dgram_run::link(1, way),
                rate_mbps,
                duration_s,
                host_rcvbuf: Value::Null,
            };
            (run.write(&dir).expect("scratch folder"), Some(dir))
        }
    };
    let text = std::fs::read_to_string(&path).expect("the spec is readable");
    let spec = spec::parse(&path, &text).unwrap_or_else(|e| panic!("{e}"));
    let link_text =
        std::fs::read_to_string(&spec.link.config).expect("the link config is readable");
    let cfg = linkem::parse_config(&link_text).expect("the link config is valid");
    alloc_tuning::apply();
    let meter = cost::Meter::start();
    let out = run::run(&spec, cfg).expect("the run runs");
    let (wall_s, cpu_s) = meter.read();
    let r = report::build(&spec, &out, wall_s, cpu_s).expect("report");
    let virtual_s = out.virtual_ns as f64 / 1e9;
    let packets = r["link"]["a_to_b"]["departures"].as_u64().unwrap_or(0)
        + r["link"]["b_to_a"]["departures"].as_u64().unwrap_or(0);
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
    if let Some(dir) = scratch {
        let _ = std::fs::remove_dir_all(dir);
    }
}
