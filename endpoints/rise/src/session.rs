//! One run over an established connection: the event loop driving rise-core with time,
//! received datagrams and quinn's datagram buffer space, and writing the logs.
//!
//! Egress: quinn's own datagram buffer is kept to about one datagram
//! (`--quinn-datagram-buffer-bytes`). Whenever it has room for the head the core's priority
//! channels would hand out, the head is dequeued and given to `send_datagram`. When the head
//! does not fit, it is dequeued and handed to `send_datagram_wait`, which completes once quinn
//! has made room; until then nothing else is dequeued, so later (even higher-priority)
//! datagrams wait in the channels, where the priority decision is still open.

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::time::Duration;

use anyhow::Result;
use bytes::Bytes;
use quicsetup::shell::Stop;
use quicsetup::{Clock, Env};
use quinn::{Connection, ConnectionError, SendDatagramError};
use rise_core::{Config, Endpoint};
use tokio::time::{interval_at, sleep_until, MissedTickBehavior};

use crate::cli::Args;
use crate::logs::{JsonObject, Logs, PathSample};
use crate::quiet::{Quiet, Ticker};
use crate::regime::Regime;
use crate::transport::{CLOSE_DONE, CLOSE_ERROR, CLOSE_SIGNAL};
use crate::wait::WaitMeter;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Ran its duration.
    Done,
    /// The peer closed the connection normally (its duration ended first).
    PeerClosed,
    /// Idle timeout or a connection error mid-run.
    PeerLost(String),
    Signal(&'static str),
}

impl End {
    pub fn exit_code(&self) -> u8 {
        match self {
            End::Done | End::PeerClosed => 0,
            End::PeerLost(_) => 3,
            End::Signal(_) => 1,
        }
    }
    pub fn reason(&self) -> String {
        match self {
            End::Done => "duration".to_string(),
            End::PeerClosed => "peer_closed".to_string(),
            End::PeerLost(why) => format!("peer_lost: {why}"),
            End::Signal(s) => format!("signal: {s}"),
        }
    }
}

fn classify(e: &ConnectionError) -> End {
    match e {
        ConnectionError::ApplicationClosed(c) if c.error_code == CLOSE_DONE => End::PeerClosed,
        ConnectionError::TimedOut => End::PeerLost("idle timeout".to_string()),
        other => End::PeerLost(other.to_string()),
    }
}

type Waiting<'a> = (u64, usize, Pin<Box<quinn::SendDatagram<'a>>>);

/// Egress state between the core's channels and quinn's datagram buffer.
struct Feeder<'a> {
    conn: &'a Connection,
    clock: Clock,
    meter: WaitMeter,
    /// Largest datagram both quinn's path and its (small) buffer take.
    max_payload: usize,
    /// A datagram handed to `send_datagram_wait`: (handed-over time, size, future).
    waiting: Option<Waiting<'a>>,
    too_large: u64,
    blocked_sends: u64,
}

impl<'a> Feeder<'a> {
    /// `buffer_bytes` is quinn's `datagram_send_buffer_size`: quinn books a fixed overhead per
    /// queued datagram (its `Datagram` struct) and reserves one such overhead, so the space
    /// it reports with an empty buffer is `buffer_bytes − overhead`.
    fn new(conn: &'a Connection, buffer_bytes: usize, clock: Clock) -> Self {
        let empty_space = conn.datagram_send_buffer_space();
        Feeder {
            conn,
            clock,
            meter: WaitMeter::new(empty_space, buffer_bytes.saturating_sub(empty_space)),
            max_payload: 0,
            waiting: None,
            too_large: 0,
            blocked_sends: 0,
        }
    }

    /// Keeps the core's idea of the datagram size in line with quinn's.
    fn sync_max(&mut self, core: &mut Endpoint, quinn_buffer_payload: usize) {
        let m = self
            .conn
            .max_datagram_size()
            .unwrap_or(1200)
            .min(quinn_buffer_payload);
        if m != self.max_payload {
            self.max_payload = m;
            core.set_max_datagram_size(m);
        }
    }

