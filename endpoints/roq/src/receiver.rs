//! The receiver: RTP in, frames assembled by timestamp (roq-core's Assembler), decoded by
//! avdec_h264, the luma of each decoded picture written to `decoded.y`; RTCP congestion
//! feedback (RFC 8888) out every `--feedback-interval-ms` when `--feedback rtcp`; an RTCP PLI
//! (RFC 4585) out when a frame is lost and `--loss-recovery pli` (roq-core's PliRequester
//! decides when). A picture's `decoded_us` is when the decoder handed it out (real time) or
//! when its access unit was pushed (virtual time: decoding takes none), see [`DecodeTime`].

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use quicsetup::csv::Csv;

use roq_core::ccfb::FeedbackBuilder;
use roq_core::h264::{Assembled, Assembler};
use roq_core::pli::{FrameEvent, Pli, PliConfig, PliRequester, PliStats};
use roq_core::rtp::{self, SeqExtender};

use crate::cli::{Args, Feedback};
use crate::media::{is_idr, BusLog, CodecTime, Decoder};
use crate::net::{is_bye, Net, Recv};
use quicsetup::{Clock, Console};

const RECEIVER_SSRC: u32 = 0x0000_feed;
/// How long the writer waits for a decoded picture at a time.
const PULL_WAIT: Duration = Duration::from_millis(200);
/// How long the decoder may take to drain after the last access unit: this many empty pulls
/// of [`PULL_WAIT`] (10 s of wall time; counted, not timed, so the writer's thread reads no
/// clock).
const WRITER_GRACE_PULLS: u32 = 50;

#[derive(Debug, Default)]
pub struct Outcome {
    pub packets: u64,
    pub frames_complete: u64,
    /// complete frames holding an IDR: the only ones decoding can start from
    pub key_frames_complete: u64,
    pub frames_lost: u64,
    /// access units handed to the decoder (every complete frame)
    pub frames_pushed: u64,
    pub pictures_decoded: u64,
    /// the decoder pipeline's bus: an ERROR there means it stopped decoding
    pub decoder_bus: BusLog,
    pub feedback_sent: u64,
    /// the PLI decision's counters (PLIs sent, chain breaks, undecodable frames)
    pub pli: PliStats,
    pub end: String,
    pub competing_bytes: u64,
}

/// Reads every unidirectional stream the sender opens and discards the data.
async fn drain_streams(c: quinn::Connection, n: Arc<AtomicU64>) {
    while let Ok(mut s) = c.accept_uni().await {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(Some(k)) = s.read(&mut buf).await {
            n.fetch_add(k as u64, Ordering::Relaxed);
        }
    }
}

fn pts_ns(ts: u32) -> u64 {
    ts as u64 * 1_000_000_000 / 90_000
}

/// When a decoded picture counts as decoded (`decoded_frames.csv` `decoded_us`).
#[derive(Clone)]
enum DecodeTime {
    /// Real time: when the decoder hands the picture out, read from the session's clock on
    /// the writer's thread (decoding takes the time it takes).
    Handed(Clock),
    /// Virtual time: the instant its access unit was pushed into the decoder, by PTS. The
    /// decoder works on GStreamer's threads in wall time, which must not show in the logs:
    /// decoding takes no virtual time, as no endpoint's CPU does on the sim site.
    Pushed(Arc<Mutex<BTreeMap<u64, u64>>>),
}

impl DecodeTime {
    fn new(clock: Clock, codec_time: CodecTime) -> Self {
        match codec_time {
            CodecTime::Live => DecodeTime::Handed(clock),
            CodecTime::Zero => DecodeTime::Pushed(Arc::default()),
        }
    }

    /// An access unit of `pts_ns` goes into the decoder now.
    fn on_push(&self, pts_ns: u64, now_us: u64) {
        if let DecodeTime::Pushed(m) = self {
            m.lock().unwrap().insert(pts_ns, now_us);
        }
    }

    /// The decode time of the picture of `pts_ns` (pictures come out in PTS order: the push
    /// times of earlier access units that gave no picture are dropped).
    fn of_picture(&self, pts_ns: u64) -> Result<u64> {
        match self {
            DecodeTime::Handed(clock) => Ok(clock.unix_us()),
            DecodeTime::Pushed(m) => {
                let mut m = m.lock().unwrap();
                let later = m.split_off(&(pts_ns + 1));
                let at = m.remove(&pts_ns);
                *m = later;
                at.ok_or_else(|| {
                    anyhow!("a decoded picture of PTS {pts_ns} ns that was never pushed")
                })
            }
        }
    }
}

