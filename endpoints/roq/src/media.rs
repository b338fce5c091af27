//! The live encoder and the decoder, GStreamer pipelines behind a small interface.
//!
//! Encoder: `appsrc` (raw I420) → `x264enc` (tune zerolatency: no B frames, no lookahead, one
//! access unit out per frame in) → `appsink` (Annex-B byte stream, one access unit per
//! buffer). Its `bitrate` property is mutable while playing: the controller's target reaches
//! the encoder at the next frame; a force-key-unit event ([`Encoder::force_key_unit`], the
//! answer to a PLI) makes the next frame an IDR. Decoder: `appsrc` (Annex-B access units) → `avdec_h264`
//! (one thread: no frame-threading delay; `max-errors=-1`, see [`Decoder::new`]) →
//! `videoconvert` → `appsink` (I420). The decoder's bus is read ([`Decoder::poll_bus`]): an
//! ERROR there stops the pipeline for good, and the receiver reports it in summary.json.

use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use gstreamer as gst;
use gstreamer::prelude::*;
use gstreamer_app as gst_app;

/// How the codecs' work stands to the session's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodecTime {
    /// Real time (the kernel's network): the encoder runs on an OS thread of its own, paced
    /// by the wall clock, and a picture's decode time is when the decoder hands it out, so
    /// encoding and decoding take the time they take on the machine.
    Live,
    /// Virtual time (an injected network: the sim's paused tokio clock): the session's task
    /// encodes each frame synchronously at its tick on tokio's clock, and a picture's decode
    /// time is the instant its access unit was pushed into the decoder. Coding takes no
    /// virtual time, as no endpoint's CPU does on the sim site.
    Zero,
}

impl CodecTime {
    /// Zero on an injected network (the sim's runtime, whose clock is paused), else Live.
    pub fn of(env: &quicsetup::Env) -> Self {
        if env.net.is_kernel() {
            CodecTime::Live
        } else {
            CodecTime::Zero
        }
    }
}

fn pipeline(desc: &str) -> Result<(gst::Pipeline, gst_app::AppSrc, gst_app::AppSink)> {
    gst::init().context("initialising GStreamer")?;
    let p = gst::parse::launch(desc)
        .with_context(|| format!("GStreamer pipeline {desc:?} (Makefile installs the plugins)"))?
        .downcast::<gst::Pipeline>()
        .map_err(|_| anyhow!("not a pipeline: {desc}"))?;
    let src = p
        .by_name("src")
        .and_then(|e| e.downcast::<gst_app::AppSrc>().ok())
        .ok_or_else(|| anyhow!("no appsrc"))?;
    let sink = p
        .by_name("sink")
        .and_then(|e| e.downcast::<gst_app::AppSink>().ok())
        .ok_or_else(|| anyhow!("no appsink"))?;
    p.set_state(gst::State::Playing)
        .context("starting the GStreamer pipeline")?;
    Ok((p, src, sink))
}

/// The GStreamer library version in use (recorded in summary.json).
pub fn gst_version() -> String {
    let _ = gst::init();
    gst::version_string().to_string()
}

fn buffer(data: Vec<u8>, pts_ns: u64) -> gst::Buffer {
    let mut b = gst::Buffer::from_mut_slice(data);
    b.get_mut()
        .unwrap()
        .set_pts(gst::ClockTime::from_nseconds(pts_ns));
    b
}

/// x264 through GStreamer.
pub struct Encoder {
    pipeline: gst::Pipeline,
    src: gst_app::AppSrc,
    sink: gst_app::AppSink,
    enc: gst::Element,
    kbps: u32,
}

impl Encoder {
    /// x264 with its automatic thread count (x264enc's `threads=0`): with tune zerolatency
    /// that is sliced threads, one slice per core (capped by the height). The same input
    /// then does not always give the same bytes: two virtual-time runs of one seed differed
    /// from frame 5 on at the same bitrate (`tests/virtual_time.rs`, before one thread).
    pub fn new(w: u32, h: u32, fps: u32, kbps: u32, key_int: u32, preset: &str) -> Result<Self> {
        Self::with_threads(w, h, fps, kbps, key_int, preset, 0)
    }

