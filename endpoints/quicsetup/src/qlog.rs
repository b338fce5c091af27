//! qlog (quinn's own `qlog` feature): one JSON-SEQ trace per QUIC connection, readable by
//! qvis, when the endpoint is given `--qlog-dir`.
//!
//! quinn attaches a qlog stream to a [`TransportConfig`], and a transport is shared by every
//! connection made with it, so each connection gets a transport of its own ([`Transport`]
//! makes one per connection) with a file of its own: `<dir>/<program>-<role>-<n>.sqlog`,
//! `n` counting this endpoint's connections from 1 in the order they were opened or
//! accepted (an incoming connection whose handshake failed keeps its number and file).
//!
//! Time: quinn stamps every event with the instant its runtime's `now()` gives (tokio's
//! clock: virtual under the sim's paused runtime) and writes it as ms since the stream's
//! start time. quinn-proto's default start time is std's monotonic clock read when the
//! config is made, which under a paused runtime is unrelated to the virtual instants (the
//! times would be offsets between two clocks, different in every run). So the start time is
//! set to the session clock's own start ([`Clock::start`]): time 0 of every trace is the
//! instant the endpoint's clock was made, whose Unix time ([`Clock::epoch_unix_ns`]) the
//! trace's description gives. On the sim site every process shares one clock made at the
//! run's origin, so both sides' traces share time 0; each real endpoint's clock starts with
//! its process. qlog writes times as 32-bit floats of ms: about 8 µs resolution two minutes
//! after time 0, 125 µs at twenty minutes.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use quinn::{QlogConfig, TransportConfig};

use crate::clock::Clock;

/// The name a trace file ends with: JSON-SEQ qlog, as qvis expects it.
pub const SUFFIX: &str = ".sqlog";

/// Bytes buffered per trace before a write (the trace is flushed when quinn drops the
/// connection's state, at the latest when the runtime ends).
const BUFFER_BYTES: usize = 64 << 10;

/// Makes a connection's transport: once per connection, so each can carry its own qlog.
/// [`Transport::new`] makes one at once, so a bad setting is an error before any connection.
#[derive(Clone)]
pub struct Transport(Arc<dyn Fn() -> Result<TransportConfig> + Send + Sync>);

impl Transport {
    pub fn new(make: impl Fn() -> Result<TransportConfig> + Send + Sync + 'static) -> Result<Self> {
        make()?;
        Ok(Transport(Arc::new(make)))
    }

    /// A fresh transport.
    pub fn make(&self) -> Result<TransportConfig> {
        (self.0)()
    }
}

/// Where an endpoint's traces go (`--qlog-dir`), or nowhere; clones count connections
/// together.
#[derive(Clone, Debug, Default)]
pub struct Qlog {
    dir: Option<PathBuf>,
    opened: Arc<AtomicU32>,
}

impl Qlog {
    /// Traces into `dir` (created when the first connection starts), or none.
    pub fn new(dir: Option<PathBuf>) -> Self {
        Qlog {
            dir,
            opened: Arc::default(),
        }
    }

    pub fn off() -> Self {
        Qlog::default()
    }

    /// The trace file of connection `n` of the endpoint `who` (`"rise host"`).
    pub fn file_name(who: &str, n: u32) -> String {
        format!("{}-{n}{SUFFIX}", who.replace(' ', "-"))
    }

    /// Gives `t` the next connection's trace (nothing when off).
    pub fn attach(&self, t: &mut TransportConfig, who: &str, clock: &Clock) -> Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let n = self.opened.fetch_add(1, Ordering::Relaxed) + 1;
        let path = dir.join(Self::file_name(who, n));
        let file = create(dir, &path)?;
        let mut c = QlogConfig::default();
        c.writer(Box::new(BufWriter::with_capacity(BUFFER_BYTES, file)))
            .title(Some(format!("{who}, connection {n}")))
            .description(Some(format!(
                "time 0 = {} ns since the Unix epoch on the endpoint's clock",
                clock.epoch_unix_ns()
            )))
            .start_time(clock.start().into_std());
        t.qlog_stream(c.into_stream());
        Ok(())
    }
}

fn create(dir: &Path, path: &Path) -> Result<File> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    File::create(path).with_context(|| format!("creating {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_named_by_endpoint_and_connection() {
        assert_eq!(Qlog::file_name("rise host", 1), "rise-host-1.sqlog");
        assert_eq!(Qlog::file_name("qpr player", 2), "qpr-player-2.sqlog");
    }

    #[tokio::test(start_paused = true)]
    async fn each_connection_gets_the_next_file_and_clones_count_together() {
        let dir = std::env::temp_dir().join(format!("quicsetup-qlog-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let q = Qlog::new(Some(dir.clone()));
        let clock = Clock::virtual_from(1_767_225_600_000_000_000);
        let mut t = TransportConfig::default();
        q.attach(&mut t, "moq publisher", &clock).unwrap();
        q.clone().attach(&mut t, "moq publisher", &clock).unwrap();
        drop(t); // the streams flush their headers
        for n in [1, 2] {
            let text = std::fs::read_to_string(dir.join(format!("moq-publisher-{n}.sqlog")));
            let text = text.unwrap();
            assert!(text.starts_with('\u{1e}'), "a JSON-SEQ record: {text}");
            assert!(
                text.contains(&format!("moq publisher, connection {n}")),
                "{text}"
            );
            assert!(
                text.contains("1767225600000000000 ns since the Unix epoch"),
                "{text}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
        // off: nothing is made
        Qlog::off()
            .attach(&mut TransportConfig::default(), "x", &clock)
            .unwrap();
    }
}
