//! The sender: frames from the source file at `fps` through the live encoder, RTP
//! packetisation, the RTP queue, the rate controller (SCReAM, trivial or fixed) and the
//! transport; RTCP feedback in, or feedback inferred from quinn's ACKs (cc.rs); an RTCP PLI
//! in makes the encoder's next frame an IDR. The frames are paced by the wall clock on an
//! encoder thread in real time, and by tokio's clock inside the task in virtual time
//! ([`CodecTime`]); both make them with one [`FrameMaker`].

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use quicsetup::csv::Csv;
use tokio::sync::mpsc;

use roq_core::ccfb::{Ccfb, RtsUnwrapper};
use roq_core::gcc::Gcc;
use roq_core::h264::Packetizer;
use roq_core::pli::Pli;
use roq_core::rtp;
use roq_core::scream::{Scream, ScreamConfig, Transmit};
use roq_core::trivial::Trivial;

use crate::cc::{TapEvent, Taps};
use crate::cli::{Args, Feedback, RateCtl};
use crate::media::{is_idr, CodecTime, Encoder};
use crate::net::{rtcp_bye, Net, Recv};
use quicsetup::Clock;

pub const SSRC: u32 = 0x0005_ca1e;
pub const PAYLOAD_TYPE: u8 = 96;
const RATE_LOG_US: u64 = 100_000;

#[derive(Debug, Default)]
pub struct Outcome {
    pub frames: u64,
    /// frames holding an IDR (x264's scenecut adds IDRs between the key-int ones)
    pub key_frames: u64,
    pub rtp_packets: u64,
    pub rtp_bytes: u64,
    pub feedback_reports: u64,
    pub queue_discarded: u64,
    pub competing_bytes: u64,
    /// RTCP PLIs (RFC 4585) that arrived
    pub pli_received: u64,
    /// IDRs made at a PLI's request (force-key-unit before the frame)
    pub key_frames_forced: u64,
}

struct Encoded {
    index: u64,
    au: Vec<u8>,
    capture_us: u64,
    kbps: u32,
    /// a PLI asked for this frame to be an IDR
    forced: bool,
}

/// What the encoder needs to know, as plain data (it is made on the encoder's own thread in
/// real time).
#[derive(Clone)]
struct MakerConfig {
    width: u32,
    height: u32,
    fps: u32,
    start_kbps: u32,
    key_int_frames: u32,
    x264_preset: String,
    frame_bytes: usize,
    n_frames: u64,
    /// x264's threads: 0 (automatic) in real time, 1 in virtual time (deterministic)
    x264_threads: u32,
}

impl MakerConfig {
    fn of(args: &Args, codec_time: CodecTime) -> Self {
        MakerConfig {
            width: args.width,
            height: args.height,
            fps: args.fps,
            start_kbps: args.start_kbps,
            key_int_frames: args.key_int_frames,
            x264_preset: args.x264_preset.clone(),
            frame_bytes: args.frame_bytes(),
            n_frames: (args.duration_s * args.fps as f64).round() as u64,
            x264_threads: match codec_time {
                CodecTime::Live => 0,
                CodecTime::Zero => 1,
            },
        }
    }

    /// When frame `i` is due after the first.
    fn offset(&self, i: u64) -> Duration {
        Duration::from_secs_f64(i as f64 / self.fps as f64)
    }
}

/// The source looped through the encoder: one frame per call, whatever paces the calls.
struct FrameMaker {
    cfg: MakerConfig,
    enc: Encoder,
    source: Vec<u8>,
}

impl FrameMaker {
    fn new(cfg: MakerConfig, source: Vec<u8>) -> Result<Self> {
        let enc = Encoder::with_threads(
            cfg.width,
            cfg.height,
            cfg.fps,
            cfg.start_kbps,
            cfg.key_int_frames,
            &cfg.x264_preset,
            cfg.x264_threads,
        )?;
        Ok(FrameMaker { cfg, enc, source })
    }

