//! The per-second stats line of the contract, built from cumulative counters.

use crate::direction::{Counters, DelayAgg};

/// Turns cumulative counters into per-interval lines.
#[derive(Debug, Default)]
pub struct StatsTracker {
    prev: Counters,
    prev_extras: ShellExtras,
}

/// Extra numbers the I/O shell adds (beyond the contract's keys).
#[derive(Debug, Clone, Copy, Default)]
pub struct ShellExtras {
    /// Frames the kernel dropped before linkem could read them (socket buffer full).
    pub rx_drops: u64,
    /// Frames the core released but the send call refused.
    pub tx_errors: u64,
    pub log_dropped: u64,
}

impl StatsTracker {
    /// The line for the interval ending at `t_s`; `delay` is that interval's queueing delays;
    /// `cur` and `extras` are cumulative.
    #[allow(clippy::too_many_arguments)]
    pub fn interval_line(
        &mut self,
        t_s: f64,
        dir: &str,
        cur: &Counters,
        delay: DelayAgg,
        queue_bytes: u64,
        extras: ShellExtras,
        send_late: DelayAgg,
    ) -> String {
        let p = self.prev;
        self.prev = *cur;
        let px = self.prev_extras;
        self.prev_extras = extras;
        let dx = ShellExtras {
            rx_drops: extras.rx_drops - px.rx_drops,
            tx_errors: extras.tx_errors - px.tx_errors,
            log_dropped: extras.log_dropped - px.log_dropped,
        };
        let d = Counters {
            arrivals: cur.arrivals - p.arrivals,
            departures: cur.departures - p.departures,
            bytes_out: cur.bytes_out - p.bytes_out,
            drops_queue: cur.drops_queue - p.drops_queue,
            drops_loss: cur.drops_loss - p.drops_loss,
            drops_police: cur.drops_police - p.drops_police,
            oversized: cur.oversized - p.oversized,
            queue_delay: delay,
        };
        line(t_s, dir, &d, queue_bytes, dx, send_late, false)
    }

    /// The final line: totals over the whole run.
    pub fn final_line(
        &self,
        t_s: f64,
        dir: &str,
        cur: &Counters,
        queue_bytes: u64,
        extras: ShellExtras,
        send_late: DelayAgg,
    ) -> String {
        line(t_s, dir, cur, queue_bytes, extras, send_late, true)
    }
}

fn line(
    t_s: f64,
    dir: &str,
    c: &Counters,
    queue_bytes: u64,
    x: ShellExtras,
    late: DelayAgg,
    fin: bool,
) -> String {
    // Written by hand to keep the contract's key order; `dir` is a fixed identifier.
    format!(
        concat!(
            r#"{{"t_s": {}, "dir": "{}", "arrivals": {}, "departures": {}, "bytes_out": {}, "#,
            r#""drops_queue": {}, "drops_loss": {}, "drops_police": {}, "oversized": {}, "#,
            r#""queue_bytes": {}, "#,
            r#""queue_delay_ms_mean": {}, "queue_delay_ms_max": {}, "rx_drops": {}, "#,
            r#""tx_errors": {}, "log_dropped": {}, "send_late_ms_mean": {}, "#,
            r#""send_late_ms_max": {}, "final": {}}}"#
        ),
        num3(t_s),
        dir,
        c.arrivals,
        c.departures,
        c.bytes_out,
        c.drops_queue,
        c.drops_loss,
        c.drops_police,
        c.oversized,
        queue_bytes,
        num3(c.queue_delay.mean_ns() / 1e6),
        num3(c.queue_delay.max_ns as f64 / 1e6),
        x.rx_drops,
        x.tx_errors,
        x.log_dropped,
        num3(late.mean_ns() / 1e6),
        num3(late.max_ns as f64 / 1e6),
        fin
    )
}

/// A float with at most 3 decimals, always with a decimal point (valid JSON).
fn num3(x: f64) -> String {
    let r = (x * 1000.0).round() / 1000.0;
    let s = format!("{r}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_json_with_interval_deltas_and_totals() {
        let mut t = StatsTracker::default();
        let mut c = Counters {
            arrivals: 10,
            departures: 8,
            bytes_out: 8000,
            ..Default::default()
        };
        c.queue_delay.add(2_000_000);
        let l1 = t.interval_line(
            1.0,
            "a_to_b",
            &c,
            c.queue_delay,
            500,
            ShellExtras::default(),
            Default::default(),
        );
        c.arrivals = 25;
        c.departures = 20;
        let l2 = t.interval_line(
            2.0,
            "a_to_b",
            &c,
            Default::default(),
            0,
            ShellExtras {
                rx_drops: 3,
                ..Default::default()
            },
            Default::default(),
        );
        let fin = t.final_line(
            2.5,
            "a_to_b",
            &c,
            0,
            ShellExtras::default(),
            Default::default(),
        );
        let v1: serde_json::Value = serde_json::from_str(&l1).unwrap();
        let v2: serde_json::Value = serde_json::from_str(&l2).unwrap();
        let vf: serde_json::Value = serde_json::from_str(&fin).unwrap();
        assert_eq!(v1["arrivals"], 10);
        assert_eq!(v1["queue_delay_ms_mean"], 2.0);
        assert_eq!(v1["queue_bytes"], 500);
        assert_eq!(v2["arrivals"], 15);
        assert_eq!(v2["rx_drops"], 3);
        assert_eq!(v2["t_s"], 2.0);
        assert_eq!(v2["final"], false);
        assert_eq!(vf["arrivals"], 25);
        assert_eq!(vf["final"], true);
        assert!(
            l1.starts_with(r#"{"t_s": 1.0, "dir": "a_to_b", "arrivals": 10,"#),
            "{l1}"
        );
    }
}
