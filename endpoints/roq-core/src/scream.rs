//! SCReAM (RFC 8298), written from the RFC: a self-clocked congestion window on the RTP
//! packets (network congestion control, §4.1.2), the RTP queue that packets wait in until the
//! window and the pacer let them out (§4.1.1), and the media rate controller that turns the
//! window's state into the encoder's target bitrate (§4.1.3). Pure: time is `now_us`
//! (µs, any origin); feedback is a list of (extended RTP sequence number, arrival time in the
//! receiver's clock or None); the one-way delay's clock offset cancels in the base delay.
//!
//! Deviations from the RFC (documented in endpoints/README.md, "roq"):
//! - the queue-delay trend is the smoothed queue-delay fraction clamped to [0, 1]; the RFC's
//!   autocorrelation weighting of its 20-sample history is not applied;
//! - the queue-delay target is fixed at QDELAY_TARGET_LO (no raise towards QDELAY_TARGET_HI
//!   against competing loss-based flows);
//! - outside fast increase, §4.1.3's delta_rate_t is read as SCReAM's C++ code computes it,
//!   the measured rate less the guard and the RTP queue *minus the target* (the RFC's
//!   pseudocode omits the last term, and without it the target grows by the full ramp every
//!   interval whatever the delay: in virtual time it then sat above the 1 Mbit/s link and
//!   failed to back off); a positive change is applied as the RFC limits it (× scale_t, at
//!   most ramp_up_speed_t × interval); a negative one only while the queue-delay trend is at
//!   or above QDELAY_TREND_LO (assumption: the C++ code's every-interval fall to the measured
//!   rate widened the target's swing in virtual time, 5-95 % 0.27-0.86 Mbit/s vs 0.63-0.85
//!   with key frames of 10 delta frames);
//! - the RTP queue's delay is the age of its oldest packet (the RFC divides its size by the
//!   current rate), and the pacer runs at PACKET_PACING_HEADROOM × target (SCReAM's C++
//!   implementation; the RFC paces at cwnd / s_rtt);
//! - `rtp_rate_median` in the media-rate limit is the last interval's media rate.
//!
//! As the RFC (§4.1.3): fast increase adds `min(RAMP_UP_SPEED, target / 2) × interval ×
//! scale_t`, scale_t = ((target − target_bitrate_last_max) / target_bitrate_last_max × 4)²
//! within [0.2, 1]; target_bitrate_last_max is set at every congestion event (loss, or the
//! delay trend reaching QDELAY_TREND_LO more than one s_rtt after the previous detection);
//! the RTP-queue reduction (× TARGET_RATE_SCALE_RTP_QDELAY) applies outside fast increase
//! only; the target stays below (2 − qdelay_trend_mem) × max(current rate, media rate).
//! Until 2026-11-25 the RTP-queue rule ran in fast increase too and scale_t read 4·x²: with
//! key frames that held the target near the dip's rate for 30 s after it
//! (tests/scream_virtual_time.rs, `recovers_after_the_dip_with_key_frames`). Until
//! 2026-11-26 only the congestion that ended fast increase set target_bitrate_last_max, and
//! outside fast increase the target grew by `ramp × scale_t × off_target / 4` (an assumption)
//! instead of §4.1.3's delta_rate_t (`increase_is_limited_after_a_congestion_event_and_recovers`).

use std::collections::{BTreeMap, VecDeque};