/// Writes each decoded picture's luma and a CSV row, until the decoder's end of stream;
/// reads the decoder's bus meanwhile (an ERROR there is reported at once on stderr).
fn spawn_writer(
    args: &Args,
    dec: Arc<Decoder>,
    ending: Arc<AtomicBool>,
    (decode_time, console): (DecodeTime, Console),
) -> Result<std::thread::JoinHandle<Result<(u64, BusLog)>>> {
    let luma = (args.width * args.height) as usize;
    let i420 = args.frame_bytes();
    let path = args.log_dir.join("decoded.y");
    let mut y = BufWriter::new(File::create(&path).with_context(|| format!("{}", path.display()))?);
    let mut log = Csv::create(
        &args.log_dir,
        "decoded_frames.csv",
        "decoded_index,rtp_ts,decoded_us",
    )?;
    Ok(std::thread::spawn(move || {
        let mut n = 0u64;
        let mut empty_after_end = 0u32;
        let mut bus = BusLog::default();
        loop {
            let errors = bus.errors;
            dec.poll_bus(&mut bus);
            if bus.errors > errors {
                console.err(format_args!(
                    "roq receiver: the decoder pipeline reported an error (it decodes no more): {:?}",
                    bus.first_messages.last()
                ));
            }
            match dec.pull(PULL_WAIT) {
                Some(p) => {
                    if p.i420.len() != i420 {
                        return Err(anyhow!(
                            "decoded picture of {} bytes, expected {i420} (--width/--height of the sender?)",
                            p.i420.len()
                        ));
                    }
                    y.write_all(&p.i420[..luma]).context("writing decoded.y")?;
                    let ts = (p.pts_ns as u128 * 90_000).div_ceil(1_000_000_000) as u64;
                    log.line(&format!("{n},{ts},{}", decode_time.of_picture(p.pts_ns)?))?;
                    n += 1;
                }
                None if dec.is_eos() => break,
                None => {
                    // a decoder that never reaches its end of stream must not hang the exit
                    if ending.load(Ordering::Relaxed) {
                        empty_after_end += 1;
                        if empty_after_end > WRITER_GRACE_PULLS {
                            console.err(format_args!(
                                "roq receiver: the decoder did not finish; stopped"
                            ));
                            break;
                        }
                    }
                }
            }
        }
        dec.poll_bus(&mut bus);
        y.flush().context("writing decoded.y")?;
        log.flush()?;
        Ok((n, bus))
    }))
}

