//! The per-second stats line of the contract, built from cumulative counters.

use crate::direction::{Counters, DelayAgg};

/// Turns cumulative counters into per-interval lines.
#[derive(Debug, Default)]
pub struct StatsTracker {
    prev: Counters,
}

/// Extra numbers the I/O shell adds (beyond the contract's keys).
#[derive(Debug, Clone, Copy, Default)]
pub struct ShellExtras {
    pub tx_errors: u64,
    pub log_dropped: u64,
}

impl StatsTracker {
    /// The line for the interval ending at `t_s`; `delay` is that interval's queueing delays.
    pub fn interval_line(
        &mut self,
        t_s: f64,
        dir: &str,
        cur: &Counters,
        delay: DelayAgg,
        queue_bytes: u64,
        extras: ShellExtras,
    ) -> String {
        let p = self.prev;
        self.prev = *cur;
        let d = Counters {
            arrivals: cur.arrivals - p.arrivals,
            departures: cur.departures - p.departures,
            bytes_out: cur.bytes_out - p.bytes_out,
            drops_queue: cur.drops_queue - p.drops_queue,
            drops_loss: cur.drops_loss - p.drops_loss,
            oversized: cur.oversized - p.oversized,
            queue_delay: delay,
        };
        line(t_s, dir, &d, queue_bytes, extras, false)
    }

    /// The final line: totals over the whole run.
    pub fn final_line(
        &self,
        t_s: f64,
        dir: &str,
        cur: &Counters,
        queue_bytes: u64,
        extras: ShellExtras,
    ) -> String {
        line(t_s, dir, cur, queue_bytes, extras, true)
    }
}

fn line(t_s: f64, dir: &str, c: &Counters, queue_bytes: u64, x: ShellExtras, fin: bool) -> String {
    let v = serde_json::json!({
        "t_s": (t_s * 1000.0).round() / 1000.0,
        "dir": dir,
        "arrivals": c.arrivals,
        "departures": c.departures,
        "bytes_out": c.bytes_out,
        "drops_queue": c.drops_queue,
        "drops_loss": c.drops_loss,
        "oversized": c.oversized,
        "queue_bytes": queue_bytes,
        "queue_delay_ms_mean": (c.queue_delay.mean_ns() / 1e3).round() / 1e3,
        "queue_delay_ms_max": (c.queue_delay.max_ns as f64 / 1e3).round() / 1e3,
        "tx_errors": x.tx_errors,
        "log_dropped": x.log_dropped,
        "final": fin,
    });
    v.to_string()
}