    /// As [`Encoder::new`] with `threads` x264 threads (0: automatic). One thread (one slice
    /// per frame) gives the same bytes for the same input: the sim's encoder.
    pub fn with_threads(
        w: u32,
        h: u32,
        fps: u32,
        kbps: u32,
        key_int: u32,
        preset: &str,
        threads: u32,
    ) -> Result<Self> {
        let desc = format!(
            "appsrc name=src is-live=true format=time \
             caps=video/x-raw,format=I420,width={w},height={h},framerate={fps}/1 \
             ! x264enc name=enc tune=zerolatency speed-preset={preset} key-int-max={key_int} \
               bitrate={kbps} threads={threads} \
             ! video/x-h264,stream-format=byte-stream,alignment=au \
             ! appsink name=sink sync=false"
        );
        let (pipeline, src, sink) = pipeline(&desc)?;
        let enc = pipeline
            .by_name("enc")
            .ok_or_else(|| anyhow!("no x264enc"))?;
        Ok(Encoder {
            pipeline,
            src,
            sink,
            enc,
            kbps,
        })
    }

    /// Sets x264's bitrate (kbit/s) for the frames from now on.
    pub fn set_kbps(&mut self, kbps: u32) {
        if kbps != self.kbps {
            self.enc.set_property("bitrate", kbps);
            self.kbps = kbps;
        }
    }

    /// Makes the next frame an IDR with SPS and PPS: GstVideoEncoder's upstream force-key-unit
    /// event (the "GstForceKeyUnit" structure of gst_video_event_new_upstream_force_key_unit,
    /// running time unset: as soon as possible), sent to x264enc's source pad as a downstream
    /// element would. Returns whether the encoder took it.
    pub fn force_key_unit(&self) -> bool {
        let s = gst::Structure::builder("GstForceKeyUnit")
            .field("all-headers", true)
            .build();
        self.enc
            .static_pad("src")
            .is_some_and(|p| p.send_event(gst::event::CustomUpstream::new(s)))
    }

    /// Encodes one frame; returns its access unit (Annex-B).
    pub fn encode(&mut self, frame: &[u8], pts_ns: u64) -> Result<Vec<u8>> {
        self.src
            .push_buffer(buffer(frame.to_vec(), pts_ns))
            .map_err(|e| anyhow!("pushing a frame into x264enc: {e:?}"))?;
        let s = self
            .sink
            .try_pull_sample(gst::ClockTime::from_seconds(5))
            .ok_or_else(|| anyhow!("x264enc gave no access unit within 5 s"))?;
        let b = s.buffer().ok_or_else(|| anyhow!("empty sample"))?;
        let m = b.map_readable().context("mapping an access unit")?;
        Ok(m.as_slice().to_vec())
    }
}

impl Drop for Encoder {
    fn drop(&mut self) {
        let _ = self.pipeline.set_state(gst::State::Null);
    }
}

/// Whether an Annex-B access unit holds an IDR slice (NAL type 5): the only frames a decoder
/// can start from, or recover at after a loss, here (no intra refresh).
pub fn is_idr(au: &[u8]) -> bool {
    roq_core::h264::split_annexb(au)
        .iter()
        .any(|n| n.first().is_some_and(|b| b & 0x1f == 5))
}

/// What the decoder's pipeline said on its bus, with the first few texts: ERROR messages
/// while the stream ran (after one the pipeline has stopped and decodes nothing more),
/// ERROR messages after [`Decoder::end`] (GstVideoDecoder posts "No valid frames decoded
/// before end of stream" there when it never output a picture: a report, not a stop), and
/// WARNING messages. An ERROR posted in the last poll interval (≤ 200 ms in the receiver)
/// before `end` is counted as at the end.
#[derive(Debug, Default)]
pub struct BusLog {
    pub errors: u64,
    pub errors_at_eos: u64,
    pub warnings: u64,
    pub first_messages: Vec<String>,
}

/// How many message texts a BusLog keeps (the counts go on).
const BUS_TEXTS: usize = 4;

/// avdec_h264 through GStreamer: push access units, pull decoded I420 frames (by PTS).
pub struct Decoder {
    pipeline: gst::Pipeline,
    src: gst_app::AppSrc,
    sink: gst_app::AppSink,
    ended: std::sync::atomic::AtomicBool,
}

/// One decoded picture.
pub struct Picture {
    pub pts_ns: u64,
    pub i420: Vec<u8>,
}