    /// Encodes frame `i` at the controller's current target; an IDR if a PLI arrived since
    /// the last frame (RFC 4585 §6.3.1.1: the sender may answer with an intra picture;
    /// SCReAM's RTP queue carries its size). Its capture time is read from `clock` just
    /// before x264 gets it.
    fn make(
        &mut self,
        i: u64,
        (target_kbps, force_key): &Shared,
        clock: &Clock,
    ) -> Result<Encoded> {
        let kbps = target_kbps.load(Ordering::Relaxed);
        self.enc.set_kbps(kbps);
        let forced = force_key.swap(false, Ordering::Relaxed) && self.enc.force_key_unit();
        let frame_bytes = self.cfg.frame_bytes;
        let n_src = (self.source.len() / frame_bytes) as u64;
        let off = (i % n_src) as usize * frame_bytes;
        let capture_us = clock.unix_us();
        let au = self.enc.encode(
            &self.source[off..off + frame_bytes],
            i * 1_000_000_000 / self.cfg.fps as u64,
        )?;
        Ok(Encoded {
            index: i,
            au,
            capture_us,
            kbps,
            forced,
        })
    }
}

/// The controller's target for the encoder (kbit/s) and whether a PLI asks for an IDR.
type Shared = (Arc<AtomicU32>, Arc<AtomicBool>);

/// Where the frames come from: one [`FrameMaker`], paced by the wall clock on a thread of its
/// own (real time) or by tokio's clock inside the session's task (virtual time).
enum Frames {
    /// Real time: an OS thread sleeps until each frame is due (`std::thread::sleep`) and
    /// encodes it while the session runs on, so x264's CPU time delays no packet.
    Thread {
        rx: mpsc::UnboundedReceiver<Encoded>,
        handle: std::thread::JoinHandle<Result<()>>,
    },
    /// Virtual time: the session waits for each frame's tick on tokio's clock and encodes it
    /// synchronously (x264 works on GStreamer's thread while the task waits for the access
    /// unit): the runtime is busy meanwhile, so no virtual time passes.
    Inline {
        maker: Box<FrameMaker>,
        next: u64,
        t0: tokio::time::Instant,
    },
}

impl Frames {
    fn start(
        args: &Args,
        source: Vec<u8>,
        shared: &Shared,
        clock: Clock,
        codec_time: CodecTime,
    ) -> Result<Self> {
        let cfg = MakerConfig::of(args, codec_time);
        Ok(match codec_time {
            CodecTime::Live => {
                let (tx, rx) = mpsc::unbounded_channel();
                let shared = shared.clone();
                let handle = std::thread::spawn(move || {
                    let n_frames = cfg.n_frames;
                    let mut maker = FrameMaker::new(cfg, source)?;
                    let t0 = clock.now().into_std();
                    for i in 0..n_frames {
                        let due = t0 + maker.cfg.offset(i);
                        if let Some(d) = due.checked_duration_since(clock.now().into_std()) {
                            std::thread::sleep(d);
                        }
                        if tx.send(maker.make(i, &shared, &clock)?).is_err() {
                            break;
                        }
                    }
                    Ok(())
                });
                Frames::Thread { rx, handle }
            }
            CodecTime::Zero => Frames::Inline {
                maker: Box::new(FrameMaker::new(cfg, source)?),
                next: 0,
                t0: clock.now(),
            },
        })
    }

    /// The next frame, None after the last (cancel-safe: a frame is made only once its tick
    /// has come, and then without waiting).
    async fn next(&mut self, shared: &Shared, clock: &Clock) -> Result<Option<Encoded>> {
        match self {
            Frames::Thread { rx, .. } => Ok(rx.recv().await),
            Frames::Inline { maker, next, t0 } => {
                if *next >= maker.cfg.n_frames {
                    return Ok(None);
                }
                tokio::time::sleep_until(*t0 + maker.cfg.offset(*next)).await;
                let f = maker.make(*next, shared, clock)?;
                *next += 1;
                Ok(Some(f))
            }
        }
    }

