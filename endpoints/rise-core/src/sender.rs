//! Video sender bookkeeping: unacked datagrams, the RTT estimate, retransmission decisions and
//! the frame deadline (ringmaster semantics, see [RISE setup]).
//!
//! Every video datagram is registered when it is *enqueued* (not only when sent), so that a
//! datagram dropped or evicted by the priority channels is recovered like one lost on the path:
//! an ACK of a later datagram retransmits it, and the deadline eventually forces a key frame.
//! For the deadline, a datagram's age counts from its first send, or from its enqueue time if
//! it was never sent.

use crate::config::FrameType;
use crate::wire::Ack;
use std::collections::BTreeMap;

/// EWMA gain of the RTT estimate.
pub const RTT_ALPHA: f64 = 0.2;

/// Sequence number of a video datagram: (frame_id, frag_id), ordered by age.
pub type Seq = (u32, u16);

/// Why a frame was encoded as a key frame (`frames_sent.csv` `key_cause`). Every key frame
/// the sender asks for itself follows a frame-deadline expiry (ringmaster: no periodic key
/// frames, no loss-triggered request from the receiver); the expiry is split by what held
/// the oldest unacked datagram, the one that expired, at that moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyCause {
    /// The stream's first frame.
    Start,
    /// Deadline expiry; a copy of the datagram was still waiting in the sender buffer B
    /// (never sent, or its retransmission not yet sent): delay at the sender.
    DeadlineQueued,
    /// Deadline expiry; the datagram never left the sender (dropped at ingress or evicted
    /// from B) and no copy was waiting: loss inside the sender buffer.
    DeadlineDropped,
    /// Deadline expiry; every allowed copy was sent (retransmission budget spent) and none
    /// was acknowledged: loss of the datagram or of all its ACKs.
    DeadlineLost,
    /// Deadline expiry; sent, retransmissions left, no copy waiting: no ACK of a later
    /// datagram came back to trigger the retransmission in time (ACKs lost or held back).
    DeadlineUnacked,
    /// A key frame of the replayed frame-size trace.
    Trace,
}

impl KeyCause {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyCause::Start => "start",
            KeyCause::DeadlineQueued => "deadline-queued",
            KeyCause::DeadlineDropped => "deadline-dropped",
            KeyCause::DeadlineLost => "deadline-lost",
            KeyCause::DeadlineUnacked => "deadline-unacked",
            KeyCause::Trace => "trace",
        }
    }

    /// The cause of a deadline expiry whose oldest unacked datagram is `e`.
    pub fn of_expired(e: &Unacked, max_retx: u32) -> KeyCause {
        if e.queued {
            KeyCause::DeadlineQueued
        } else if e.first_send_us.is_none() {
            KeyCause::DeadlineDropped
        } else if e.retx >= max_retx {
            KeyCause::DeadlineLost
        } else {
            KeyCause::DeadlineUnacked
        }
    }
}

#[derive(Debug, Clone)]
pub struct Unacked {
    pub frame_type: FrameType,
    pub frag_cnt: u16,
    pub tracking_sample_id: Option<u32>,
    pub payload_len: usize,
    pub enqueued_us: u64,
    pub first_send_us: Option<u64>,
    /// Last send, or last (re)enqueue if that is later.
    pub last_send_us: u64,
    pub retx: u32,
    /// A copy waits in the priority channels.
    pub queued: bool,
}

#[derive(Debug, Default)]
pub struct VideoSender {
    unacked: BTreeMap<Seq, Unacked>,
    srtt_us: Option<f64>,
    next_frame_id: u32,
    /// The next frame must be a key frame, for this reason.
    force_key: Option<KeyCause>,
}

impl VideoSender {
    pub fn new() -> Self {
        VideoSender {
            force_key: Some(KeyCause::Start),
            ..Default::default()
        }
    }

    /// Allocate the next frame id; returns it with why it must be a key frame (None: it
    /// need not be).
    pub fn next_frame(&mut self) -> (u32, Option<KeyCause>) {
        let id = self.next_frame_id;
        self.next_frame_id = self.next_frame_id.wrapping_add(1);
        (id, std::mem::take(&mut self.force_key))
    }