pub async fn run(
    args: &Args,
    mut net: Net,
    (clock, codec_time): (Clock, CodecTime),
    console: &Console,
) -> Result<Outcome> {
    let dir = &args.log_dir;
    let dec = Arc::new(Decoder::new()?);
    let ending = Arc::new(AtomicBool::new(false));
    let decode_time = DecodeTime::new(clock, codec_time);
    let writer = spawn_writer(
        args,
        dec.clone(),
        ending.clone(),
        (decode_time.clone(), console.clone()),
    )?;
    let mut pkt_log = Csv::create(
        dir,
        "packets_received.csv",
        "arrival_us,seq,rtp_ts,size_bytes",
    )?;
    let mut frame_log = Csv::create(
        dir,
        "frames_received.csv",
        "rtp_ts,status,time_us,size_bytes",
    )?;
    let mut asm = Assembler::new();
    let mut ext = SeqExtender::default();
    let mut fb = FeedbackBuilder::new(RECEIVER_SSRC, 512, 16);
    let t0 = clock.now().into_std();
    let us = |i: Instant| i.saturating_duration_since(t0).as_micros() as u64;
    let mut out = Outcome::default();
    let interval = Duration::from_millis(args.feedback_interval_ms.max(1));
    let mut next_fb = clock.now().into_std() + interval;
    // the sender ends by itself; should its end not arrive, stop a little after it would
    let limit = clock.now().into_std()
        + Duration::from_secs_f64(args.duration_s + args.drain_s + args.connect_timeout_s);
    let send_fb = args.feedback == Feedback::Rtcp;
    // T_rr: the regular reports are the RFC 8888 ones, every --feedback-interval-ms (with
    // --feedback quic the receiver sends none; the same interval stands for RFC 4585's
    // regular schedule then: assumption)
    let mut pli = PliRequester::new(PliConfig {
        recovery: args.loss_recovery.into(),
        rtcp_interval_us: interval.as_micros() as u64,
        repeat_us: args.pli_repeat_ms * 1000,
    });
    let mut pli_log = Csv::create(dir, "pli_sent.csv", "time_us")?;
    let competing = Arc::new(AtomicU64::new(0));
    // the competing stream (if any) is read and thrown away, as fast as it comes
    let drain = match &net {
        Net::Quic(c) => Some(tokio::spawn(drain_streams(c.clone(), competing.clone()))),
        Net::Udp { .. } => None,
    };
    let decide = |a: Assembled, out: &mut Outcome, frame_log: &mut Csv| -> Result<FrameEvent> {
        match a {
            Assembled::Complete { timestamp, au } => {
                let idr = is_idr(&au);
                out.frames_complete += 1;
                out.key_frames_complete += u64::from(idr);
                frame_log.line(&format!(
                    "{timestamp},complete,{},{}",
                    clock.unix_us(),
                    au.len()
                ))?;
                decode_time.on_push(pts_ns(timestamp), clock.unix_us());
                dec.push(au, pts_ns(timestamp))?;
                out.frames_pushed += 1;
                Ok(FrameEvent::Complete { idr })
            }
            Assembled::Lost { timestamp } => {
                out.frames_lost += 1;
                frame_log.line(&format!("{timestamp},lost,{},0", clock.unix_us()))?;
                Ok(FrameEvent::Lost)
            }
        }
    };
    let far = limit + Duration::from_secs(3600);
    let mut last_ssrc: Option<u32> = None; // the media source a PLI names
    out.end = loop {
        let pli_at = pli
            .poll_timeout()
            .map_or(far, |t| t0 + Duration::from_micros(t));
        tokio::select! {
            biased;
            r = net.recv() => match r {
                Recv::Packet(p) if rtp::is_rtcp(&p) => {
                    if is_bye(&p) { break "bye".into(); }
                }
                Recv::Packet(p) => {
                    let Ok((h, payload)) = rtp::parse(&p) else { continue };
                    let now = clock.now().into_std();
                    let s = ext.extend(h.seq);
                    out.packets += 1;
                    pkt_log.line(&format!("{},{s},{},{}", clock.unix_us(), h.timestamp, p.len()))?;
                    let _ = payload;
                    last_ssrc = Some(h.ssrc);
                    fb.on_packet(h.ssrc, s, us(now));
                    for a in asm.push(&p).map_err(|e| anyhow!("{e}"))? {
                        let ev = decide(a, &mut out, &mut frame_log)?;
                        pli.on_frame(us(clock.now().into_std()), ev);
                    }
                }
                Recv::Other => {}
                Recv::Closed(why) => break why,
            },
            _ = tokio::time::sleep_until(next_fb.into()) => {
                next_fb += interval;
                if send_fb {
                    if let Some(r) = fb.report(us(clock.now().into_std())) {
                        net.send(&r.encode()).await?;
                        out.feedback_sent += 1;
                    }
                }
            }
            _ = tokio::time::sleep_until(pli_at.into()) => {
                pli.handle_timeout(us(clock.now().into_std()));
            }
            _ = tokio::time::sleep_until(limit.into()) => break "time limit".into(),
        }
        if pli.poll_pli() {
            let p = Pli {
                sender_ssrc: RECEIVER_SSRC,
                media_ssrc: last_ssrc.unwrap_or(0),
            };
            net.send(&p.encode()).await?;
            pli_log.line(&clock.unix_us().to_string())?;
        }
    };
    // the stream's end: what is still pending is lost, and no PLI is asked for any more
    for a in asm.flush() {
        decide(a, &mut out, &mut frame_log)?;
    }
    out.pli = pli.stats();
    pli_log.flush()?;
    pkt_log.flush()?;
    frame_log.flush()?;
    if let Some(d) = drain {
        d.abort();
        out.competing_bytes = competing.load(Ordering::Relaxed);
    }
    dec.end();
    ending.store(true, Ordering::Relaxed);
    (out.pictures_decoded, out.decoder_bus) = writer
        .join()
        .map_err(|_| anyhow!("the writer thread panicked"))??;
    Ok(out)
}
