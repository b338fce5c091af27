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

/// Write one frame's line; times in ns since the link started, written as µs with three
/// decimals. The µs are formatted from the integer ns (what `{:.3}` of `ns as f64 / 1e3` gives,
/// digit for digit, below 2^53 ns, without float formatting: a log line per packet).
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
        r#"{{"dir":"{}","t_in_us":{}.{:03},"t_out_us":{}.{:03},"bytes":{},"fate":"{}"}}"#,
        dir,
        arrival_ns / 1000,
        arrival_ns % 1000,
        at_ns / 1000,
        at_ns % 1000,
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

    #[test]
    fn the_times_read_as_the_float_formatting_of_the_us() {
        // Every ns of the first 3 µs, then values spread up to 2^50 ns (13 days).
        let small = 0..3_000u64;
        let spread = std::iter::successors(Some(1u64), |n| Some(n * 3 + 7))
            .take_while(|n| *n < 1 << 50)
            .flat_map(|n| [n - 1, n, n + 1, n + 499, n + 500, n + 999]);
        for t in small.chain(spread) {
            let mut out = Vec::new();
            write_record(&mut out, "b_to_a", t, t, 0, Fate::Sent).unwrap();
            let us = format!("{:.3}", t as f64 / 1e3);
            let want = format!(
                "{{\"dir\":\"b_to_a\",\"t_in_us\":{us},\"t_out_us\":{us},\"bytes\":0,\
                 \"fate\":\"sent\"}}\n"
            );
            assert_eq!(String::from_utf8(out).unwrap(), want, "{t} ns");
        }
    }
}