// RFC 8298 §4.1.1 constants and their RFC defaults.
pub const QDELAY_TARGET_LO_US: f64 = 100_000.0;
pub const QDELAY_WEIGHT: f64 = 0.1;
pub const QDELAY_TREND_LO: f64 = 0.2;
pub const MIN_CWND: f64 = 3000.0;
pub const MAX_BYTES_IN_FLIGHT_HEAD_ROOM: f64 = 1.1;
pub const GAIN: f64 = 1.0;
pub const BETA_LOSS: f64 = 0.8;
pub const BETA_R: f64 = 0.9;
pub const MSS: f64 = 1000.0;
pub const RATE_ADJUST_INTERVAL_US: u64 = 200_000;
pub const RAMP_UP_SPEED_BPS: f64 = 200_000.0;
pub const PRE_CONGESTION_GUARD: f64 = 0.1;
pub const RTP_QDELAY_TH_US: u64 = 20_000;
pub const TARGET_RATE_SCALE_RTP_QDELAY: f64 = 0.95;
pub const T_RESUME_FAST_INCREASE_US: u64 = 5_000_000;
/// RFC 8298 §4.1.1: TX_QUEUE_SIZE_FACTOR, the RTP queue's weight in the rate change (1.0).
pub const TX_QUEUE_SIZE_FACTOR: f64 = 1.0;
pub const BASE_OWD_HIST_SIZE: usize = 10; // one-minute buckets
pub const PACKET_PACING_HEADROOM: f64 = 1.25;
pub const RATE_PACE_MIN_BPS: f64 = 50_000.0;
/// Packets this far below the highest acknowledged one and not acknowledged are lost
/// (RFC 8298 §4.1.2.1 leaves the reordering margin open; assumption: 3, as TCP's dupack).
pub const REORDER_PKTS: u64 = 3;
/// RTP queue older than this is discarded (RFC 8298 §4.1.2.5 lets the sender discard the
/// queue; assumption: 0.5 s, beyond which a conversational frame is useless).
pub const RTP_QUEUE_DISCARD_US: u64 = 500_000;

#[derive(Debug, Clone, Copy)]
pub struct ScreamConfig {
    pub min_bitrate_bps: f64,
    pub max_bitrate_bps: f64,
    pub start_bitrate_bps: f64,
}

#[derive(Debug, Clone, Copy)]
struct Sent {
    bytes: u64,
    sent_us: u64,
}

/// What the pacer and the window allow now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transmit {
    /// Send the queued packet with this sequence number and size now.
    Send { seq: u64, bytes: usize },
    /// Nothing may leave before this time (pacing).
    WaitUntil(u64),
    /// The window is full (wait for feedback) or the queue is empty.
    Blocked,
}

#[derive(Debug, Clone)]
pub struct Scream {
    cfg: ScreamConfig,
    pub cwnd: f64,
    bytes_in_flight: u64,
    max_bytes_in_flight: u64,
    in_flight: BTreeMap<u64, Sent>,
    queue: VecDeque<(u64, usize, u64)>, // (seq, bytes, enqueued µs)
    next_tx_us: u64,
    // delay
    base_owd: VecDeque<(u64, i64)>, // (minute, min OWD µs)
    pub qdelay_us: f64,
    qdelay_fraction_avg: f64,
    pub qdelay_trend: f64,
    qdelay_trend_mem: f64,
    pub srtt_us: f64,
    // state
    pub in_fast_increase: bool,
    last_congestion_us: u64,
    congestion_seen: Option<u64>,
    last_loss_event_us: Option<u64>,
    loss_since_adjust: bool,
    highest_acked: Option<u64>,
    // rate
    target_bps: f64,
    target_last_max_bps: f64,
    last_adjust_us: Option<u64>,
    bytes_sent_interval: u64,
    bytes_acked_interval: u64,
    bytes_enqueued_interval: u64,
    discarded_since: u64,
    pub lost_packets: u64,
}

impl Scream {
    pub fn new(cfg: ScreamConfig) -> Self {
        Scream {
            cfg,
            cwnd: MIN_CWND,
            bytes_in_flight: 0,
            max_bytes_in_flight: 0,
            in_flight: BTreeMap::new(),
            queue: VecDeque::new(),
            next_tx_us: 0,
            base_owd: VecDeque::new(),
            qdelay_us: 0.0,
            qdelay_fraction_avg: 0.0,
            qdelay_trend: 0.0,
            qdelay_trend_mem: 0.0,
            srtt_us: 0.0,
            in_fast_increase: true,
            last_congestion_us: 0,
            congestion_seen: None,
            last_loss_event_us: None,
            loss_since_adjust: false,
            highest_acked: None,
            target_bps: cfg.start_bitrate_bps,
            target_last_max_bps: 0.0,
            last_adjust_us: None,
            bytes_sent_interval: 0,
            bytes_acked_interval: 0,
            bytes_enqueued_interval: 0,
            discarded_since: 0,
            lost_packets: 0,
        }
    }

