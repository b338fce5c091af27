//! The sender's I/O shell: releases the pattern's blocks at their times, asks the scheduler
//! which block gets the next `--chunk-bytes` and writes them to that block's stream, resets
//! the streams of dropped blocks, logs every block and the path.
//!
//! quinn's own scheduler is strict priority with round robin among equal priorities, and
//! takes a new priority into account only when a stream is queued again; so instead of
//! steering it with stream priorities, every stream has the same priority, fairness is off
//! (equal streams go in the order they were written to) and quinn's send window is small
//! (`--send-window-bytes`, a little above the path's BDP): quinn holds at most that many
//! unacknowledged bytes, everything else waits in the scheduler's queue, and each chunk is
//! chosen when quinn can take it (after ACKs free the window), as the paper's scheduler runs
//! "when ACK is received or the application pushes data".

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use crate::ads::{Block, Estimate, Scheduler};
use crate::bw::BwEstimator;
use crate::fec::{self, LossWindow};
use crate::pattern::Release;
use crate::wire::{fill, BlockHeader, ParityHeader, HEADER_BYTES, PARITY_HEADER_BYTES};
use anyhow::{anyhow, Result};
use quicsetup::csv::Csv;
use quicsetup::Clock;
use quinn::{Connection, SendStream, VarInt};

use crate::cli::{Args, Redundancy};

pub const SENT_HEADER: &str =
    "block_id,round,priority,payload_bytes,created_us,deadline_us,first_send_us,end_us,sent_bytes,outcome";
pub const FEC_HEADER: &str = "time_us,block_id,start,end,symbol_bytes,m,n,loss_rate,time_left_us";
pub const PATH_HEADER: &str = "time_us,rtt_ms,cwnd_bytes,lost_packets,sent_packets,udp_bytes_sent,bw_estimate_bytes_s,pending_blocks";

/// Bandwidth samples every 50 ms, windowed maximum over 10 of them (0.5 s): assumption, a
/// BBR-like filter (BBR keeps its maximum over ~10 RTTs) at the shortest interval that still
/// spans several RTTs of the paper's paths.
const BW_INTERVAL_US: u64 = 50_000;
const BW_WINDOW: usize = 10;

#[derive(Debug, Default)]
pub struct Outcome {
    pub released: u64,
    pub completed: u64,
    pub dropped: u64,
    pub pending: u64,
    pub block_bytes_written: u64,
    pub streams_reset: u64,
    pub fec_groups: u64,
    pub parity_bytes: u64,
    /// Parity symbols not sent: they no longer fit a datagram (`ParityHeader::datagram`).
    pub parity_skipped: u64,
}

/// A redundancy group being sent: stream offsets [start, end) of one block in `m` symbols.
struct Group {
    start: u64,
    end: u64,
    symbol: usize,
    m: usize,
    n: usize,
}

/// Starts a group for block `id` if its data can no longer afford a retransmission (or
/// `always`).
#[allow(clippy::too_many_arguments)]
fn start_group(
    conn: &Connection,
    sched: &Scheduler,
    id: u64,
    now: u64,
    est: &Estimate,
    chunk: usize,
    loss: &LossWindow,
    fec_log: &mut Csv,
    always: bool,
    clock: &Clock,
) -> Result<Option<Group>> {
    let b = sched.block(id).expect("picked");
    let sent = sched.sent_bytes(id).expect("picked");
    let rtt_us = conn.rtt().as_micros() as f64;
    let left = b.due_us() as f64 - now as f64 - est.one_way_delay_us as f64;
    if !always && !fec::needs_redundancy(left, rtt_us) {
        return Ok(None);
    }
    let Some(max) = conn.max_datagram_size() else {
        return Ok(None); // the peer takes no datagrams
    };
    let symbol = max.saturating_sub(PARITY_HEADER_BYTES).min(chunk);
    if symbol == 0 {
        return Ok(None);
    }
    let rest = b.size_bytes - sent;
    let symbols_left = rest.div_ceil(symbol as u64) as usize;
    let m = fec::group_size(
        left,
        est.bandwidth_bytes_per_s,
        rtt_us,
        symbol,
        symbols_left,
    );
    let end = (sent + (m * symbol) as u64).min(b.size_bytes);
    let m = (end - sent).div_ceil(symbol as u64) as usize;
    let n = fec::parity_count(m, loss.max_rate());
    fec_log.line(&format!(
        "{},{id},{sent},{end},{symbol},{m},{n},{:.4},{left:.0}",
        clock.unix_us(),
        loss.max_rate()
    ))?;
    Ok(Some(Group {
        start: sent,
        end,
        symbol,
        m,
        n,
    }))
}