    /// Moves datagrams from the channels into quinn while it has room. `Some(end)` when the
    /// connection is gone: the peer's close (its duration ended first) can reach quinn between
    /// two sends, and ends the run as it does when the read side sees it first.
    fn pump(&mut self, core: &mut Endpoint) -> Result<Option<End>> {
        while self.waiting.is_none() {
            let Some(head) = core.peek_transmit_size() else {
                return Ok(None);
            };
            let now = self.clock.unix_us();
            let space = self.conn.datagram_send_buffer_space();
            if head <= space.min(self.max_payload) {
                let Some(t) = core.poll_transmit(now, space.min(self.max_payload)) else {
                    return Ok(None);
                };
                let len = t.bytes.len();
                match self.conn.send_datagram(Bytes::from(t.bytes)) {
                    Ok(()) => self.meter.insert(now, len, false),
                    Err(SendDatagramError::TooLarge) => self.too_large += 1,
                    Err(SendDatagramError::ConnectionLost(e)) => return Ok(Some(classify(&e))),
                    Err(e) => anyhow::bail!("quinn refused a datagram: {e}"),
                }
            } else {
                // The head does not fit in quinn's room now: hand it over to wait for room.
                let Some(t) = core.poll_transmit(now, self.max_payload.max(head)) else {
                    return Ok(None);
                };
                let len = t.bytes.len();
                if len > self.max_payload {
                    self.too_large += 1;
                    continue;
                }
                self.blocked_sends += 1;
                self.waiting = Some((
                    now,
                    len,
                    Box::pin(self.conn.send_datagram_wait(Bytes::from(t.bytes))),
                ));
            }
        }
        Ok(None)
    }
}

/// Resolves when the waiting datagram is in quinn's buffer (never if none waits).
async fn waiting_done(w: &mut Option<Waiting<'_>>) -> std::result::Result<(), SendDatagramError> {
    match w.as_mut() {
        Some((_, _, fut)) => fut.as_mut().await,
        None => std::future::pending().await,
    }
}

pub struct RunResult {
    pub end: End,
}