    /// The encoder's end: its thread's error, if it failed.
    fn finish(self) -> Result<()> {
        match self {
            Frames::Thread { rx, handle } => {
                drop(rx);
                handle
                    .join()
                    .map_err(|_| anyhow!("the encoder thread panicked"))?
                    .context("encoder")
            }
            Frames::Inline { .. } => Ok(()),
        }
    }
}

enum Ctl {
    Scream(Box<Scream>),
    Gcc(Box<Gcc>),
    Trivial(Trivial),
    Fixed(f64),
}

impl Ctl {
    /// Congestion feedback (RTCP or inferred): for the controllers that take it.
    fn on_feedback(&mut self, now_us: u64, reports: &[(u64, Option<u64>)]) {
        match self {
            Ctl::Scream(s) => s.on_feedback(now_us, reports),
            Ctl::Gcc(g) => g.on_feedback(now_us, reports),
            Ctl::Trivial(_) | Ctl::Fixed(_) => {}
        }
    }

    /// A loss event from QUIC (inferred feedback names no packet): SCReAM reacts; GCC's loss
    /// controller needs per-packet reports and sees none in this mode.
    fn on_loss(&mut self, now_us: u64) {
        if let Ctl::Scream(s) = self {
            s.on_loss(now_us);
        }
    }

    fn target_bps(&self) -> f64 {
        match self {
            Ctl::Scream(s) => s.target_bitrate_bps(),
            Ctl::Gcc(g) => g.target_bitrate_bps(),
            Ctl::Trivial(t) => t.target_bitrate_bps(),
            Ctl::Fixed(b) => *b,
        }
    }
}

/// The extended sequence number of a reported 16-bit one, at or below the highest sent.
fn ext_of(seq16: u16, highest: u64) -> Option<u64> {
    let d = (highest as u16).wrapping_sub(seq16) as u64;
    highest.checked_sub(d)
}