    pub fn register(&mut self, seq: Seq, entry: Unacked) {
        self.unacked.insert(seq, entry);
    }

    pub fn get(&self, seq: &Seq) -> Option<&Unacked> {
        self.unacked.get(seq)
    }

    /// A queued copy should be sent: true if the datagram still needs it.
    pub fn wants_send(&self, seq: &Seq) -> bool {
        self.unacked.get(seq).is_some_and(|e| e.queued)
    }

    pub fn on_sent(&mut self, seq: &Seq, now_us: u64) {
        if let Some(e) = self.unacked.get_mut(seq) {
            e.first_send_us.get_or_insert(now_us);
            e.last_send_us = now_us;
            e.queued = false;
        }
    }

    /// The queued copy was dropped or evicted before being sent.
    pub fn on_unqueued(&mut self, seq: &Seq) {
        if let Some(e) = self.unacked.get_mut(seq) {
            e.queued = false;
        }
    }

    /// Process an ACK: update the RTT and return the datagrams to retransmit (oldest first),
    /// already marked as queued with their retransmission counted.
    pub fn on_ack(&mut self, now_us: u64, ack: &Ack, max_retx: u32) -> Vec<Seq> {
        if ack.send_ts_us <= now_us {
            let sample = (now_us - ack.send_ts_us) as f64;
            self.srtt_us = Some(match self.srtt_us {
                None => sample,
                Some(s) => (1.0 - RTT_ALPHA) * s + RTT_ALPHA * sample,
            });
        }
        let seq = (ack.frame_id, ack.frag_id);
        self.unacked.remove(&seq);
        let rtt = self.srtt_us.unwrap_or(0.0);
        let mut out = Vec::new();
        for (s, e) in self.unacked.range_mut(..seq) {
            if e.queued || e.retx >= max_retx {
                continue;
            }
            if e.retx == 0 || (now_us.saturating_sub(e.last_send_us) as f64) > rtt {
                e.retx += 1;
                e.last_send_us = now_us;
                e.queued = true;
                out.push(*s);
            }
        }
        out
    }

    /// True if the oldest unacked datagram is older than the deadline.
    pub fn deadline_expired(&self, now_us: u64, deadline_us: u64) -> bool {
        self.unacked.values().next().is_some_and(|e| {
            now_us.saturating_sub(e.first_send_us.unwrap_or(e.enqueued_us)) > deadline_us
        })
    }

    /// Why the deadline expired: what held the oldest unacked datagram (None if none).
    pub fn expiry_cause(&self, max_retx: u32) -> Option<KeyCause> {
        self.unacked
            .values()
            .next()
            .map(|e| KeyCause::of_expired(e, max_retx))
    }

    /// Forget every unacked datagram and make the next frame a key frame for `cause`.
    pub fn purge_and_force_key(&mut self, cause: KeyCause) -> usize {
        let n = self.unacked.len();
        self.unacked.clear();
        self.force_key = Some(cause);
        n
    }

    pub fn srtt_us(&self) -> Option<f64> {
        self.srtt_us
    }