pub async fn run(
    args: &Args,
    cfg: Config,
    logs: &mut Logs,
    conn: &Connection,
    env: &Env,
) -> Result<RunResult> {
    let clock = env.clock;
    let now_us = || clock.unix_us();
    let start_us = now_us();
    let mut core = Endpoint::new(cfg.clone(), start_us);
    let mut feeder = Feeder::new(conn, args.quinn_datagram_buffer_bytes, clock);
    let quinn_buffer_payload = conn.datagram_send_buffer_space();
    feeder.sync_max(&mut core, quinn_buffer_payload);

    let t0 = clock.now();
    let end_at = t0 + Duration::from_secs_f64(args.duration_s);
    let ticker = |period: Duration| {
        let mut t = interval_at(t0, period);
        t.set_missed_tick_behavior(MissedTickBehavior::Skip);
        t
    };
    let mut path_tick = Ticker::new(ticker(Duration::from_millis(100)), t0);
    let mut chan_tick = ticker(Duration::from_secs(1));
    chan_tick.tick().await; // the first tick is immediate; rows from t = 1 s on
    let mut chan_tick = Ticker::new(chan_tick, t0);
    let mut meter_tick = Ticker::new(ticker(Duration::from_millis(1)), t0);
    let mut regime = Regime::default();
    let mut stop = Stop::for_net(&env.net);
    // Two timers made once and moved, not made afresh each turn: registering and removing
    // a tokio timer per turn of this loop (a turn per datagram) was a measurable share of a
    // sim run's CPU (endpoints/sim/README.md); they fire at the same instants either way.
    // Every timer of the loop is polled through a `Quiet` (quiet.rs), only when it may be due.
    let end_sleep = sleep_until(end_at);
    tokio::pin!(end_sleep);
    let mut end_quiet = Quiet::default();
    let core_sleep = sleep_until(t0);
    tokio::pin!(core_sleep);
    let mut core_quiet = Quiet::default();
    // The next datagram, one future until it is read (its waker stays registered with quinn
    // between turns instead of being added and removed at each).
    let read = conn.read_datagram();
    tokio::pin!(read);

    let end = loop {
        match feeder.pump(&mut core) {
            Ok(None) => {}
            Ok(Some(end)) => break end,
            Err(e) => {
                conn.close(CLOSE_ERROR, b"error");
                return Err(e);
            }
        }
        regime.observe(now_us(), feeder.waiting.is_some(), core.pending_bytes());
        while let Some(ev) = core.poll_event() {
            logs.event(&ev)?;
        }
        let wake = clock.instant_at_unix_us(core.poll_timeout());
        if core_sleep.deadline() != wake || core_sleep.is_elapsed() {
            core_sleep.as_mut().reset(wake);
            core_quiet.forget();
        }
        let meter_pending = feeder.meter.pending() > 0;
        tokio::select! {
            biased;
            s = stop.wait() => break End::Signal(s),
            _ = poll_fn(|cx| {
                end_quiet.poll(cx, clock.now(), end_at, |cx| end_sleep.as_mut().poll(cx))
            }) => break End::Done,
            r = &mut read => {
                read.set(conn.read_datagram());
                match r {
                    Ok(d) => core.handle_datagram(now_us(), &d),
                    Err(e) => break classify(&e),
                }
            }
            r = waiting_done(&mut feeder.waiting) => {
                let (since, len, _) = feeder.waiting.take().expect("a datagram was waiting");
                match r {
                    Ok(()) => feeder.meter.insert(since, len, true),
                    Err(SendDatagramError::ConnectionLost(e)) => break classify(&e),
                    Err(SendDatagramError::TooLarge) => feeder.too_large += 1,
                    Err(e) => {
                        conn.close(CLOSE_ERROR, b"error");
                        anyhow::bail!("quinn refused a datagram: {e}");
                    }
                }
            }
            _ = poll_fn(|cx| {
                let due = core_sleep.deadline();
                core_quiet.poll(cx, clock.now(), due, |cx| core_sleep.as_mut().poll(cx))
            }) => {}
            _ = poll_fn(|cx| path_tick.poll_tick(cx, clock.now())) => {
                let now = now_us();
                logs.path(now, &PathSample::from_quinn(conn))?;
                logs.sender(&regime.sample(now, core.pending_bytes()))?;
            }
            _ = poll_fn(|cx| chan_tick.poll_tick(cx, clock.now())) => {
                logs.channels(now_us(), &core.channel_stats())?;
                logs.flush()?;
            }
            _ = poll_fn(|cx| meter_tick.poll_tick(cx, clock.now())), if meter_pending => {}
        }
        let now = now_us();
        if now >= core.poll_timeout() {
            core.handle_timeout(now);
        }
        feeder.meter.observe(now, conn.datagram_send_buffer_space());
        feeder.sync_max(&mut core, quinn_buffer_payload);
    };

    match &end {
        End::Done => conn.close(CLOSE_DONE, b"done"),
        End::Signal(_) => conn.close(CLOSE_SIGNAL, b"signal"),
        _ => {}
    }
    while let Some(ev) = core.poll_event() {
        logs.event(&ev)?;
    }
    let now = now_us();
    logs.channels(now, &core.channel_stats())?;
    logs.path(now, &PathSample::from_quinn(conn))?;
    logs.sender(&regime.sample(now, core.pending_bytes()))?;
    logs.flush()?;

    let frames = conn.stats().frame_tx.datagram;
    // The kernel buffers of this endpoint's UDP socket, when it has one.
    let buffers = if env.net.is_kernel() {
        quicsetup::udpbuf::socket_buffers()
    } else {
        None
    };
    let summary = summary(
        args,
        &core,
        &feeder,
        &regime,
        &end,
        (start_us, now),
        (frames, buffers),
    );
    crate::logs::write_atomically(&args.common.log_dir.join("summary.json"), &summary)?;
    Ok(RunResult { end })
}

