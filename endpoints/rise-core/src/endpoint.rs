//! The endpoint: streamer and receiver in one pure state machine.
//!
//! Time comes in as µs (the shell passes Unix-epoch µs); there is no clock, no I/O and no
//! thread. Tracking samples are generated at `start + k / tracking_hz`, frames encoded at
//! `start + k / fps`; the frame deadline is checked at each frame tick, before encoding. If the
//! shell calls `handle_timeout` late by more than one period, the missed ticks are not
//! replayed: only the latest one produces a sample / frame (the synthetic head still moves
//! through every missed step), and `Counters::late_ticks_skipped` counts the rest.

use crate::config::{Config, FifoDrop, FrameType, Role};
use crate::frames::FrameSizer;
use crate::freeze::FreezeDetector;
use crate::receiver::Receiver;
use crate::sender::{KeyCause, Seq, Unacked, VideoSender};
use crate::tracking::{Orientation, Tracker};
use crate::wire::{self, Ack, DecodeError, Message, Tracking, VideoHeader, VIDEO_HEADER_BYTES};
use priochan::{ChannelId, Datagram, Ingress, Overflow, Scheduler};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// The three kinds of traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Tracking,
    Video,
    Ack,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Tracking, Kind::Video, Kind::Ack];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Tracking => "tracking",
            Kind::Video => "video",
            Kind::Ack => "ack",
        }
    }

    fn index(self) -> usize {
        match self {
            Kind::Tracking => 0,
            Kind::Video => 1,
            Kind::Ack => 2,
        }
    }

    /// Channel priority with prioritisation on (larger = more important).
    pub fn priority(self) -> u8 {
        match self {
            Kind::Tracking => 3,
            Kind::Video => 2,
            Kind::Ack => 1,
        }
    }
}

/// A datagram for the transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    pub bytes: Vec<u8>,
    pub kind: Kind,
}

/// Per-kind channel counters (cumulative). With prioritisation off all kinds share one FIFO
/// but are still counted by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelCounters {
    /// Accepted by ingress control (including retransmissions).
    pub enqueued: u64,
    /// Handed to the transport by `poll_transmit`.
    pub sent: u64,
    /// Refused by ingress control (buffer full, nothing of lower priority to evict).
    pub dropped_ingress: u64,
    /// Evicted from the buffer to make room for higher-priority data.
    pub evicted: u64,
    /// Retransmissions handed to the transport (video only).
    pub retransmitted: u64,
    /// Bytes handed to the transport.
    pub bytes_sent: u64,
    /// Removed from the buffer by the endpoint itself: video dropped at the frame deadline,
    /// stale copies (acked while queued), datagrams larger than a shrunken maximum size.
    pub purged: u64,
}

/// Endpoint-wide counters (cumulative).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub frames_encoded: u64,
    pub key_frames: u64,
    pub frames_displayed: u64,
    /// Frames the decoder passed over when skipping ahead to a key frame.
    pub frames_skipped: u64,
    /// Video datagrams handed to the transport, retransmissions included.
    pub video_datagrams_sent: u64,
    pub video_datagrams_retransmitted: u64,
    pub video_datagrams_received: u64,
    /// Video datagrams received twice while their frame was still being assembled.
    pub duplicate_video_datagrams: u64,
    /// Video datagrams of frames already decoded or skipped.
    pub late_video_datagrams: u64,
    pub datagrams_malformed: u64,
    pub freezes: u64,
    pub freeze_duration_us: u64,
    /// Frame deadline expirations (each drops pending video and forces a key frame).
    pub deadline_expirations: u64,
    /// Frames still in processing (see `Config::processing_delay_us`) when the deadline
    /// expired: dropped before entering the channels (their references were purged).
    pub frames_dropped_in_processing: u64,
    pub tracking_sent: u64,
    pub tracking_received: u64,
    pub acks_sent: u64,
    pub acks_received: u64,
    pub late_ticks_skipped: u64,
}