/// Sends the group's parity symbols as datagrams, each padded to a whole packet (see
/// `ParityHeader::encode_padded`); returns the bytes sent, padding included, and the symbols
/// skipped because they no longer fit a datagram.
fn send_parity(conn: &Connection, l: &Live, g: &Group) -> Result<(u64, u64)> {
    let id = l.rel.id;
    let mut bufs = vec![vec![0u8; g.symbol]; g.m];
    for (i, b) in bufs.iter_mut().enumerate() {
        let a = g.start + (i * g.symbol) as u64;
        let len = (g.end - a).min(g.symbol as u64) as usize;
        b.truncate(len);
        fill(&l.header, id, a, b);
    }
    let refs: Vec<&[u8]> = bufs.iter().map(|b| b.as_slice()).collect();
    let parity = fec::encode(&refs, g.n, g.symbol).map_err(|e| anyhow!(e))?;
    // the whole packet's datagram room, so no stream bytes ride in a parity's packet
    let room = conn.max_datagram_size().unwrap_or(0);
    let (mut bytes, mut skipped) = (0, 0);
    for (j, p) in parity.iter().enumerate() {
        let h = ParityHeader {
            block_id: id,
            total: HEADER_BYTES as u64 + l.rel.size_bytes,
            start: g.start,
            end: g.end,
            symbol_bytes: g.symbol as u16,
            m: g.m as u8,
            n: g.n as u8,
            index: j as u8,
        };
        let Some(d) = h.datagram(p, room) else {
            skipped += 1;
            continue;
        };
        bytes += d.len() as u64;
        conn.send_datagram(bytes::Bytes::from(d))?;
    }
    Ok((bytes, skipped))
}

struct Live {
    rel: Release,
    header: [u8; HEADER_BYTES],
    stream: Option<SendStream>,
    first_send_us: Option<u64>,
}

fn path_row(conn: &Connection, bw: f64, pending: usize, clock: &Clock) -> String {
    let s = conn.stats();
    format!(
        "{},{:.3},{},{},{},{},{:.0},{}",
        clock.unix_us(),
        s.path.rtt.as_secs_f64() * 1e3,
        s.path.cwnd,
        s.path.lost_packets,
        s.path.sent_packets,
        s.udp_tx.bytes,
        bw,
        pending
    )
}

struct Log {
    csv: Csv,
    t0_us: u64,
    deadline_us: u64,
}

impl Log {
    fn block(&mut self, l: &Live, end_el_us: u64, sent: u64, outcome: &str) -> Result<()> {
        let first = l.first_send_us.map_or(String::new(), |t| t.to_string());
        self.csv.line(&format!(
            "{},{},{},{},{},{},{},{},{},{}",
            l.rel.id,
            l.rel.round,
            l.rel.priority,
            l.rel.size_bytes,
            self.t0_us + l.rel.at_us,
            self.deadline_us,
            first,
            self.t0_us + end_el_us,
            sent,
            outcome
        ))
    }
}