fn summary(
    args: &Args,
    core: &Endpoint,
    feeder: &Feeder<'_>,
    regime: &Regime,
    end: &End,
    (start_us, end_us): (u64, u64),
    (quinn_datagram_frames, kernel_buffers): (u64, Option<quicsetup::udpbuf::SocketBuffers>),
) -> String {
    let c = core.counters();
    let w = feeder.meter.summary();
    let r = regime.summary();
    let span_us = end_us.saturating_sub(start_us).max(1);
    let mut cfg = JsonObject::default();
    cfg.str("role", core.role().as_str())
        .float("duration_s", args.duration_s)
        .num("seed", args.seed)
        .float("video_bitrate_mbps", args.video_bitrate_mbps)
        .num("fps", args.fps)
        .float("frame_size_sigma", args.frame_size_sigma)
        .float("keyframe_factor", args.keyframe_factor)
        .opt_str(
            "frame_trace",
            args.frame_trace.as_ref().and_then(|p| p.to_str()),
        )
        .num("tracking_hz", args.tracking_hz)
        .float("tracking_speed_deg_s", args.tracking_speed_deg_s)
        .opt_str(
            "tracking_trace",
            args.tracking_trace.as_ref().and_then(|p| p.to_str()),
        )
        .bool("prio", core.config().prio)
        .str("fifo_drop", core.config().fifo_drop.as_str())
        .str("buffer_scheme", args.buffer_scheme())
        .float("processing_delay_ms", args.processing_delay_ms)
        .num("buffer_bytes", args.buffer_bytes)
        .num(
            "quinn_datagram_buffer_bytes",
            args.quinn_datagram_buffer_bytes,
        )
        .str("cc", args.common.cc.as_str())
        .num("deadline_ms", args.deadline_ms)
        .num("max_retx", args.max_retx);
    let mut o = JsonObject::default();
    o.str("role", core.role().as_str())
        .str("exit_reason", &end.reason())
        .num("exit_code", end.exit_code())
        .num("start_time_us", start_us)
        .num("end_time_us", end_us)
        .num("frames_encoded", c.frames_encoded)
        .num("key_frames", c.key_frames)
        .num("frames_displayed", c.frames_displayed)
        .num("frames_skipped", c.frames_skipped)
        .num("video_datagrams_sent", c.video_datagrams_sent)
        .num(
            "video_datagrams_retransmitted",
            c.video_datagrams_retransmitted,
        )
        .num("video_datagrams_received", c.video_datagrams_received)
        .num("duplicate_video_datagrams", c.duplicate_video_datagrams)
        .num("datagrams_malformed", c.datagrams_malformed)
        .num("freezes", c.freezes)
        .num("freeze_duration_us", c.freeze_duration_us)
        .num("deadline_expirations", c.deadline_expirations)
        .num(
            "frames_dropped_in_processing",
            c.frames_dropped_in_processing,
        )
        .str("buffer_scheme", args.buffer_scheme())
        .num("transport_limited_us", r.limited_us)
        .float(
            "transport_limited_pct",
            100.0 * r.limited_us as f64 / span_us as f64,
        )
        .num("buffer_queued_bytes_p50", r.queued_p50)
        .num("buffer_queued_bytes_p90", r.queued_p90)
        .num("buffer_queued_bytes_max", r.queued_max)
        .num("tracking_sent", c.tracking_sent)
        .num("tracking_received", c.tracking_received)
        .num("acks_sent", c.acks_sent)
        .num("acks_received", c.acks_received)
        .num("late_ticks_skipped", c.late_ticks_skipped)
        .num("quinn_wait_us_p50", w.p50_us)
        .num("quinn_wait_us_p99", w.p99_us)
        .num("quinn_wait_us_max", w.max_us)
        .num("quinn_waited_datagrams", w.waited)
        .num("quinn_datagrams", w.inserted)
        .num("quinn_wait_measured", w.measured)
        // DATAGRAM frames quinn sent: equals quinn_datagrams minus those still inside quinn at
        // exit, i.e. quinn dropped none of ours.
        .num("quinn_datagram_frames_sent", quinn_datagram_frames)
        .num("quinn_blocked_sends", feeder.blocked_sends)
        .num("datagrams_too_large", feeder.too_large)
        .num("max_datagram_bytes", feeder.max_payload);
    // The kernel buffers of this endpoint's UDP socket as the kernel reports them (quicsetup).
    if let Some(b) = kernel_buffers {
        o.num("udp_rcvbuf_bytes", b.rcvbuf_bytes)
            .str("udp_rcvbuf_mode", b.rcvbuf_mode.as_str())
            .num("udp_sndbuf_bytes", b.sndbuf_bytes)
            .str("udp_sndbuf_mode", b.sndbuf_mode.as_str());
    }
    o.obj("config", &cfg);
    o.render(0) + "\n"
}