/// What happened, for the logs (see endpoints/README.md).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    FrameSent {
        frame_id: u32,
        frame_type: FrameType,
        size_bytes: u32,
        frag_cnt: u16,
        encode_time_us: u64,
        /// The peer's tracking sample the frame was rendered from, −1 if none yet.
        tracking_sample_id: i64,
        /// Why it is a key frame (None for a delta frame).
        key_cause: Option<KeyCause>,
    },
    FrameDisplayed {
        frame_id: u32,
        frame_type: FrameType,
        display_time_us: u64,
        /// This endpoint's own sample the peer rendered the frame from, −1 if none.
        tracking_sample_id: i64,
        /// Generation time of that sample on this endpoint's clock (None if unknown).
        tracking_gen_time_us: Option<u64>,
        /// display − generation, ms (None if the sample is unknown).
        mtp_ms: Option<f64>,
        /// This endpoint's orientation at that sample (None if unknown).
        sample_orientation: Option<Orientation>,
        /// This endpoint's orientation at its latest sample, i.e. at display time up to one
        /// tracking period (None before the first sample).
        display_orientation: Option<Orientation>,
    },
    TrackingSent {
        sample_id: u32,
        gen_time_us: u64,
        yaw_rad: f64,
        pitch_rad: f64,
        roll_rad: f64,
    },
    TrackingReceived {
        sample_id: u32,
        recv_time_us: u64,
        /// On the peer's clock.
        gen_time_us: u64,
    },
    Malformed {
        recv_time_us: u64,
        len_bytes: usize,
        error: DecodeError,
    },
}

/// What sits in the priority channels.
#[derive(Debug)]
struct Packet {
    kind: Kind,
    bytes: Vec<u8>,
    seq: Option<Seq>,
    retx: bool,
}

impl Datagram for Packet {
    fn size(&self) -> usize {
        self.bytes.len()
    }
}

/// A frame rendered and encoded, waiting out the processing delay before its fragments enter
/// the channels.
#[derive(Debug)]
struct Processing {
    ready_us: u64,
    frame_id: u32,
    frame_type: FrameType,
    size: usize,
    frag_cnt: u16,
    payload_max: usize,
    sample: Option<u32>,
}

/// How many of our own tracking samples are remembered for the MTP lookup (≈ 2 min at 60 Hz).
const SAMPLE_HISTORY: usize = 8192;

/// Absolute time of tick `k` of a `hz` clock started at `start_us`.
fn tick_time(start_us: u64, k: u64, hz: u32) -> u64 {
    let off = (k as u128 * 1_000_000u128) / hz.max(1) as u128;
    start_us.saturating_add(off.min(u64::MAX as u128) as u64)
}

/// Index of the last tick at or before `now_us`.
fn last_tick(start_us: u64, now_us: u64, hz: u32) -> u64 {
    let el = now_us.saturating_sub(start_us) as u128;
    let k = el * hz.max(1) as u128 / 1_000_000u128;
    // tick_time rounds down, so k may be one short; step forward while still due
    let mut k = k.min(u64::MAX as u128) as u64;
    while tick_time(start_us, k + 1, hz) <= now_us {
        k += 1;
    }
    k
}

pub struct Endpoint {
    cfg: Config,
    rng: ChaCha8Rng,
    start_us: u64,
    last_now_us: u64,
    tracking_tick: u64,
    frame_tick: u64,
    sched: Scheduler<Packet>,
    channels: [ChannelId; 3],
    sizer: FrameSizer,
    tracker: Tracker,
    sender: VideoSender,
    receiver: Receiver,
    freeze: FreezeDetector,
    /// (sample id, generation time, orientation) of our own recent samples, ids consecutive.
    own_samples: VecDeque<(u32, u64, Orientation)>,
    next_sample_id: u32,
    peer_latest_sample: Option<u32>,
    events: VecDeque<Event>,
    stats: [ChannelCounters; 3],
    counters: Counters,
    max_datagram_bytes: usize,
    processing: VecDeque<Processing>,
}

