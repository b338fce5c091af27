//! The optional per-packet log: forwarding threads `try_send` small records into a bounded
//! channel and never block; a writer thread formats them as JSON lines. Records that do not
//! fit are counted (`log_dropped` in the stats lines).

use linkem::packet_log::{write_record, Fate};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;

pub const CHANNEL_RECORDS: usize = 1 << 16;

/// One packet's fate; times in ns since linkem started forwarding.
#[derive(Debug, Clone, Copy)]
pub struct Record {
    pub dir: &'static str,
    pub arrival_ns: u64,
    pub at_ns: u64,
    pub bytes: u64,
    pub fate: Fate,
}

/// The forwarding side of the log (cheap to clone).
#[derive(Clone)]
pub struct LogTx {
    tx: Option<SyncSender<Record>>,
    dropped: Arc<AtomicU64>,
}

impl LogTx {
    pub fn disabled() -> Self {
        LogTx {
            tx: None,
            dropped: Arc::new(AtomicU64::new(0)),
        }
    }

    pub fn enabled(&self) -> bool {
        self.tx.is_some()
    }

    pub fn log(&self, r: Record) {
        if let Some(tx) = &self.tx {
            if let Err(TrySendError::Full(_)) = tx.try_send(r) {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// Open `path` and start the writer; the thread ends when every `LogTx` clone is dropped.
pub fn start(path: &Path) -> io::Result<(LogTx, JoinHandle<io::Result<()>>)> {
    let file = File::create(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let (tx, rx) = sync_channel(CHANNEL_RECORDS);
    let handle = std::thread::Builder::new()
        .name("lk-packet-log".into())
        .spawn(move || write_all(rx, BufWriter::with_capacity(1 << 20, file)))?;
    Ok((
        LogTx {
            tx: Some(tx),
            dropped: Arc::new(AtomicU64::new(0)),
        },
        handle,
    ))
}

fn write_all(rx: Receiver<Record>, mut w: BufWriter<File>) -> io::Result<()> {
    for r in rx {
        write_record(&mut w, r.dir, r.arrival_ns, r.at_ns, r.bytes, r.fate)?;
    }
    w.flush()
}