impl Decoder {
    /// `max-errors=-1`: with a positive max-errors GstVideoDecoder ends the stream with an
    /// ERROR once more than that many access units fail to decode, and a receiver behind a
    /// lossy link (complete frames whose references were lost) fails that often; a real-time
    /// receiver drops the undecodable frame and goes on to the next key frame instead. -1 is
    /// GStreamer 1.22's default; set here so as not to depend on a version's default
    /// (`with_max_errors_10_corrupt_access_units_stop_the_decoder_for_good` shows the stop).
    pub fn new() -> Result<Self> {
        Self::with_max_errors(-1)
    }

    fn with_max_errors(max_errors: i32) -> Result<Self> {
        let desc = format!(
            "appsrc name=src is-live=true format=time \
             caps=video/x-h264,stream-format=byte-stream,alignment=au \
             ! avdec_h264 name=dec max-threads=1 max-errors={max_errors} \
             ! videoconvert ! video/x-raw,format=I420 \
             ! appsink name=sink sync=false"
        );
        let (pipeline, src, sink) = pipeline(&desc)?;
        Ok(Decoder {
            pipeline,
            src,
            sink,
            ended: std::sync::atomic::AtomicBool::new(false),
        })
    }

    pub fn push(&self, au: Vec<u8>, pts_ns: u64) -> Result<()> {
        self.src
            .push_buffer(buffer(au, pts_ns))
            .map(|_| ())
            .map_err(|e| anyhow!("pushing an access unit into avdec_h264: {e:?}"))
    }

    /// The next decoded picture, waiting up to `wait`; None if none (yet, or at the end).
    pub fn pull(&self, wait: Duration) -> Option<Picture> {
        let s = self
            .sink
            .try_pull_sample(gst::ClockTime::from_nseconds(wait.as_nanos() as u64))?;
        let b = s.buffer()?;
        let m = b.map_readable().ok()?;
        Some(Picture {
            pts_ns: b.pts().map_or(0, |t| t.nseconds()),
            i420: m.as_slice().to_vec(),
        })
    }

    pub fn end(&self) {
        self.ended.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.src.end_of_stream();
    }

    /// Reads the messages waiting on the pipeline's bus into `log`.
    pub fn poll_bus(&self, log: &mut BusLog) {
        let Some(bus) = self.pipeline.bus() else {
            return;
        };
        while let Some(m) = bus.pop() {
            let text = match m.view() {
                gst::MessageView::Error(e) => {
                    if self.ended.load(std::sync::atomic::Ordering::SeqCst) {
                        log.errors_at_eos += 1;
                        format!("ERROR at end of stream {}: {:?}", e.error(), e.debug())
                    } else {
                        log.errors += 1;
                        format!("ERROR {}: {:?}", e.error(), e.debug())
                    }
                }
                gst::MessageView::Warning(w) => {
                    log.warnings += 1;
                    format!("WARNING {}: {:?}", w.error(), w.debug())
                }
                _ => continue,
            };
            if log.first_messages.len() < BUS_TEXTS {
                // one line each, for summary.json
                log.first_messages
                    .push(text.replace(|c: char| c.is_control(), " "));
            }
        }
    }

    pub fn is_eos(&self) -> bool {
        self.sink.is_eos()
    }
}

