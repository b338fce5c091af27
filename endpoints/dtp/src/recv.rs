//! The receiver's I/O shell: accepts every unidirectional stream (one block each), reads it
//! to its end in a task of its own, and logs when the block completed or was reset.

use std::path::Path;

use anyhow::Result;
use dtp::wire::{BlockHeader, HEADER_BYTES};
use quicsetup::csv::Csv;
use quinn::{Connection, ConnectionError, ReadExactError, RecvStream};
use tokio::sync::mpsc;

use crate::cli::now_us;

pub const RECEIVED_HEADER: &str =
    "block_id,priority,payload_bytes,created_us,deadline_us,first_byte_us,end_us,received_bytes,status";

#[derive(Debug, Default)]
pub struct Outcome {
    pub complete: u64,
    pub reset: u64,
    pub broken: u64,
    pub close: Option<ConnectionError>,
}

enum End {
    Complete,
    Reset,
    Broken(String),
}

struct Row {
    h: Option<BlockHeader>,
    first_byte_us: u64,
    end_us: u64,
    received: u64,
    end: End,
}

async fn read_block(mut s: RecvStream, tx: mpsc::UnboundedSender<Row>) {
    let mut hdr = [0u8; HEADER_BYTES];
    let done = |h, first, received, end| Row {
        h,
        first_byte_us: first,
        end_us: now_us(),
        received,
        end,
    };
    let row = match s.read_exact(&mut hdr).await {
        Err(ReadExactError::ReadError(quinn::ReadError::Reset(_))) => done(None, 0, 0, End::Reset),
        Err(e) => done(None, 0, 0, End::Broken(e.to_string())),
        Ok(()) => {
            let h = BlockHeader::decode(&hdr);
            let first = now_us();
            let mut got = 0u64;
            loop {
                match s.read_chunk(usize::MAX, true).await {
                    Ok(Some(c)) => got += c.bytes.len() as u64,
                    Ok(None) if got == h.payload_bytes => {
                        break done(Some(h), first, got, End::Complete)
                    }
                    Ok(None) => {
                        break done(
                            Some(h),
                            first,
                            got,
                            End::Broken(format!("{got} of {} bytes", h.payload_bytes)),
                        )
                    }
                    Err(quinn::ReadError::Reset(_)) => break done(Some(h), first, got, End::Reset),
                    Err(e) => break done(Some(h), first, got, End::Broken(e.to_string())),
                }
            }
        }
    };
    let _ = tx.send(row);
}

pub async fn run(conn: &Connection, log_dir: &Path) -> Result<Outcome> {
    let mut csv = Csv::create(log_dir, "blocks_received.csv", RECEIVED_HEADER)?;
    let (tx, mut rx) = mpsc::unbounded_channel::<Row>();
    let mut out = Outcome::default();
    let mut write = |r: Row, out: &mut Outcome| -> Result<()> {
        let status = match &r.end {
            End::Complete => {
                out.complete += 1;
                "complete"
            }
            End::Reset => {
                out.reset += 1;
                "reset"
            }
            End::Broken(why) => {
                out.broken += 1;
                eprintln!("dtp receiver: a stream broke: {why}");
                "broken"
            }
        };
        // A stream reset before its header arrived names no block: nothing to log.
        let Some(h) = r.h else { return Ok(()) };
        csv.line(&format!(
            "{},{},{},{},{},{},{},{},{}",
            h.block_id,
            h.priority,
            h.payload_bytes,
            h.created_us,
            h.deadline_us,
            r.first_byte_us,
            r.end_us,
            r.received,
            status
        ))
    };
    loop {
        tokio::select! {
            s = conn.accept_uni() => match s {
                Ok(s) => {
                    tokio::spawn(read_block(s, tx.clone()));
                }
                Err(e) => {
                    out.close = Some(e);
                    break;
                }
            },
            Some(r) = rx.recv() => write(r, &mut out)?,
        }
    }
    drop(tx);
    // Blocks whose last bytes came with the close.
    while let Ok(r) = rx.try_recv() {
        write(r, &mut out)?;
    }
    csv.flush()?;
    Ok(out)
}
