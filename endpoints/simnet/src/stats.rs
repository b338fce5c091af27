//! linkem's stats lines, written in virtual time: one line per direction at every interval
//! boundary and a final line per direction at the end, in real linkem's exact format
//! ([`linkem::stats::StatsTracker`]), so netem/userspace.py's `read_stats` reads them.
//!
//! Real linkem's shell extras have nothing to count here: no socket of its own to overflow
//! (`rx_drops` 0), no send call to fail (`tx_errors` 0), no packet log, and every frame leaves
//! at its exit time exactly (`send_late_ms_*` 0: the lateness is still measured, and is 0).

use linkem::direction::DelayAgg;
use linkem::stats::{ShellExtras, StatsTracker};
use linkem::Direction;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

/// Where the stats lines go and how often.
#[derive(Debug, Clone)]
pub struct StatsOut {
    pub path: PathBuf,
    pub interval_ms: u64,
}

pub(crate) struct StatsWriter {
    /// None: no stats file (the lines are still made, for the final counters).
    out: Option<BufWriter<File>>,
    interval_ns: u64,
    next_ns: u64,
    trackers: [StatsTracker; 2],
    late_interval: [DelayAgg; 2],
    late_total: [DelayAgg; 2],
}

pub(crate) const DIR_NAMES: [&str; 2] = ["a_to_b", "b_to_a"];

impl StatsWriter {
    pub fn create(cfg: Option<&StatsOut>) -> io::Result<Self> {
        let out = match cfg {
            Some(c) => Some(BufWriter::new(File::create(&c.path).map_err(|e| {
                io::Error::new(e.kind(), format!("{}: {e}", c.path.display()))
            })?)),
            None => None,
        };
        // Without a file there are no interval lines: the first boundary never comes.
        let interval_ns = cfg.map_or(u64::MAX, |c| c.interval_ms.max(1) * 1_000_000);
        Ok(StatsWriter {
            out,
            interval_ns,
            next_ns: interval_ns,
            trackers: Default::default(),
            late_interval: Default::default(),
            late_total: Default::default(),
        })
    }

    pub fn next_ns(&self) -> u64 {
        self.next_ns
    }

    /// A frame of direction `i` was handed on `late_ns` after its exit time.
    pub fn record_late(&mut self, i: usize, late_ns: u64) {
        self.late_interval[i].add(late_ns);
        self.late_total[i].add(late_ns);
    }

    /// Write the lines of every boundary up to `now_ns`.
    pub fn tick<T>(&mut self, now_ns: u64, dirs: &mut [Direction<T>; 2]) -> io::Result<()> {
        while now_ns >= self.next_ns {
            let t_s = self.next_ns as f64 / 1e9;
            for (i, d) in dirs.iter_mut().enumerate() {
                let delay = d.take_interval_delay();
                let line = self.trackers[i].interval_line(
                    t_s,
                    DIR_NAMES[i],
                    d.counters(),
                    delay,
                    d.queue_bytes(),
                    ShellExtras::default(),
                    std::mem::take(&mut self.late_interval[i]),
                );
                self.write(&line)?;
            }
            self.next_ns = self.next_ns.saturating_add(self.interval_ns);
        }
        Ok(())
    }

    /// Make no more lines (after a failed write).
    pub fn stop_writing(&mut self) {
        self.out = None;
        self.next_ns = u64::MAX;
    }

    fn write(&mut self, line: &str) -> io::Result<()> {
        match &mut self.out {
            Some(o) => writeln!(o, "{line}"),
            None => Ok(()),
        }
    }

    /// The final line of each direction (written, and returned), then flush.
    pub fn finish<T>(&mut self, now_ns: u64, dirs: &[Direction<T>; 2]) -> io::Result<[String; 2]> {
        let mut lines: [String; 2] = Default::default();
        for (i, d) in dirs.iter().enumerate() {
            let line = self.trackers[i].final_line(
                now_ns as f64 / 1e9,
                DIR_NAMES[i],
                d.counters(),
                d.queue_bytes(),
                ShellExtras::default(),
                self.late_total[i],
            );
            self.write(&line)?;
            lines[i] = line;
        }
        if let Some(o) = &mut self.out {
            o.flush()?;
        }
        Ok(lines)
    }
}
