//! linkem's optional per-packet log (`--packet-log`), written in virtual time: one JSON line
//! per frame the link released or dropped, in real linkem's exact format
//! (netem/linkem/src/shell/packet_log.rs), so the same analysis (analysis.microbursts) reads
//! it. Times are ns since the run's origin (real linkem: since it started forwarding).
//! Nothing is ever dropped from this log (`log_dropped` stays 0): the writer does not race
//! the link.

use linkem::DropCause;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub(crate) struct PacketLog {
    out: BufWriter<File>,
}

impl PacketLog {
    pub fn create(path: &Path) -> io::Result<Self> {
        let f = File::create(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        Ok(PacketLog {
            out: BufWriter::with_capacity(1 << 20, f),
        })
    }

    /// One frame's fate: `cause` None for a frame that left at `at_ns`.
    pub fn record(
        &mut self,
        dir: &str,
        arrival_ns: u64,
        at_ns: u64,
        bytes: u64,
        cause: Option<DropCause>,
    ) -> io::Result<()> {
        writeln!(
            self.out,
            r#"{{"dir":"{}","t_in_us":{:.3},"t_out_us":{:.3},"bytes":{},"fate":"{}"}}"#,
            dir,
            arrival_ns as f64 / 1e3,
            at_ns as f64 / 1e3,
            bytes,
            fate(cause)
        )
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// linkem's names for a frame's fate.
fn fate(cause: Option<DropCause>) -> &'static str {
    match cause {
        None => "sent",
        Some(DropCause::Queue) => "drop_queue",
        Some(DropCause::Loss) => "drop_loss",
        Some(DropCause::Police) => "drop_police",
        Some(DropCause::Oversized) => "oversized",
    }
}
