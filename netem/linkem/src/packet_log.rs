//! The per-packet log's line (`--packet-log`): one JSON line per frame, its direction, arrival
//! and exit times (µs since the link started) and its fate. Pure: linkem's shell writes these
//! lines from its forwarding threads, the sim site's simnet from virtual time, so both logs
//! read the same (analysis.microbursts).

use crate::direction::DropCause;
use std::io::{self, Write};

/// What became of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Sent,
    Dropped(DropCause),
    /// The send call refused frames the core had released (real linkem only).
    TxError,
}

impl Fate {
    pub fn name(self) -> &'static str {
        match self {
            Fate::Sent => "sent",
            Fate::Dropped(DropCause::Queue) => "drop_queue",
            Fate::Dropped(DropCause::Loss) => "drop_loss",
            Fate::Dropped(DropCause::Police) => "drop_police",
            Fate::Dropped(DropCause::Oversized) => "oversized",
            Fate::TxError => "tx_error",
        }
    }
}

/// Write one frame's line; times in ns since the link started.
pub fn write_record(
    w: &mut impl Write,
    dir: &str,
    arrival_ns: u64,
    at_ns: u64,
    bytes: u64,
    fate: Fate,
) -> io::Result<()> {
    writeln!(
        w,
        r#"{{"dir":"{}","t_in_us":{:.3},"t_out_us":{:.3},"bytes":{},"fate":"{}"}}"#,
        dir,
        arrival_ns as f64 / 1e3,
        at_ns as f64 / 1e3,
        bytes,
        fate.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_has_times_in_us_and_the_fate_by_name() {
        let mut out = Vec::new();
        let fate = Fate::Dropped(DropCause::Police);
        write_record(&mut out, "a_to_b", 1_500, 2_000_250, 1042, fate).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"dir\":\"a_to_b\",\"t_in_us\":1.500,\"t_out_us\":2000.250,\"bytes\":1042,\
             \"fate\":\"drop_police\"}\n"
        );
    }
}