impl Endpoint {
    /// A new endpoint started at `now_us`. Out-of-range configuration values are clamped
    /// (call [`Config::validate`] first to reject them instead).
    pub fn new(cfg: Config, now_us: u64) -> Self {
        let cfg = cfg.clamped();
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let mut sched = Scheduler::new(cfg.buffer_bytes);
        let channels = if cfg.prio {
            Kind::ALL.map(|k| sched.add_channel(k.priority()))
        } else {
            let overflow = match cfg.fifo_drop {
                FifoDrop::Head => Overflow::HeadDrop,
                FifoDrop::Tail => Overflow::TailDrop,
            };
            let one = sched.add_channel_with(1, overflow);
            [one; 3]
        };
        let tracker = Tracker::new(&cfg.tracking, cfg.tracking_hz, &mut rng);
        Endpoint {
            sizer: FrameSizer::new(&cfg),
            max_datagram_bytes: cfg.max_datagram_bytes,
            rng,
            start_us: now_us,
            last_now_us: now_us,
            tracking_tick: 0,
            frame_tick: 0,
            sched,
            channels,
            tracker,
            sender: VideoSender::new(),
            receiver: Receiver::default(),
            freeze: FreezeDetector::default(),
            own_samples: VecDeque::new(),
            next_sample_id: 0,
            peer_latest_sample: None,
            events: VecDeque::new(),
            stats: [ChannelCounters::default(); 3],
            counters: Counters::default(),
            processing: VecDeque::new(),
            cfg,
        }
    }

