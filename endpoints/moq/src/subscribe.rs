//! The subscriber's I/O shell: accepts every unidirectional stream, reads frames off each
//! (one task per stream), logs each frame's arrival (when its last byte was read).

use std::path::Path;

use crate::wire::{FrameHeader, HEADER_BYTES};
use anyhow::Result;
use quicsetup::csv::Csv;
use quinn::{Connection, ConnectionError, ReadExactError, RecvStream};
use tokio::sync::mpsc;

use quicsetup::{Clock, Console};

pub const RECEIVED_HEADER: &str =
    "frame_id,pict_type,group,size_bytes,stream,capture_us,arrival_us,latency_ms";

/// One frame read off stream `stream` (the order streams were accepted in).
struct Arrival {
    h: FrameHeader,
    stream: u64,
    arrival_us: u64,
}

/// How a stream ended.
enum StreamEnd {
    Finished,
    Reset,
    Broken(String),
}

#[derive(Debug, Default)]
pub struct Outcome {
    pub frames: u64,
    pub streams: u64,
    pub streams_reset: u64,
    pub streams_broken: u64,
    /// Why the connection ended.
    pub close: Option<ConnectionError>,
}

async fn read_stream(
    mut s: RecvStream,
    stream: u64,
    tx: mpsc::UnboundedSender<Arrival>,
    clock: Clock,
) -> StreamEnd {
    let mut hdr = [0u8; HEADER_BYTES];
    let mut payload = Vec::new();
    loop {
        match s.read_exact(&mut hdr).await {
            Ok(()) => {}
            Err(ReadExactError::FinishedEarly(0)) => return StreamEnd::Finished,
            Err(ReadExactError::ReadError(quinn::ReadError::Reset(_))) => return StreamEnd::Reset,
            Err(e) => return StreamEnd::Broken(e.to_string()),
        }
        let Some(h) = FrameHeader::decode(&hdr) else {
            return StreamEnd::Broken("unknown picture type".into());
        };
        payload.resize(h.size_bytes as usize, 0);
        match s.read_exact(&mut payload).await {
            Ok(()) => {}
            Err(ReadExactError::ReadError(quinn::ReadError::Reset(_))) => return StreamEnd::Reset,
            Err(e) => return StreamEnd::Broken(e.to_string()),
        }
        let arrival_us = clock.unix_us();
        if tx
            .send(Arrival {
                h,
                stream,
                arrival_us,
            })
            .is_err()
        {
            return StreamEnd::Finished;
        }
    }
}

pub async fn run(
    conn: &Connection,
    log_dir: &Path,
    clock: Clock,
    console: &Console,
) -> Result<Outcome> {
    let mut log = Csv::create(log_dir, "frames_received.csv", RECEIVED_HEADER)?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (end_tx, mut end_rx) = mpsc::unbounded_channel();
    let c = conn.clone();
    let acceptor = tokio::spawn(async move {
        let mut n = 0u64;
        loop {
            match c.accept_uni().await {
                Ok(s) => {
                    let (tx, end_tx) = (tx.clone(), end_tx.clone());
                    tokio::spawn(async move {
                        let _ = end_tx.send(read_stream(s, n, tx, clock).await);
                    });
                    n += 1;
                }
                Err(e) => return (n, e),
            }
        }
    });
    let mut out = Outcome::default();
    while let Some(a) = rx.recv().await {
        out.frames += 1;
        let latency_ms = a.arrival_us as f64 / 1e3 - a.h.capture_us as f64 / 1e3;
        log.line(&format!(
            "{},{},{},{},{},{},{},{:.3}",
            a.h.frame_id,
            a.h.pict.as_str(),
            a.h.group,
            a.h.size_bytes,
            a.stream,
            a.h.capture_us,
            a.arrival_us,
            latency_ms
        ))?;
    }
    log.flush()?;
    let (n, e) = acceptor.await?;
    out.streams = n;
    out.close = Some(e);
    while let Some(end) = end_rx.recv().await {
        match end {
            StreamEnd::Finished => {}
            StreamEnd::Reset => out.streams_reset += 1,
            StreamEnd::Broken(why) => {
                // The connection closing mid-frame breaks the streams still open: expected
                // at the end of a run; anything else is reported.
                if !why.contains("closed") {
                    console.err(format_args!("moq subscriber: a stream broke: {why}"));
                }
                out.streams_broken += 1;
            }
        }
    }
    Ok(out)
}
