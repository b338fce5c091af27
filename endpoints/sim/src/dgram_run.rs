//! A ready-made run of sim-dgram (a server on the host, a client on the guest), for the tests
//! and the benchmark: the link config and SPEC.json, written into a folder.

use serde_json::{json, Value};
use std::io;
use std::path::{Path, PathBuf};

/// One direction of a link: `rate` (linkem's rate JSON), 10.5 ms, iid loss `p`, a 131,250-byte
/// tail-drop queue.
pub fn direction(rate: Value, p: f64) -> Value {
    json!({"rate": rate, "delay_us": 10_500, "jitter_us": 0, "jitter_reorder": false,
           "loss": {"kind": "iid", "p": p},
           "queue": {"limit_bytes": 131_250, "limit_packets": null, "drop": "tail"}})
}

/// linkem's config with `way` both ways.
pub fn link(seed: u64, way: Value) -> Value {
    json!({"seed": seed, "mtu_bytes": 1500, "a_to_b": way, "b_to_a": way})
}

/// What the run is.
pub struct DgramRun {
    pub link: Value,
    pub rate_mbps: f64,
    pub duration_s: f64,
    /// The host's `recv_buffer_bytes` (null: unbounded).
    pub host_rcvbuf: Value,
}

impl DgramRun {
    /// Write `linkem.json`, `logs/` and `SPEC.json` into `dir`; the spec's path. The server
    /// logs to `logs/srv.csv`, the client to `logs/cli.csv` (relative paths, resolved
    /// against the processes' cwd, `dir`).
    pub fn write(&self, dir: &Path) -> io::Result<PathBuf> {
        std::fs::create_dir_all(dir.join("logs"))?;
        std::fs::write(dir.join("linkem.json"), self.link.to_string())?;
        let d = dir.to_string_lossy();
        let proc_ = |node: &str, name: &str, args: &str, at: f64| {
            let argv: Vec<&str> = args.split(' ').collect();
            json!({"node": node, "name": name, "argv": argv, "cwd": d, "start_at_s": at,
                   "runs_to_end": true, "ok_exit_codes": [0],
                   "stdout": format!("{d}/{name}.out"), "stderr": format!("{d}/{name}.err")})
        };
        let client = format!(
            "sim-dgram --role connect --connect 10.0.1.1:4433 --cert ./cert.der \
             --log logs/cli.csv --rate-mbps {} --duration-s {}",
            self.rate_mbps, self.duration_s
        );
        let spec = json!({
            "seed": 1, "epoch_unix_ns": 1_767_225_600_000_000_000u64,
            "deadline_s": self.duration_s + 10.0, "term_wait_s": 2.0,
            "link": {"config": format!("{d}/linkem.json"),
                     "stats": format!("{d}/linkem-stats.jsonl"), "stats_interval_ms": 1000},
            "nodes": {"guest": {"addr": "10.0.0.1", "side": "a", "recv_buffer_bytes": null},
                      "host": {"addr": "10.0.1.1", "side": "b", "recv_buffer_bytes": self.host_rcvbuf}},
            "processes": [
                proc_("host", "srv", "sim-dgram --role listen --bind 0.0.0.0:4433 \
                      --cert-out ./cert.der --log logs/srv.csv", 0.5),
                proc_("guest", "cli", &client, 1.0),
            ],
            "report": format!("{d}/sim-report.json"),
        });
        let p = dir.join("SPEC.json");
        std::fs::write(
            &p,
            serde_json::to_string_pretty(&spec).map_err(io::Error::other)?,
        )?;
        Ok(p)
    }
}