pub async fn run(args: &Args, conn: &Connection, log_dir: &Path, clock: Clock) -> Result<Outcome> {
    let pattern = args.pattern();
    let releases = pattern.releases((args.duration_s * 1e6) as u64);
    let stop_us = ((args.duration_s + args.drain_s) * 1e6) as u64;
    let mut sched = Scheduler::new(args.policy(), pattern.pmax());
    let mut bw = BwEstimator::new(BW_INTERVAL_US, BW_WINDOW, args.initial_bw_mbyte_s * 1e6);
    let mut live: HashMap<u64, Live> = HashMap::new();
    let mut buf = vec![0u8; args.chunk_bytes as usize];
    let mut out = Outcome::default();

    let mut path = Csv::create(log_dir, "path_stats.csv", PATH_HEADER)?;
    let redundancy = args.redundancy != Redundancy::Off;
    let always = args.redundancy == Redundancy::Always;
    let mut fec_log = Csv::create(log_dir, "fec_groups.csv", FEC_HEADER)?;
    let mut loss = LossWindow::default();
    let mut groups: HashMap<u64, Group> = HashMap::new();
    let t0 = clock.now();
    let t0_us = clock.unix_us();
    let mut log = Log {
        csv: Csv::create(log_dir, "blocks_sent.csv", SENT_HEADER)?,
        t0_us,
        deadline_us: pattern.deadline_us,
    };
    let el = || clock.now().duration_since(t0).as_micros() as u64;
    let mut next = 0usize;
    let mut next_sample = 0u64;
    loop {
        let now = el();
        if now >= stop_us {
            break;
        }
        while next < releases.len() && releases[next].at_us <= now {
            let r = releases[next];
            let header = BlockHeader {
                block_id: r.id,
                payload_bytes: r.size_bytes,
                priority: r.priority,
                created_us: t0_us + r.at_us,
                deadline_us: pattern.deadline_us,
            };
            sched
                .push(Block {
                    id: r.id,
                    size_bytes: HEADER_BYTES as u64 + r.size_bytes,
                    priority: r.priority,
                    created_us: r.at_us,
                    deadline_us: pattern.deadline_us,
                    deps: vec![],
                })
                .map_err(|e| anyhow!("{e}"))?;
            live.insert(
                r.id,
                Live {
                    rel: r,
                    header: header.encode(),
                    stream: None,
                    first_send_us: None,
                },
            );
            out.released += 1;
            next += 1;
        }
        if now >= next_sample {
            let st = conn.stats();
            bw.sample(now, st.udp_tx.bytes, sched.pending() > 0);
            let rtt_us = conn.rtt().as_micros() as u64;
            loss.sample(now, st.path.sent_packets, st.path.lost_packets, rtt_us);
            path.line(&path_row(conn, bw.estimate(), sched.pending(), &clock))?;
            next_sample = now + BW_INTERVAL_US;
        }
        for d in sched.expire(now) {
            groups.remove(&d.id);
            let mut l = live.remove(&d.id).expect("every queued block is live");
            if let Some(s) = l.stream.as_mut() {
                // Fails only if the stream is already closed: then there is nothing to stop.
                if s.reset(VarInt::from_u32(0)).is_ok() {
                    out.streams_reset += 1;
                }
            }
            out.dropped += 1;
            log.block(&l, now, d.sent_bytes, "dropped")?;
        }
        let est = Estimate {
            bandwidth_bytes_per_s: bw.estimate(),
            one_way_delay_us: (conn.rtt().as_micros() / 2) as u64,
        };
        // The next moment the decision may change without an ACK: a release, a sample, a
        // block falling due, the end.
        let wake_us = [
            releases.get(next).map(|r| r.at_us),
            Some(next_sample),
            sched.next_due_us(),
            Some(stop_us),
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("stop_us is always there");
        let wake = t0 + Duration::from_micros(wake_us);
        let Some(id) = sched.pick(now, &est) else {
            tokio::time::sleep_until(wake).await;
            continue;
        };
        if redundancy && !groups.contains_key(&id) {
            let c = args.chunk_bytes as usize;
            if let Some(g) = start_group(
                conn,
                &sched,
                id,
                now,
                &est,
                c,
                &loss,
                &mut fec_log,
                always,
                &clock,
            )? {
                out.fec_groups += 1;
                groups.insert(id, g);
            }
        }
        let l = live.get_mut(&id).expect("every queued block is live");
        if l.stream.is_none() {
            l.stream = Some(conn.open_uni().await?);
        }
        let offset = sched.sent_bytes(id).expect("picked") as usize;
        let total = HEADER_BYTES + l.rel.size_bytes as usize;
        // A chunk never crosses the end of the block's redundancy group.
        let limit = groups.get(&id).map_or(total, |g| g.end as usize);
        let n = (limit - offset).min(buf.len());
        fill(&l.header, id, offset as u64, &mut buf[..n]);
        let s = l.stream.as_mut().expect("opened above");
        tokio::select! {
            biased; // a fixed order, so a run in virtual time repeats exactly
            r = s.write(&buf[..n]) => {
                let w = r?;
                if l.first_send_us.is_none() {
                    l.first_send_us = Some(clock.unix_us());
                }
                out.block_bytes_written += w as u64;
                let done = sched.on_sent(id, w as u64).map_err(|e| anyhow!(e))?;
                let written = offset as u64 + w as u64;
                if groups.get(&id).is_some_and(|g| written >= g.end) {
                    let g = groups.remove(&id).expect("checked");
                    let (bytes, skipped) = send_parity(conn, l, &g)?;
                    out.parity_bytes += bytes;
                    out.parity_skipped += skipped;
                }
                if done {
                    let mut l = live.remove(&id).expect("live");
                    let _ = l.stream.as_mut().expect("opened").finish();
                    out.completed += 1;
                    log.block(&l, el(), total as u64, "sent")?;
                }
            }
            _ = tokio::time::sleep_until(wake) => {}
        }
    }
    let now = el();
    let mut rest: Vec<_> = live.into_values().collect();
    rest.sort_by_key(|l| l.rel.id);
    for l in rest {
        let sent = sched.sent_bytes(l.rel.id).unwrap_or(0);
        out.pending += 1;
        log.block(&l, now, sent, "pending")?;
    }
    path.line(&path_row(conn, bw.estimate(), sched.pending(), &clock))?;
    log.csv.flush()?;
    path.flush()?;
    fec_log.flush()?;
    Ok(out)
}