impl Drop for Decoder {
    fn drop(&mut self) {
        let _ = self.pipeline.set_state(gst::State::Null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NAL unit types of an Annex-B access unit.
    fn nal_types(au: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        let mut i = 0;
        while i + 3 < au.len() {
            if au[i] == 0 && au[i + 1] == 0 && au[i + 2] == 1 {
                t.push(au[i + 3] & 0x1f);
                i += 3;
            }
            i += 1;
        }
        t
    }

    /// Every IDR (every key_int frames) carries SPS and PPS, so a receiver that missed the
    /// first one can start at the next (checked when `trivial+stream` at d50 decoded nothing:
    /// the headers were not what it lacked; no IDR of that run arrived whole, see
    /// priolab/workloads/roq/README.md).
    #[test]
    fn every_idr_carries_sps_and_pps() {
        gst::init().unwrap();
        let (w, h) = (64u32, 48u32);
        let mut e = Encoder::new(w, h, 25, 300, 10, "veryfast").unwrap();
        for k in 0..25u64 {
            let frame: Vec<u8> = (0..w * h * 3 / 2)
                .map(|i| ((i as u64 * 7 + k * 13) % 251) as u8)
                .collect();
            let t = nal_types(&e.encode(&frame, k * 40_000_000).unwrap());
            if k % 10 == 0 {
                assert!(
                    t.contains(&7) && t.contains(&8) && t.contains(&5),
                    "frame {k}: {t:?}"
                );
            } else {
                assert!(!t.contains(&5) && t.contains(&1), "frame {k}: {t:?}");
            }
        }
    }

    /// A receiver that lost the first key frame: the delta frames before the next IDR cannot
    /// be decoded (no SPS/PPS, no reference); from that IDR on pictures must come out.
    #[test]
    fn decoding_starts_at_the_next_idr_after_a_lost_first_one() {
        gst::init().unwrap();
        let (w, h) = (64u32, 48u32);
        let mut e = Encoder::new(w, h, 25, 300, 50, "veryfast").unwrap();
        let d = Decoder::new().unwrap();
        let mut pictures = Vec::new();
        for k in 0..120u64 {
            let frame: Vec<u8> = (0..w * h * 3 / 2)
                .map(|i| ((i as u64 * 7 + k * 13) % 251) as u8)
                .collect();
            let au = e.encode(&frame, k * 40_000_000).unwrap();
            if k > 0 {
                d.push(au, k * 40_000_000).unwrap();
            }
            while let Some(p) = d.pull(Duration::from_millis(20)) {
                pictures.push(p.pts_ns / 40_000_000);
            }
        }
        d.end();
        while let Some(p) = d.pull(Duration::from_millis(200)) {
            pictures.push(p.pts_ns / 40_000_000);
        }
        assert!(
            pictures.first() == Some(&50) && pictures.iter().any(|&k| k >= 110),
            "{pictures:?}"
        );
    }

    /// Encodes `n` frames of a moving pattern (64 × 48, 25 fps, an IDR at most every 50).
    fn encoded(n: u64) -> Vec<Vec<u8>> {
        let (w, h) = (64u32, 48u32);
        let mut e = Encoder::new(w, h, 25, 300, 50, "veryfast").unwrap();
        (0..n)
            .map(|k| {
                let frame: Vec<u8> = (0..w * h * 3 / 2)
                    .map(|i| ((i as u64 * 7 + k * 13) % 251) as u8)
                    .collect();
                e.encode(&frame, k * 40_000_000).unwrap()
            })
            .collect()
    }

    /// An access unit whose slices keep their NAL headers but whose slice data is garbage:
    /// what a frame built from damaged packets looks like to the decoder.
    fn corrupt(au: &[u8], seed: u64) -> Vec<u8> {
        let mut out = Vec::new();
        for n in roq_core::h264::split_annexb(au) {
            out.extend_from_slice(&[0, 0, 0, 1, n[0]]);
            out.extend((1..n.len()).map(|i| ((i as u64 * 131 + seed * 17) % 253) as u8 | 1));
        }
        out
    }

    /// Pushes frames 0..first_idr_after(30) intact, the delta frames between 30 and the next
    /// IDR corrupted, then the rest intact; returns (frame indices decoded, the next IDR, bus).
    fn decode_with_corrupt_run(max_errors: i32) -> (Vec<u64>, u64, BusLog) {
        gst::init().unwrap();
        let aus = encoded(150);
        let idrs: Vec<u64> = (0..150).filter(|&k| is_idr(&aus[k as usize])).collect();
        let next_idr = *idrs
            .iter()
            .find(|&&k| k > 30)
            .expect("an IDR after frame 30");
        assert!(
            next_idr - 30 > 12,
            "too few corrupt frames to pass max-errors: {idrs:?}"
        );
        let d = Decoder::with_max_errors(max_errors).unwrap();
        let mut decoded = Vec::new();
        let mut bus = BusLog::default();
        for (k, au) in aus.iter().enumerate() {
            let k = k as u64;
            let au = if (30..next_idr).contains(&k) {
                corrupt(au, k)
            } else {
                au.clone()
            };
            let _ = d.push(au, k * 40_000_000); // refused once the pipeline has stopped
            while let Some(p) = d.pull(Duration::from_millis(20)) {
                decoded.push(p.pts_ns / 40_000_000);
            }
            d.poll_bus(&mut bus);
        }
        d.end();
        while let Some(p) = d.pull(Duration::from_millis(200)) {
            decoded.push(p.pts_ns / 40_000_000);
        }
        d.poll_bus(&mut bus);
        (decoded, next_idr, bus)
    }

    /// The receiver's decoder (max-errors=-1) goes on through a run of corrupt access units
    /// and decodes again from the next IDR, with no ERROR on its bus.
    #[test]
    fn decoding_resumes_at_the_next_idr_after_corrupt_access_units() {
        let (decoded, next_idr, bus) = decode_with_corrupt_run(-1);
        assert!(decoded.contains(&29), "{decoded:?}");
        let after: Vec<u64> = decoded.iter().copied().filter(|&k| k >= next_idr).collect();
        assert_eq!(after.first(), Some(&next_idr), "{decoded:?}");
        assert!(after.len() as u64 >= 150 - next_idr - 2, "{decoded:?}");
        assert_eq!(bus.errors, 0, "{:?}", bus.first_messages);
    }

    /// The same input with GstVideoDecoder's max-errors at 10: the decoder posts an ERROR and
    /// decodes nothing after it, IDR or not. This is what max-errors=-1 is for, and what a
    /// receiver that does not read its bus would not notice.
    #[test]
    fn with_max_errors_10_corrupt_access_units_stop_the_decoder_for_good() {
        let (decoded, next_idr, bus) = decode_with_corrupt_run(10);
        assert!(decoded.contains(&29), "{decoded:?}");
        assert!(!decoded.iter().any(|&k| k >= next_idr), "{decoded:?}");
        assert!(bus.errors >= 1, "{:?}", bus.first_messages);
    }

    /// The trivial+stream run's case: only delta frames arrive (no IDR whole), nothing is
    /// decoded, and the one ERROR GstVideoDecoder posts comes at the end of the stream
    /// ("No valid frames decoded"): counted as at the end, not as a decoder that stopped.
    #[test]
    fn only_delta_frames_decode_nothing_and_the_error_comes_at_the_end() {
        gst::init().unwrap();
        let aus = encoded(60);
        let d = Decoder::new().unwrap();
        let mut bus = BusLog::default();
        let mut decoded = 0;
        for (k, au) in aus.iter().enumerate().filter(|(_, au)| !is_idr(au)) {
            d.push(au.clone(), k as u64 * 40_000_000).unwrap();
            decoded += std::iter::from_fn(|| d.pull(Duration::from_millis(5))).count();
            d.poll_bus(&mut bus);
        }
        assert_eq!(bus.errors, 0, "{:?}", bus.first_messages);
        d.end();
        decoded += std::iter::from_fn(|| d.pull(Duration::from_millis(300))).count();
        d.poll_bus(&mut bus);
        assert_eq!(decoded, 0);
        assert_eq!(
            (bus.errors, bus.errors_at_eos),
            (0, 1),
            "{:?}",
            bus.first_messages
        );
    }

    /// The answer to a PLI: a force-key-unit before frame k makes frame k an IDR (with SPS and
    /// PPS), between the periodic ones; the frames after it are delta frames again.
    #[test]
    fn a_forced_key_unit_makes_the_next_frame_an_idr() {
        gst::init().unwrap();
        let (w, h) = (64u32, 48u32);
        let mut e = Encoder::new(w, h, 25, 300, 250, "veryfast").unwrap();
        let mut idrs = Vec::new();
        for k in 0..40u64 {
            // a still picture: x264's scenecut adds no IDR of its own
            let frame: Vec<u8> = (0..w * h * 3 / 2).map(|i| (i % 251) as u8).collect();
            if k == 17 || k == 30 {
                assert!(e.force_key_unit());
            }
            let au = e.encode(&frame, k * 40_000_000).unwrap();
            if is_idr(&au) {
                let t = nal_types(&au);
                assert!(t.contains(&7) && t.contains(&8), "frame {k}: {t:?}");
                idrs.push(k);
            }
        }
        assert_eq!(idrs, [0, 17, 30]);
    }

    #[test]
    fn is_idr_finds_nal_type_5_only() {
        assert!(is_idr(&[
            0, 0, 0, 1, 0x67, 1, 0, 0, 1, 0x68, 2, 0, 0, 1, 0x65, 3
        ]));
        assert!(!is_idr(&[0, 0, 0, 1, 0x09, 0xf0, 0, 0, 1, 0x41, 3, 4]));
        assert!(!is_idr(&[]));
    }
}