    pub fn target_bitrate_bps(&self) -> f64 {
        self.target_bps
    }

    /// RFC 8298 §4.1.3's target_bitrate_last_max: the target at the last congestion event.
    pub fn target_bitrate_last_max_bps(&self) -> f64 {
        self.target_last_max_bps
    }

    pub fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }

    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Age of the oldest packet in the RTP queue.
    pub fn rtp_queue_delay_us(&self, now_us: u64) -> u64 {
        self.queue
            .front()
            .map_or(0, |&(_, _, t)| now_us.saturating_sub(t))
    }

    /// RFC 8298 §4.1.3's rtp_queue_size: the RTP queue's size in bits.
    fn rtp_queue_bits(&self) -> f64 {
        self.queue.iter().map(|&(_, b, _)| b as f64 * 8.0).sum()
    }

    /// Packets discarded from the RTP queue since the last call (the encoder should then
    /// send a key frame).
    pub fn take_discarded(&mut self) -> u64 {
        std::mem::take(&mut self.discarded_since)
    }

    /// An RTP packet enters the RTP queue.
    pub fn enqueue(&mut self, now_us: u64, seq: u64, bytes: usize) {
        self.queue.push_back((seq, bytes, now_us));
        self.bytes_enqueued_interval += bytes as u64;
    }

    fn pacing_bps(&self) -> f64 {
        (self.target_bps * PACKET_PACING_HEADROOM).max(RATE_PACE_MIN_BPS)
    }

    /// Whether the head of the RTP queue may leave now; if it may, it is taken out and
    /// counted as sent at `now_us`.
    pub fn poll_transmit(&mut self, now_us: u64) -> Transmit {
        self.adjust_rate(now_us);
        if self.rtp_queue_delay_us(now_us) > RTP_QUEUE_DISCARD_US {
            self.discarded_since += self.queue.len() as u64;
            self.queue.clear();
        }
        let Some(&(seq, bytes, _)) = self.queue.front() else {
            return Transmit::Blocked;
        };
        // §4.1.2.5: the send window; one MSS of slack so a small window still moves.
        if self.bytes_in_flight as f64 + bytes as f64 > self.cwnd + MSS && self.bytes_in_flight > 0
        {
            return Transmit::Blocked;
        }
        if now_us < self.next_tx_us {
            return Transmit::WaitUntil(self.next_tx_us);
        }
        self.queue.pop_front();
        self.on_sent(now_us, seq, bytes);
        self.next_tx_us = now_us + (bytes as f64 * 8.0 / self.pacing_bps() * 1e6) as u64;
        Transmit::Send { seq, bytes }
    }

    fn on_sent(&mut self, now_us: u64, seq: u64, bytes: usize) {
        self.in_flight.insert(
            seq,
            Sent {
                bytes: bytes as u64,
                sent_us: now_us,
            },
        );
        self.bytes_in_flight += bytes as u64;
        self.max_bytes_in_flight = self.max_bytes_in_flight.max(self.bytes_in_flight);
        self.bytes_sent_interval += bytes as u64;
    }

    fn base_owd_us(&self) -> i64 {
        self.base_owd.iter().map(|&(_, o)| o).min().unwrap_or(0)
    }

    fn update_base(&mut self, now_us: u64, owd: i64) {
        let minute = now_us / 60_000_000;
        match self.base_owd.back_mut() {
            Some((m, o)) if *m == minute => *o = (*o).min(owd),
            _ => {
                self.base_owd.push_back((minute, owd));
                if self.base_owd.len() > BASE_OWD_HIST_SIZE {
                    self.base_owd.pop_front();
                }
            }
        }
    }

    /// Congestion feedback: (extended sequence number, arrival µs in the receiver's clock or
    /// None for "not received"). Packets reported as not received, or left unacknowledged
    /// REORDER_PKTS below the highest acknowledged one, are lost.
    pub fn on_feedback(&mut self, now_us: u64, reports: &[(u64, Option<u64>)]) {
        let mut newly_acked = 0u64;
        let mut latest_owd = None;
        for &(seq, arrival) in reports {
            let Some(arrival) = arrival else { continue };
            let Some(s) = self.in_flight.remove(&seq) else {
                continue;
            };
            self.bytes_in_flight -= s.bytes;
            newly_acked += s.bytes;
            let owd = arrival as i64 - s.sent_us as i64;
            self.update_base(now_us, owd);
            latest_owd = Some(owd);
            let rtt = now_us.saturating_sub(s.sent_us) as f64;
            self.srtt_us = if self.srtt_us == 0.0 {
                rtt
            } else {
                0.875 * self.srtt_us + 0.125 * rtt
            };
            self.highest_acked = Some(self.highest_acked.map_or(seq, |h| h.max(seq)));
        }
        // losses
        let mut lost = 0u64;
        if let Some(h) = self.highest_acked {
            let gone: Vec<u64> = self
                .in_flight
                .range(..h.saturating_sub(REORDER_PKTS))
                .map(|(&k, _)| k)
                .collect();
            for k in gone {
                let s = self.in_flight.remove(&k).unwrap();
                self.bytes_in_flight -= s.bytes;
                lost += 1;
            }
        }
        if lost > 0 {
            self.lost_packets += lost;
            self.on_loss(now_us);
        }
        self.bytes_acked_interval += newly_acked;
        if let Some(owd) = latest_owd {
            self.qdelay_us = (owd - self.base_owd_us()).max(0) as f64;
            self.update_trend();
        }
        if newly_acked > 0 {
            self.update_cwnd(now_us, newly_acked);
        }
        self.adjust_rate(now_us);
    }

    /// A loss event from elsewhere (e.g. QUIC's loss detection when feedback is inferred):
    /// the window shrinks by BETA_LOSS at most once per smoothed RTT (§4.1.2.3).
    pub fn on_loss(&mut self, now_us: u64) {
        let rtt = self.srtt_us.max(10_000.0) as u64;
        if self.last_loss_event_us.is_some_and(|t| now_us < t + rtt) {
            return;
        }
        self.last_loss_event_us = Some(now_us);
        self.cwnd = (self.cwnd * BETA_LOSS).max(MIN_CWND);
        self.loss_since_adjust = true;
        self.congestion(now_us);
    }

    /// Packets quinn reports neither acknowledged nor lost any more (inferred feedback):
    /// forget them without an ACK.
    pub fn forget_up_to(&mut self, seq: u64) {
        let rest = self.in_flight.split_off(&(seq + 1));
        for s in std::mem::replace(&mut self.in_flight, rest).into_values() {
            self.bytes_in_flight -= s.bytes;
        }
    }

    /// Congestion detected (a loss event, or the queue-delay trend at or above
    /// QDELAY_TREND_LO). RFC 8298 §4.1.3: "The target_bitrate_last_max is updated when
    /// congestion is detected": at every congestion event, not only the one that ends fast
    /// increase. An event is detection more than one smoothed RTT after the previous
    /// detection (§4.1.2.1 reduces the window at most once per RTT); a congestion that lasts
    /// (detected at every feedback) is one event, and records the target at its onset.
    fn congestion(&mut self, now_us: u64) {
        let rtt = self.srtt_us.max(10_000.0) as u64;
        let new_event = self.congestion_seen.is_none_or(|t| now_us > t + rtt);
        if new_event {
            self.target_last_max_bps = self.target_bps;
        }
        self.congestion_seen = Some(now_us);
        self.in_fast_increase = false;
        self.last_congestion_us = now_us;
    }

    fn update_trend(&mut self) {
        let frac = self.qdelay_us / QDELAY_TARGET_LO_US;
        self.qdelay_fraction_avg =
            (1.0 - QDELAY_WEIGHT) * self.qdelay_fraction_avg + QDELAY_WEIGHT * frac;
        self.qdelay_trend = self.qdelay_fraction_avg.clamp(0.0, 1.0);
        self.qdelay_trend_mem = (0.99 * self.qdelay_trend_mem).max(self.qdelay_trend);
    }

    fn update_cwnd(&mut self, now_us: u64, newly_acked: u64) {
        if self.qdelay_trend >= QDELAY_TREND_LO {
            self.congestion(now_us);
        } else if !self.in_fast_increase
            && now_us > self.last_congestion_us + T_RESUME_FAST_INCREASE_US
        {
            self.in_fast_increase = true;
        }
        let off_target = (QDELAY_TARGET_LO_US - self.qdelay_us) / QDELAY_TARGET_LO_US;
        let acked = newly_acked as f64;
        let increment = if self.in_fast_increase {
            acked
        } else {
            GAIN * off_target * acked * MSS / self.cwnd
        };
        if increment > 0.0 {
            // grow only while the window is used (§4.1.2.3: bytes in flight head room)
            let cap = self.max_bytes_in_flight as f64 * MAX_BYTES_IN_FLIGHT_HEAD_ROOM;
            if self.cwnd < cap {
                self.cwnd = (self.cwnd + increment).min(cap.max(self.cwnd));
            }
        } else {
            self.cwnd += increment;
        }
        self.cwnd = self.cwnd.max(MIN_CWND);
        self.max_bytes_in_flight = self.bytes_in_flight;
    }

    fn adjust_rate(&mut self, now_us: u64) {
        let Some(last) = self.last_adjust_us else {
            self.last_adjust_us = Some(now_us);
            return;
        };
        if now_us < last + RATE_ADJUST_INTERVAL_US {
            return;
        }
        let dt_s = (now_us - last) as f64 / 1e6;
        self.last_adjust_us = Some(now_us);
        let rate_transmit = self.bytes_sent_interval as f64 * 8.0 / dt_s;
        let rate_ack = self.bytes_acked_interval as f64 * 8.0 / dt_s;
        self.bytes_sent_interval = 0;
        self.bytes_acked_interval = 0;
        let interval_s = RATE_ADJUST_INTERVAL_US as f64 / 1e6;
        let rate_media = std::mem::take(&mut self.bytes_enqueued_interval) as f64 * 8.0 / dt_s;
        let current = rate_transmit.max(rate_ack);
        let mut t = self.target_bps;
        // §4.1.3: ramp_up_speed_t and scale_t, the slow-down near the rate of the last
        // congestion: ((t - last_max) / last_max * 4)^2 within [0.2, 1]
        let ramp = RAMP_UP_SPEED_BPS.min(t / 2.0) * interval_s;
        let scale = if self.target_last_max_bps > 0.0 {
            let x = (t - self.target_last_max_bps) / self.target_last_max_bps;
            (x * 4.0).powi(2).clamp(0.2, 1.0)
        } else {
            1.0
        };
        if std::mem::take(&mut self.loss_since_adjust) {
            t *= BETA_R;
        } else if self.in_fast_increase {
            t += ramp * scale;
        } else {
            // §4.1.3, not in fast increase: delta_rate_t = current_rate_t × (1 −
            // PRE_CONGESTION_GUARD × qdelay_trend) − TX_QUEUE_SIZE_FACTOR × rtp_queue_size,
            // minus the target (SCReAM's C++ code; the RFC's pseudocode leaves it out, see the
            // module's deviations). A positive change is limited near target_bitrate_last_max
            // (× scale_t) and to ramp_up_speed_t × RATE_ADJUST_INTERVAL; a negative one is
            // applied while the delay trend says congestion (assumption, module docs).
            let delta = current * (1.0 - PRE_CONGESTION_GUARD * self.qdelay_trend)
                - TX_QUEUE_SIZE_FACTOR * self.rtp_queue_bits()
                - t;
            if delta > 0.0 {
                t += (delta * scale).min(ramp);
            } else if self.qdelay_trend >= QDELAY_TREND_LO {
                t += delta;
            }
            // §4.1.3: outside fast increase only, an RTP queue older than RTP_QDELAY_TH
            // forces a slight reduction
            if self.rtp_queue_delay_us(now_us) > RTP_QDELAY_TH_US {
                t *= TARGET_RATE_SCALE_RTP_QDELAY;
            }
        }
        // §4.1.3: the target stays within (2 - qdelay_trend_mem) x what is measured to be
        // sent or produced (rtp_rate_median: assumption, the interval's media rate stands in)
        let limit = current.max(rate_media) * (2.0 - self.qdelay_trend_mem);
        if limit > 0.0 {
            t = t.min(limit);
        }
        self.target_bps = t.clamp(self.cfg.min_bitrate_bps, self.cfg.max_bitrate_bps);
    }
}
