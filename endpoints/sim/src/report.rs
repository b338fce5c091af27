//! sim-report.json: what the run cost and what happened, written atomically (a temporary
//! file in the same folder, then rename), so a reader never sees half a report.

use crate::run::Outcome;
use crate::spec::Spec;
use serde_json::{json, Map, Value};
use std::io;
use std::path::Path;

fn secs(ns: Option<u64>) -> Value {
    ns.map_or(Value::Null, |n| json!(n as f64 / 1e9))
}

/// The final counters of a direction: its final stats line without `t_s`, `dir`, `final`.
fn counters(line: &str) -> io::Result<Value> {
    let mut v: Map<String, Value> = serde_json::from_str(line).map_err(io::Error::other)?;
    for k in ["t_s", "dir", "final"] {
        v.remove(k);
    }
    Ok(Value::Object(v))
}

/// The report of `out` for `spec`; `wall_s` and `cpu_s` are what the run cost.
pub fn build(spec: &Spec, out: &Outcome, wall_s: f64, cpu_s: f64) -> io::Result<Value> {
    let virtual_s = out.virtual_ns as f64 / 1e9;
    let processes: Vec<Value> = spec
        .processes
        .iter()
        .zip(&out.processes)
        .map(|(p, o)| {
            json!({
                "node": p.node, "name": p.name, "exit_code": o.exit_code,
                "started_at_s": secs(o.started_at_ns), "ended_at_s": secs(o.ended_at_ns),
                "cancelled": o.cancelled,
            })
        })
        .collect();
    let sockets: Map<String, Value> = out
        .link
        .sockets
        .iter()
        .map(|(addr, s)| {
            let v = json!({
                "recv_buffer_drops": s.recv.recv_buffer_drops,
                "datagrams_received": s.recv.datagrams_received,
                "bytes_received": s.recv.bytes_received,
                "peak_recv_buffer_bytes": s.recv.peak_charged_bytes,
                "datagrams_sent": s.datagrams_sent,
            });
            (addr.to_string(), v)
        })
        .collect();
    Ok(json!({
        "virtual_s": virtual_s,
        "wall_s": wall_s,
        "cpu_s": cpu_s,
        "speedup": if wall_s > 0.0 { virtual_s / wall_s } else { 0.0 },
        "processes": processes,
        "link": {
            "a_to_b": counters(&out.link.final_lines[0])?,
            "b_to_a": counters(&out.link.final_lines[1])?,
            "no_socket_drops": out.link.no_socket_drops,
            "unroutable": out.link.unroutable,
        },
        "sockets": sockets,
        "errors": out.errors,
    }))
}

/// Write `v` to `path` atomically.
pub fn write_atomically(path: &Path, v: &Value) -> io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(v).map_err(io::Error::other)? + "\n";
    std::fs::write(&tmp, text)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}