    pub fn unacked_len(&self) -> usize {
        self.unacked.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(t: u64) -> Unacked {
        Unacked {
            frame_type: FrameType::Delta,
            frag_cnt: 3,
            tracking_sample_id: None,
            payload_len: 100,
            enqueued_us: t,
            first_send_us: None,
            last_send_us: t,
            retx: 0,
            queued: true,
        }
    }

    fn ack(frame_id: u32, frag_id: u16, send_ts_us: u64) -> Ack {
        Ack {
            frame_id,
            frag_id,
            send_ts_us,
        }
    }

    #[test]
    fn rtt_ewma() {
        let mut s = VideoSender::new();
        s.on_ack(10_000, &ack(0, 0, 0), 3);
        assert_eq!(s.srtt_us(), Some(10_000.0));
        s.on_ack(30_000, &ack(0, 1, 10_000), 3);
        assert_eq!(s.srtt_us(), Some(0.8 * 10_000.0 + 0.2 * 20_000.0));
    }

    #[test]
    fn retransmits_older_unacked_once_then_after_an_rtt() {
        let mut s = VideoSender::new();
        for f in 0..3 {
            s.register((0, f), entry(0));
            s.on_sent(&(0, f), 0);
        }
        // ack of frag 2 at 10 ms: frags 0 and 1 are retransmitted (never retransmitted before)
        assert_eq!(s.on_ack(10_000, &ack(0, 2, 0), 3), vec![(0, 0), (0, 1)]);
        // while queued: nothing
        assert!(s.on_ack(10_500, &ack(0, 2, 0), 3).is_empty());
        s.on_sent(&(0, 0), 11_000);
        s.on_sent(&(0, 1), 11_000);
        // a later ack within one RTT of the retransmission: nothing
        s.register((1, 0), entry(11_000));
        s.on_sent(&(1, 0), 11_000);
        assert!(s.on_ack(15_000, &ack(1, 0, 11_000), 3).is_empty());
        // after more than an RTT (~10 ms): again
        s.register((1, 1), entry(11_000));
        s.on_sent(&(1, 1), 11_000);
        assert_eq!(
            s.on_ack(30_000, &ack(1, 1, 11_000), 3),
            vec![(0, 0), (0, 1)]
        );
        assert_eq!(s.get(&(0, 0)).unwrap().retx, 2);
    }

    #[test]
    fn retransmissions_are_capped() {
        let mut s = VideoSender::new();
        s.register((0, 0), entry(0));
        s.on_sent(&(0, 0), 0);
        let mut n = 0;
        for i in 1..20u32 {
            let t = i as u64 * 1_000_000;
            s.register((i, 0), entry(t));
            s.on_sent(&(i, 0), t);
            n += s
                .on_ack(t + 1000, &ack(i, 0, t), 2)
                .iter()
                .filter(|&&q| q == (0, 0))
                .count();
            s.on_sent(&(0, 0), t + 1000);
        }
        assert_eq!(n, 2);
    }

    #[test]
    fn deadline_counts_from_first_send() {
        let mut s = VideoSender::new();
        assert_eq!(s.next_frame(), (0, Some(KeyCause::Start)));
        assert_eq!(s.next_frame(), (1, None));
        s.register((1, 0), entry(0));
        assert!(!s.deadline_expired(1_000_000, 1_000_000));
        assert!(s.deadline_expired(1_000_001, 1_000_000));
        s.on_sent(&(1, 0), 500_000);
        assert!(!s.deadline_expired(1_400_000, 1_000_000));
        assert!(s.deadline_expired(1_500_001, 1_000_000));
        assert_eq!(s.purge_and_force_key(KeyCause::DeadlineUnacked), 1);
        assert_eq!(s.next_frame(), (2, Some(KeyCause::DeadlineUnacked)));
    }

    #[test]
    fn expiry_cause_names_what_held_the_oldest_datagram() {
        let mut s = VideoSender::new();
        assert_eq!(s.expiry_cause(3), None);
        // waiting in B, never sent
        s.register((0, 0), entry(0));
        assert_eq!(s.expiry_cause(3), Some(KeyCause::DeadlineQueued));
        // evicted from B before any send: nothing waits, nothing was sent
        s.on_unqueued(&(0, 0));
        assert_eq!(s.expiry_cause(3), Some(KeyCause::DeadlineDropped));
        // sent once, no ACK of a later datagram since: retransmissions left
        s.on_sent(&(0, 0), 10);
        assert_eq!(s.expiry_cause(3), Some(KeyCause::DeadlineUnacked));
        // a later datagram's ACK queues a retransmission: waiting in B again
        s.register((0, 1), entry(20));
        s.on_sent(&(0, 1), 20);
        assert_eq!(s.on_ack(30_000, &ack(0, 1, 20), 1), vec![(0, 0)]);
        assert_eq!(s.expiry_cause(1), Some(KeyCause::DeadlineQueued));
        // the retransmission sent: with max_retx 1 the budget is spent
        s.on_sent(&(0, 0), 31_000);
        assert_eq!(s.expiry_cause(1), Some(KeyCause::DeadlineLost));
        assert_eq!(s.expiry_cause(3), Some(KeyCause::DeadlineUnacked));
    }
}
