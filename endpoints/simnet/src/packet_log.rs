//! linkem's optional per-packet log (`--packet-log`), written in virtual time: one JSON line
//! per frame the link released or dropped, in the line real linkem writes
//! (`linkem::packet_log::write_record`), so the same analysis (analysis.microbursts) reads
//! it. Times are ns since the run's origin (real linkem: since it started forwarding).
//! Nothing is ever dropped from this log (`log_dropped` stays 0): the writer does not race
//! the link.

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

    /// Where linkem::packet_log::write_record puts each frame's line.
    pub fn out(&mut self) -> &mut impl Write {
        &mut self.out
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