    pub fn role(&self) -> Role {
        self.cfg.role
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Absolute µs of the next `handle_timeout`.
    pub fn poll_timeout(&self) -> u64 {
        let ticks = tick_time(self.start_us, self.tracking_tick, self.cfg.tracking_hz)
            .min(tick_time(self.start_us, self.frame_tick, self.cfg.fps));
        self.processing
            .front()
            .map_or(ticks, |f| ticks.min(f.ready_us))
    }

    fn clock(&mut self, now_us: u64) -> u64 {
        self.last_now_us = self.last_now_us.max(now_us);
        self.last_now_us
    }

    /// Tracking ticks, frame ticks (deadline check, then encode).
    pub fn handle_timeout(&mut self, now_us: u64) {
        let now = self.clock(now_us);
        self.release_processed(now);
        let hz = self.cfg.tracking_hz;
        if tick_time(self.start_us, self.tracking_tick, hz) <= now {
            let last = last_tick(self.start_us, now, hz);
            let dt_s = 1.0 / hz as f64;
            for k in self.tracking_tick..=last {
                if k > 0 {
                    self.tracker.step(dt_s, &mut self.rng);
                }
            }
            self.counters.late_ticks_skipped += last - self.tracking_tick;
            self.tracking_tick = last + 1;
            self.send_tracking(now);
        }
        let fps = self.cfg.fps;
        if tick_time(self.start_us, self.frame_tick, fps) <= now {
            let last = last_tick(self.start_us, now, fps);
            self.counters.late_ticks_skipped += last - self.frame_tick;
            self.frame_tick = last + 1;
            if self.sender.deadline_expired(now, self.cfg.deadline_us) {
                let cause = self
                    .sender
                    .expiry_cause(self.cfg.max_retx)
                    .unwrap_or(KeyCause::DeadlineUnacked);
                self.expire_deadline(cause);
            }
            self.encode_frame(now);
            self.release_processed(now);
        }
    }

    /// Frames whose processing delay is over enter the channels, oldest first.
    fn release_processed(&mut self, now: u64) {
        while self.processing.front().is_some_and(|f| f.ready_us <= now) {
            let f = self.processing.pop_front().expect("checked non-empty");
            self.enqueue_frame(&f, now);
        }
    }

    fn send_tracking(&mut self, now: u64) {
        let elapsed_s = now.saturating_sub(self.start_us) as f64 / 1e6;
        let o = self.tracker.orientation(elapsed_s);
        let id = self.next_sample_id;
        self.next_sample_id = self.next_sample_id.wrapping_add(1);
        if self
            .own_samples
            .back()
            .is_some_and(|s| s.0.wrapping_add(1) != id)
        {
            self.own_samples.clear();
        }
        self.own_samples.push_back((id, now, o));
        while self.own_samples.len() > SAMPLE_HISTORY {
            self.own_samples.pop_front();
        }
        let t = Tracking {
            sample_id: id,
            gen_time_us: now,
            yaw_rad: o.yaw_rad,
            pitch_rad: o.pitch_rad,
            roll_rad: o.roll_rad,
        };
        self.counters.tracking_sent += 1;
        self.events.push_back(Event::TrackingSent {
            sample_id: id,
            gen_time_us: now,
            yaw_rad: o.yaw_rad,
            pitch_rad: o.pitch_rad,
            roll_rad: o.roll_rad,
        });
        self.enqueue(
            Packet {
                kind: Kind::Tracking,
                bytes: wire::encode_tracking(&t),
                seq: None,
                retx: false,
            },
            false,
        );
    }

    fn expire_deadline(&mut self, cause: KeyCause) {
        self.counters.deadline_expirations += 1;
        self.sender.purge_and_force_key(cause);
        let ch = self.channels[Kind::Video.index()];
        let removed = self.sched.retain(ch, |p| p.kind != Kind::Video);
        self.stats[Kind::Video.index()].purged += removed as u64;
        self.counters.frames_dropped_in_processing += self.processing.len() as u64;
        self.processing.clear();
    }

    fn payload_max(&self) -> usize {
        self.max_datagram_bytes
            .saturating_sub(VIDEO_HEADER_BYTES)
            .max(1)
    }

    fn encode_frame(&mut self, now: u64) {
        let (frame_id, forced) = self.sender.next_frame();
        let (frame_type, size) = self.sizer.next_frame(forced.is_some(), &mut self.rng);
        let key_cause = match frame_type {
            FrameType::Key => Some(forced.unwrap_or(KeyCause::Trace)),
            FrameType::Delta => None,
        };
        let payload_max = self.payload_max();
        let max_size = payload_max.saturating_mul(u16::MAX as usize);
        let size = (size as usize).min(max_size).max(1);
        let frag_cnt = size.div_ceil(payload_max) as u16;
        let sample = self.peer_latest_sample;
        self.counters.frames_encoded += 1;
        if frame_type == FrameType::Key {
            self.counters.key_frames += 1;
        }
        self.events.push_back(Event::FrameSent {
            frame_id,
            frame_type,
            size_bytes: size as u32,
            frag_cnt,
            encode_time_us: now,
            tracking_sample_id: sample.map_or(-1, i64::from),
            key_cause,
        });
        let f = Processing {
            ready_us: now.saturating_add(self.cfg.processing_delay_us),
            frame_id,
            frame_type,
            size,
            frag_cnt,
            payload_max,
            sample,
        };
        self.processing.push_back(f);
    }

    /// Fragments a processed frame into its channel.
    fn enqueue_frame(&mut self, f: &Processing, now: u64) {
        let (frame_id, frame_type, sample) = (f.frame_id, f.frame_type, f.sample);
        let (size, frag_cnt, payload_max) = (f.size, f.frag_cnt, f.payload_max);
        for frag_id in 0..frag_cnt {
            let payload_len = if frag_id + 1 == frag_cnt {
                size - payload_max * (frag_cnt as usize - 1)
            } else {
                payload_max
            };
            let header = VideoHeader {
                frame_id,
                frame_type,
                frag_id,
                frag_cnt,
                send_ts_us: 0,
                tracking_sample_id: sample,
            };
            self.sender.register(
                (frame_id, frag_id),
                Unacked {
                    frame_type,
                    frag_cnt,
                    tracking_sample_id: sample,
                    payload_len,
                    enqueued_us: now,
                    first_send_us: None,
                    last_send_us: now,
                    retx: 0,
                    queued: true,
                },
            );
            self.enqueue(
                Packet {
                    kind: Kind::Video,
                    bytes: wire::encode_video(&header, payload_len),
                    seq: Some((frame_id, frag_id)),
                    retx: false,
                },
                false,
            );
        }
    }

    /// Ingress control and bookkeeping of what it did.
    fn enqueue(&mut self, p: Packet, front: bool) {
        let kind = p.kind;
        let ch = self.channels[kind.index()];
        let res = if front {
            self.sched.enqueue_front(ch, p)
        } else {
            self.sched.enqueue(ch, p)
        };
        match res {
            Ingress::Enqueued => self.stats[kind.index()].enqueued += 1,
            Ingress::Evicted(list) => {
                self.stats[kind.index()].enqueued += 1;
                for (_, e) in list {
                    self.stats[e.kind.index()].evicted += 1;
                    if let Some(seq) = e.seq {
                        self.sender.on_unqueued(&seq);
                    }
                }
            }
            Ingress::Dropped(d) => {
                self.stats[kind.index()].dropped_ingress += 1;
                if let Some(seq) = d.seq {
                    self.sender.on_unqueued(&seq);
                }
            }
        }
    }

    /// A datagram from the peer.
    pub fn handle_datagram(&mut self, now_us: u64, data: &[u8]) {
        let now = self.clock(now_us);
        match wire::decode(data) {
            Err(e) => self.malformed(now, data.len(), e),
            Ok(Message::Tracking(t)) => {
                self.counters.tracking_received += 1;
                if self.peer_latest_sample.is_none_or(|s| t.sample_id > s) {
                    self.peer_latest_sample = Some(t.sample_id);
                }
                self.events.push_back(Event::TrackingReceived {
                    sample_id: t.sample_id,
                    recv_time_us: now,
                    gen_time_us: t.gen_time_us,
                });
            }
            Ok(Message::Video { header, .. }) => match self.receiver.on_fragment(&header) {
                Err(e) => self.malformed(now, data.len(), e),
                Ok(out) => {
                    self.counters.video_datagrams_received += 1;
                    if out.duplicate {
                        self.counters.duplicate_video_datagrams += 1;
                    }
                    if out.late {
                        self.counters.late_video_datagrams += 1;
                    }
                    self.counters.frames_skipped += out.skipped_frames;
                    self.counters.acks_sent += 1;
                    let ack = Ack {
                        frame_id: header.frame_id,
                        frag_id: header.frag_id,
                        send_ts_us: header.send_ts_us,
                    };
                    self.enqueue(
                        Packet {
                            kind: Kind::Ack,
                            bytes: wire::encode_ack(&ack),
                            seq: None,
                            retx: false,
                        },
                        false,
                    );
                    for d in out.decoded {
                        self.display(now, d);
                    }
                }
            },
            Ok(Message::Ack(a)) => {
                self.counters.acks_received += 1;
                let retx = self.sender.on_ack(now, &a, self.cfg.max_retx);
                // push the newest first so that the oldest ends up at the head
                for seq in retx.into_iter().rev() {
                    let Some(e) = self.sender.get(&seq) else {
                        continue;
                    };
                    let header = VideoHeader {
                        frame_id: seq.0,
                        frame_type: e.frame_type,
                        frag_id: seq.1,
                        frag_cnt: e.frag_cnt,
                        send_ts_us: 0,
                        tracking_sample_id: e.tracking_sample_id,
                    };
                    let bytes = wire::encode_video(&header, e.payload_len);
                    self.enqueue(
                        Packet {
                            kind: Kind::Video,
                            bytes,
                            seq: Some(seq),
                            retx: true,
                        },
                        true,
                    );
                }
            }
        }
    }

    fn malformed(&mut self, now: u64, len_bytes: usize, error: DecodeError) {
        self.counters.datagrams_malformed += 1;
        self.events.push_back(Event::Malformed {
            recv_time_us: now,
            len_bytes,
            error,
        });
    }

    fn own_sample(&self, id: u32) -> Option<(u64, Orientation)> {
        let first = self.own_samples.front()?.0;
        let idx = id.checked_sub(first)? as usize;
        self.own_samples.get(idx).map(|s| (s.1, s.2))
    }

    fn display(&mut self, now: u64, d: crate::receiver::Decoded) {
        self.counters.frames_displayed += 1;
        if let Some(interval) = self.freeze.on_display(now) {
            self.counters.freezes += 1;
            self.counters.freeze_duration_us += interval;
        }
        let sample = d.tracking_sample_id.and_then(|id| self.own_sample(id));
        self.events.push_back(Event::FrameDisplayed {
            frame_id: d.frame_id,
            frame_type: d.frame_type,
            display_time_us: now,
            tracking_sample_id: d.tracking_sample_id.map_or(-1, i64::from),
            tracking_gen_time_us: sample.map(|s| s.0),
            mtp_ms: sample.map(|s| now.saturating_sub(s.0) as f64 / 1000.0),
            sample_orientation: sample.map(|s| s.1),
            display_orientation: self.own_samples.back().map(|s| s.2),
        });
    }

    /// The transport's largest datagram (quinn's `max_datagram_size()`). Later frames are
    /// fragmented to it; queued datagrams that no longer fit are purged.
    pub fn set_max_datagram_size(&mut self, bytes: usize) {
        let bytes = bytes.max(crate::config::MIN_DATAGRAM_BYTES);
        let shrunk = bytes < self.max_datagram_bytes;
        self.max_datagram_bytes = bytes;
        if shrunk {
            let mut removed: Vec<(Kind, Option<Seq>)> = Vec::new();
            let mut seen = Vec::new();
            for ch in self.channels {
                if seen.contains(&ch) {
                    continue;
                }
                seen.push(ch);
                self.sched.retain(ch, |p| {
                    let keep = p.bytes.len() <= bytes;
                    if !keep {
                        removed.push((p.kind, p.seq));
                    }
                    keep
                });
            }
            for (kind, seq) in removed {
                self.stats[kind.index()].purged += 1;
                if let Some(seq) = seq {
                    self.sender.on_unqueued(&seq);
                }
            }
        }
    }

    pub fn max_datagram_size(&self) -> usize {
        self.max_datagram_bytes
    }

    /// Egress: the next datagram for the transport, if one fits into `space_bytes`.
    pub fn poll_transmit(&mut self, now_us: u64, space_bytes: usize) -> Option<Transmit> {
        let now = self.clock(now_us);
        loop {
            // a head that can never fit would block its channel forever
            if self.sched.peek_size()? > self.max_datagram_bytes {
                if let Some((_, p)) = self.sched.dequeue(usize::MAX) {
                    self.stats[p.kind.index()].purged += 1;
                    if let Some(seq) = p.seq {
                        self.sender.on_unqueued(&seq);
                    }
                }
                continue;
            }
            let (_, mut p) = self.sched.dequeue(space_bytes)?;
            if let Some(seq) = p.seq {
                if !self.sender.wants_send(&seq) {
                    // acked or purged while it waited
                    self.stats[p.kind.index()].purged += 1;
                    continue;
                }
                wire::stamp_video_send_ts(&mut p.bytes, now);
                self.sender.on_sent(&seq, now);
                self.counters.video_datagrams_sent += 1;
                if p.retx {
                    self.counters.video_datagrams_retransmitted += 1;
                }
            }
            let st = &mut self.stats[p.kind.index()];
            st.sent += 1;
            st.bytes_sent += p.bytes.len() as u64;
            if p.retx {
                st.retransmitted += 1;
            }
            return Some(Transmit {
                bytes: p.bytes,
                kind: p.kind,
            });
        }
    }

    /// Next log event, oldest first. The shell should drain these regularly.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Per-kind channel counters, in the order tracking, video, ACK.
    pub fn channel_stats(&self) -> Vec<(Kind, ChannelCounters)> {
        Kind::ALL
            .iter()
            .map(|&k| (k, self.stats[k.index()]))
            .collect()
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Smoothed RTT from ACK echoes, µs (None before the first ACK).
    pub fn rtt_us(&self) -> Option<u64> {
        self.sender.srtt_us().map(|r| r.round() as u64)
    }

    /// Bytes waiting in the priority channels (the virtual sender buffer occupancy).
    pub fn pending_bytes(&self) -> usize {
        self.sched.len_bytes()
    }

    /// Whether anything waits in the priority channels.
    pub fn has_pending(&self) -> bool {
        !self.sched.is_empty()
    }

    /// Size of the datagram `poll_transmit` would hand out next, if any.
    pub fn peek_transmit_size(&self) -> Option<usize> {
        self.sched.peek_size()
    }

    /// Video datagrams not yet acknowledged (queued, in flight or lost).
    pub fn unacked_video(&self) -> usize {
        self.sender.unacked_len()
    }

    /// The next frame id the video decoder waits for.
    pub fn decoder_next_frame(&self) -> u32 {
        self.receiver.next_frame()
    }
}
