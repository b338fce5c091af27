//! The publisher's I/O shell: releases the schedule's frames at their times (tokio timers),
//! carries out the router's stream actions on quinn, logs every frame and the path.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use crate::route::{Action, Router, StreamKey};
use crate::trace::{read_clip, schedule, Release};
use crate::wire::FrameHeader;
use anyhow::{anyhow, Result};
use quicsetup::csv::Csv;
use quicsetup::Clock;
use quinn::{Connection, SendStream, VarInt};

use crate::cli::Args;

pub const SENT_HEADER: &str =
    "frame_id,clip_index,pict_type,group,size_bytes,stream,capture_us,release_us,written_us";
pub const PATH_HEADER: &str = "time_us,rtt_ms,cwnd_bytes,lost_packets,sent_packets,bytes_sent";

/// What a run did, for summary.json.
#[derive(Debug, Default)]
pub struct Outcome {
    pub frames: u64,
    pub bytes: u64,
    pub streams_opened: u64,
    pub streams_reset: u64,
    /// Largest lateness of a write's completion after its release time (write_all waited
    /// for flow control or the connection's send window).
    pub max_write_wait_us: u64,
}

fn path_row(conn: &Connection, clock: &Clock) -> String {
    let s = conn.stats();
    format!(
        "{},{:.3},{},{},{},{}",
        clock.unix_us(),
        s.path.rtt.as_secs_f64() * 1e3,
        s.path.cwnd,
        s.path.lost_packets,
        s.path.sent_packets,
        s.udp_tx.bytes
    )
}

pub async fn run(args: &Args, conn: &Connection, log_dir: &Path, clock: Clock) -> Result<Outcome> {
    let trace = args
        .frame_trace
        .as_deref()
        .ok_or_else(|| anyhow!("--frame-trace is required for --role publisher"))?;
    let clip = read_clip(trace)?;
    let releases = schedule(&clip, (args.duration_s * 1e6) as u64);
    let max_size = clip.iter().map(|f| f.size_bytes).max().unwrap_or(0) as usize;
    let filler = vec![0u8; max_size];

    let mut sent = Csv::create(log_dir, "frames_sent.csv", SENT_HEADER)?;
    let mut path = Csv::create(log_dir, "path_stats.csv", PATH_HEADER)?;
    let mut router = Router::new(args.scheme());
    let mut streams: HashMap<StreamKey, SendStream> = HashMap::new();
    let mut out = Outcome::default();

    let t0 = clock.now();
    let t0_us = clock.unix_us();
    let mut next_path = t0;
    for r in &releases {
        let at = t0 + Duration::from_micros(r.release_us);
        while next_path <= at {
            tokio::time::sleep_until(next_path).await;
            path.line(&path_row(conn, &clock))?;
            next_path += Duration::from_millis(100);
        }
        tokio::time::sleep_until(at).await;
        for a in router.on_frame(r) {
            apply(a, conn, &mut streams, &mut out).await?;
            if let Action::Write { key } = a {
                write_frame(
                    r,
                    key,
                    (t0_us, &clock),
                    &filler,
                    &mut streams,
                    &mut sent,
                    &mut out,
                )
                .await?;
            }
        }
    }
    for a in router.finish_all() {
        apply(a, conn, &mut streams, &mut out).await?;
    }
    let end = clock.now() + Duration::from_secs_f64(args.drain_s);
    while next_path < end {
        tokio::time::sleep_until(next_path).await;
        path.line(&path_row(conn, &clock))?;
        next_path += Duration::from_millis(100);
    }
    tokio::time::sleep_until(end).await;
    path.line(&path_row(conn, &clock))?;
    sent.flush()?;
    path.flush()?;
    Ok(out)
}

async fn apply(
    a: Action,
    conn: &Connection,
    streams: &mut HashMap<StreamKey, SendStream>,
    out: &mut Outcome,
) -> Result<()> {
    match a {
        Action::Open { key, priority } => {
            let s = conn.open_uni().await?;
            s.set_priority(priority)?; // before any data: quinn queues the stream by it
            streams.insert(key, s);
            out.streams_opened += 1;
        }
        Action::Finish { key } => {
            if let Some(s) = streams.get_mut(&key) {
                let _ = s.finish(); // already finished or reset by the peer: nothing to do
            }
        }
        Action::Reset { key } => {
            if let Some(mut s) = streams.remove(&key) {
                // Fails only if everything was acknowledged already: then nothing is lost.
                if s.reset(VarInt::from_u32(0)).is_ok() {
                    out.streams_reset += 1;
                }
            }
        }
        Action::Write { .. } => {}
    }
    Ok(())
}

async fn write_frame(
    r: &Release,
    key: StreamKey,
    (t0_us, clock): (u64, &Clock),
    filler: &[u8],
    streams: &mut HashMap<StreamKey, SendStream>,
    sent: &mut Csv,
    out: &mut Outcome,
) -> Result<()> {
    let s = streams
        .get_mut(&key)
        .ok_or_else(|| anyhow!("stream {key:?} is not open"))?;
    let h = FrameHeader {
        frame_id: r.frame_id,
        group: r.group,
        pict: r.pict,
        capture_us: t0_us + r.capture_us,
        size_bytes: r.size_bytes,
    };
    s.write_all(&h.encode()).await?;
    s.write_all(&filler[..r.size_bytes as usize]).await?;
    let written = clock.unix_us();
    let release = t0_us + r.release_us;
    out.max_write_wait_us = out.max_write_wait_us.max(written.saturating_sub(release));
    out.frames += 1;
    out.bytes += u64::from(r.size_bytes);
    sent.line(&format!(
        "{},{},{},{},{},{},{},{},{}",
        r.frame_id,
        r.clip_index,
        r.pict.as_str(),
        r.group,
        r.size_bytes,
        key.label(),
        h.capture_us,
        release,
        written
    ))
}
