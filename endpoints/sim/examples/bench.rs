//! Benchmark: virtual ÷ wall time of one sim run (not a test: figures to read).
//!
//! `cargo run --release -p priolab-sim --example bench [-- RATE_MBPS DURATION_S]`
//!
//! sim-dgram sends RATE_MBPS (default 30) of 1100-byte QUIC datagrams for DURATION_S
//! (default 30) over a 70 Mbit/s, 10.5 ms link (both ways, 131,250-byte queues, no loss),
//! through the whole priolab-sim path (spec, processes, report). Prints virtual, wall and
//! CPU seconds and the speed-ups.

use priolab_sim::{cost, report, run, spec};
use serde_json::json;

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let rate_mbps = args.first().copied().unwrap_or(30.0);
    let duration_s = args.get(1).copied().unwrap_or(30.0);
    let dir = std::env::temp_dir().join(format!("priolab-sim-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let d = dir.to_str().expect("utf-8 path");
    let way = json!({"rate": {"kind": "constant", "rate_bps": 70_000_000}, "delay_us": 10_500,
        "jitter_us": 0, "jitter_reorder": false, "loss": {"kind": "none"},
        "queue": {"limit_bytes": 131_250, "limit_packets": null, "drop": "tail"}});
    let link = json!({"seed": 1, "mtu_bytes": 1500, "a_to_b": way, "b_to_a": way});
    std::fs::write(dir.join("linkem.json"), link.to_string()).expect("link config");
    let proc_ = |node: &str, name: &str, argv: Vec<String>, at: f64| {
        json!({"node": node, "name": name, "argv": argv, "cwd": d, "start_at_s": at,
               "runs_to_end": true, "ok_exit_codes": [0],
               "stdout": format!("{d}/{name}.out"), "stderr": format!("{d}/{name}.err")})
    };
    let argv = |a: &str| a.split(' ').map(String::from).collect::<Vec<_>>();
    let spec_json = json!({
        "seed": 1, "epoch_unix_ns": 1_767_225_600_000_000_000u64,
        "deadline_s": duration_s + 10.0, "term_wait_s": 2.0,
        "link": {"config": format!("{d}/linkem.json"), "stats": format!("{d}/linkem-stats.jsonl"),
                 "stats_interval_ms": 1000},
        "nodes": {"guest": {"addr": "10.0.0.1", "side": "a", "recv_buffer_bytes": null},
                  "host": {"addr": "10.0.1.1", "side": "b", "recv_buffer_bytes": null}},
        "processes": [
            proc_("host", "srv", argv(&format!("sim-dgram --role listen --cert-out {d}/cert.der --log {d}/srv.csv")), 0.5),
            proc_("guest", "cli", argv(&format!(
                "sim-dgram --role connect --connect 10.0.1.1:4433 --cert {d}/cert.der --log {d}/cli.csv --rate-mbps {rate_mbps} --duration-s {duration_s}")), 1.0),
        ],
        "report": format!("{d}/sim-report.json"),
    });
    let path = dir.join("SPEC.json");
    let spec = spec::parse(&path, &spec_json.to_string()).expect("the bench spec is valid");
    let cfg = linkem::parse_config(&link.to_string()).expect("the bench link is valid");
    let meter = cost::Meter::start();
    let out = run::run(&spec, cfg).expect("the run runs");
    let (wall_s, cpu_s) = meter.read();
    let r = report::build(&spec, &out, wall_s, cpu_s).expect("report");
    let virtual_s = out.virtual_ns as f64 / 1e9;
    let packets = r["link"]["a_to_b"]["departures"].as_u64().unwrap_or(0)
        + r["link"]["b_to_a"]["departures"].as_u64().unwrap_or(0);
    println!("sim-dgram {rate_mbps} Mbit/s for {duration_s} s over 70 Mbit/s, 10.5 ms:");
    println!(
        "  exit codes {:?}",
        out.processes
            .iter()
            .map(|p| p.exit_code)
            .collect::<Vec<_>>()
    );
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