pub async fn run(
    args: &Args,
    mut net: Net,
    taps: Taps,
    clock: Clock,
    codec_time: CodecTime,
) -> Result<Outcome> {
    let src = args.source.as_ref().ok_or_else(|| anyhow!("--source"))?;
    let source = std::fs::read(src).with_context(|| format!("reading {}", src.display()))?;
    let dir = &args.log_dir;
    let mut frames_log = Csv::create(
        dir,
        "frames_sent.csv",
        "frame_index,rtp_ts,size_bytes,packets,target_kbps,capture_us,key,forced",
    )?;
    let mut rate_log = Csv::create(
        dir,
        "rate.csv",
        "time_us,target_bps,send_rate_bps,rtp_queue_pkts,scream_cwnd_bytes,scream_qdelay_us,\
         quic_cwnd_bytes,rtt_us,quic_lost_packets",
    )?;
    let mut ctl = match args.rate {
        RateCtl::Scream => Ctl::Scream(Box::new(Scream::new(ScreamConfig {
            min_bitrate_bps: args.min_kbps as f64 * 1e3,
            max_bitrate_bps: args.max_kbps as f64 * 1e3,
            start_bitrate_bps: args.start_kbps as f64 * 1e3,
        }))),
        RateCtl::Gcc => Ctl::Gcc(Box::new(Gcc::new(
            args.min_kbps as f64 * 1e3,
            args.max_kbps as f64 * 1e3,
            args.start_kbps as f64 * 1e3,
        ))),
        // decisions half a frame interval off the frame clock (see roq_core::trivial)
        RateCtl::Trivial => Ctl::Trivial(Trivial::new(200_000, 500_000 / args.fps as u64)),
        RateCtl::Fixed => Ctl::Fixed(args.start_kbps as f64 * 1e3),
    };
    let target_kbps = Arc::new(AtomicU32::new((ctl.target_bps() / 1e3) as u32));
    let force_key = Arc::new(AtomicBool::new(false));
    let shared: Shared = (target_kbps.clone(), force_key.clone());
    let mut frames = Frames::start(args, source, &shared, clock, codec_time)?;

    let stop = Arc::new(AtomicBool::new(false));
    let competing = match (&net, args.competing_stream) {
        (Net::Quic(c), true) => Some(tokio::spawn(competing_stream(c.clone(), stop.clone()))),
        _ => None,
    };

    let t0 = clock.now().into_std();
    let us = |i: Instant| i.saturating_duration_since(t0).as_micros() as u64;
    let mut pk = Packetizer::new(SSRC, PAYLOAD_TYPE, args.mtu_bytes, 0);
    let ts_step = 90_000 / args.fps as u64;
    let mut next_seq: u64 = 0; // extended sequence number of the next packet
    let mut queued: BTreeMap<u64, Vec<u8>> = BTreeMap::new(); // the RTP queue
    let mut handed: VecDeque<(u64, Instant)> = VecDeque::new(); // for inferred feedback
    let mut unwrap_rts = RtsUnwrapper::default();
    let mut out = Outcome::default();
    let mut encoder_done = false;
    let mut done_at: Option<Instant> = None;
    let mut next_log = 0u64;
    let mut bytes_since_log = 0u64;
    let mut wake = clock.now().into_std();
    let closed = loop {
        tokio::select! {
            biased;
            e = frames.next(&shared, &clock), if !encoder_done => match e? {
                None => { encoder_done = true; done_at = Some(clock.now().into_std()); }
                Some(f) => {
                    let now_us = us(clock.now().into_std());
                    let ts = (f.index * ts_step) as u32;
                    let pkts = pk.packetize(&f.au, ts);
                    let key = is_idr(&f.au);
                    frames_log.line(&format!("{},{ts},{},{},{},{},{},{}", f.index, f.au.len(),
                        pkts.len(), f.kbps, f.capture_us, u8::from(key), u8::from(f.forced && key)))?;
                    out.frames += 1;
                    out.key_frames += u64::from(key);
                    out.key_frames_forced += u64::from(f.forced && key);
                    for p in pkts {
                        if let Ctl::Scream(s) = &mut ctl { s.enqueue(now_us, next_seq, p.len()); }
                        queued.insert(next_seq, p);
                        next_seq += 1;
                    }
                }
            },
            r = net.recv() => match r {
                Recv::Packet(p) if rtp::is_rtcp(&p) => {
                    if Pli::decode(&p).is_ok() {
                        out.pli_received += 1;
                        force_key.store(true, Ordering::Relaxed);
                    } else if let Ok(fb) = Ccfb::decode(&p, &mut unwrap_rts) {
                        out.feedback_reports += 1;
                        if args.feedback == Feedback::Rtcp && next_seq > 0 {
                            let reports: Vec<(u64, Option<u64>)> = fb.reports.iter()
                                .filter_map(|r| ext_of(r.seq, next_seq - 1).map(|e| (e, r.arrival_us)))
                                .collect();
                            ctl.on_feedback(us(clock.now().into_std()), &reports);
                        }
                    }
                }
                Recv::Packet(_) | Recv::Other => {}
                Recv::Closed(why) => break Some(why),
            },
            _ = tokio::time::sleep_until(wake.into()) => {}
        }
        let now = clock.now().into_std();
        let now_us = us(now);
        // feedback inferred from QUIC: ACKs and losses the tap saw
        let events: Vec<TapEvent> = taps.lock().unwrap().drain(..).collect();
        if args.feedback == Feedback::Quic {
            for e in events {
                match e {
                    TapEvent::Ack { now: at, sent } => {
                        let rtt = at.saturating_duration_since(sent);
                        let arrival = us(sent) + rtt.as_micros() as u64 / 2;
                        let mut reports = Vec::new();
                        while handed.front().is_some_and(|&(_, h)| h <= sent) {
                            reports.push((handed.pop_front().unwrap().0, Some(arrival)));
                        }
                        if !reports.is_empty() {
                            ctl.on_feedback(us(at), &reports);
                        }
                    }
                    TapEvent::Loss { now: at } => ctl.on_loss(us(at)),
                }
            }
        }
        // the RTP queue drains as the controller (and quinn's buffer) allow
        wake = now + Duration::from_millis(5);
        loop {
            let head_len = match &ctl {
                Ctl::Scream(_) => args.mtu_bytes,
                _ => queued.values().next().map_or(0, |p| p.len()),
            };
            if queued.is_empty() || !net.has_room(head_len) {
                if !queued.is_empty() {
                    wake = now + Duration::from_millis(1);
                }
                break;
            }
            let seq = match &mut ctl {
                Ctl::Scream(s) => match s.poll_transmit(now_us) {
                    Transmit::Send { seq, .. } => seq,
                    Transmit::WaitUntil(t) => {
                        wake = wake.min(t0 + Duration::from_micros(t));
                        break;
                    }
                    Transmit::Blocked => break,
                },
                _ => *queued.keys().next().unwrap(),
            };
            let Some(p) = queued.remove(&seq) else {
                continue;
            };
            net.send(&p).await?;
            if let Ctl::Gcc(g) = &mut ctl {
                g.on_sent(now_us, seq, p.len());
            }
            out.rtp_packets += 1;
            out.rtp_bytes += p.len() as u64;
            bytes_since_log += p.len() as u64;
            if args.feedback == Feedback::Quic {
                handed.push_back((seq, now));
            }
        }
        if let Ctl::Scream(s) = &mut ctl {
            let gone = s.take_discarded();
            if gone > 0 {
                out.queue_discarded += gone;
                // SCReAM discarded its whole queue: the same packets leave this one
                queued.clear();
            }
        }
        let qlen = match &ctl {
            Ctl::Scream(s) => s.queue_len(),
            _ => queued.len(),
        };
        if let Ctl::Trivial(t) = &mut ctl {
            t.on_queue(now_us, qlen);
            wake = wake.min(t0 + Duration::from_micros(t.next_decision_us()));
        }
        target_kbps.store((ctl.target_bps() / 1e3).round() as u32, Ordering::Relaxed);
        if now_us >= next_log {
            let (qc, rtt, lost) = match &net {
                Net::Quic(c) => {
                    let st = c.stats();
                    (
                        st.path.cwnd,
                        st.path.rtt.as_micros() as u64,
                        st.path.lost_packets,
                    )
                }
                Net::Udp { .. } => (0, 0, 0),
            };
            let (scw, sqd) = match &ctl {
                Ctl::Scream(s) => (s.cwnd as u64, s.qdelay_us as u64),
                _ => (0, 0),
            };
            let dt = (now_us + RATE_LOG_US).saturating_sub(next_log).max(1) as f64 / 1e6;
            rate_log.line(&format!(
                "{},{:.0},{:.0},{qlen},{scw},{sqd},{qc},{rtt},{lost}",
                clock.unix_us(),
                ctl.target_bps(),
                bytes_since_log as f64 * 8.0 / dt
            ))?;
            bytes_since_log = 0;
            next_log = now_us + RATE_LOG_US;
        }
        if let Some(d) = done_at {
            if queued.is_empty() || now.saturating_duration_since(d).as_secs_f64() > args.drain_s {
                break None;
            }
        }
    };
    stop.store(true, Ordering::Relaxed);
    if let Some(c) = competing {
        out.competing_bytes = c.await.unwrap_or(0);
    }
    if let Net::Udp { .. } = &net {
        for _ in 0..3 {
            net.send(&rtcp_bye(SSRC)).await?;
        }
    }
    frames_log.flush()?;
    rate_log.flush()?;
    frames.finish()?;
    if let Some(why) = closed {
        return Err(anyhow!("the receiver went away: {why}"));
    }
    Ok(out)
}

/// A unidirectional stream that sends as fast as QUIC lets it (the paper's competing bulk
/// transfer); returns the bytes written.
async fn competing_stream(c: quinn::Connection, stop: Arc<AtomicBool>) -> u64 {
    let Ok(mut s) = c.open_uni().await else {
        return 0;
    };
    let chunk = vec![0u8; 16 * 1024];
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        match s.write(&chunk).await {
            Ok(k) => n += k as u64,
            Err(_) => break,
        }
    }
    let _ = s.reset(quinn::VarInt::from_u32(0));
    n
}
