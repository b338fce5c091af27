//! Google Congestion Control (draft-ietf-rmcat-gcc-02, as libwebrtc implements its delay
//! part), beyond [RoQ]: a delay-based controller (packet groups, a trendline of the
//! one-way delay variation, an over-use detector with an adaptive threshold, an
//! increase/hold/decrease rate controller) and a loss-based one; the target is the smaller.
//! Pure: driven by the same feedback as SCReAM (sequence number, send time, size, arrival
//! time in the receiver's clock). Constants are the draft's or libwebrtc's defaults, named.

use std::collections::{BTreeMap, VecDeque};

/// Packets sent within this interval form one group (draft §5.2: burst_time 5 ms).
pub const BURST_US: u64 = 5_000;
/// Trendline window (libwebrtc: 20 delay samples), smoothing 0.9, gain 4.
pub const TREND_WINDOW: usize = 20;
pub const TREND_SMOOTHING: f64 = 0.9;
pub const TREND_GAIN: f64 = 4.0;
/// Adaptive threshold (draft §5.4): initial 12.5 ms, K_u 0.01, K_d 0.00018.
pub const THRESHOLD_INIT_MS: f64 = 12.5;
pub const K_UP: f64 = 0.01;
pub const K_DOWN: f64 = 0.00018;
/// Over-use must last this long before it counts (draft §5.4: overuse_time_th 10 ms).
pub const OVERUSE_TIME_US: u64 = 10_000;
/// Decrease to β × the received rate (draft §5.5: 0.85).
pub const BETA: f64 = 0.85;
/// Multiplicative increase per second far from convergence (draft §5.5: 8 %).
pub const ETA_PER_S: f64 = 0.08;
/// Loss-based controller (draft §6): above 10 % loss decrease by (1 − 0.5 p), below 2 %
/// increase by 5 %.
pub const LOSS_HIGH: f64 = 0.10;
pub const LOSS_LOW: f64 = 0.02;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    Normal,
    Over,
    Under,
}

#[derive(Debug, Clone, Copy)]
struct Group {
    first_send_us: u64,
    last_send_us: u64,
    last_arrival_us: u64,
}

#[derive(Debug, Clone)]
pub struct Gcc {
    min_bps: f64,
    max_bps: f64,
    sent: BTreeMap<u64, (u64, usize)>, // seq -> (send µs, bytes)
    group: Option<Group>,
    prev_group: Option<Group>,
    acc_delay_ms: f64,
    smoothed_ms: f64,
    samples: VecDeque<(f64, f64)>, // (arrival ms, smoothed accumulated delay ms)
    first_arrival_ms: Option<f64>,
    num_deltas: usize,
    threshold_ms: f64,
    last_threshold_update_us: Option<u64>,
    overuse_since: Option<u64>,
    prev_trend: f64,
    pub usage: Usage,
    delay_bps: f64,
    loss_bps: f64,
    last_update_us: Option<u64>,
    received: VecDeque<(u64, usize)>, // (arrival µs, bytes) over the last 0.5 s
    lost_window: (u64, u64),          // (lost, reported) since the last loss update
    last_loss_update_us: u64,
}

impl Gcc {
    pub fn new(min_bps: f64, max_bps: f64, start_bps: f64) -> Self {
        Gcc {
            min_bps,
            max_bps,
            sent: BTreeMap::new(),
            group: None,
            prev_group: None,
            acc_delay_ms: 0.0,
            smoothed_ms: 0.0,
            samples: VecDeque::new(),
            first_arrival_ms: None,
            num_deltas: 0,
            threshold_ms: THRESHOLD_INIT_MS,
            last_threshold_update_us: None,
            overuse_since: None,
            prev_trend: 0.0,
            usage: Usage::Normal,
            delay_bps: start_bps,
            loss_bps: start_bps,
            last_update_us: None,
            received: VecDeque::new(),
            lost_window: (0, 0),
            last_loss_update_us: 0,
        }
    }

    pub fn target_bitrate_bps(&self) -> f64 {
        self.delay_bps
            .min(self.loss_bps)
            .clamp(self.min_bps, self.max_bps)
    }

    pub fn on_sent(&mut self, now_us: u64, seq: u64, bytes: usize) {
        self.sent.insert(seq, (now_us, bytes));
        if self.sent.len() > 10_000 {
            self.sent.pop_first();
        }
    }

    fn received_bps(&self) -> f64 {
        let (Some(a), Some(b)) = (self.received.front(), self.received.back()) else {
            return 0.0;
        };
        let span = (b.0 - a.0).max(100_000) as f64 / 1e6;
        self.received.iter().map(|x| x.1).sum::<usize>() as f64 * 8.0 / span
    }

    /// Feedback: (sequence number, arrival µs in the receiver's clock or None), in sequence
    /// order.
    pub fn on_feedback(&mut self, now_us: u64, reports: &[(u64, Option<u64>)]) {
        for &(seq, arrival) in reports {
            let Some((send_us, bytes)) = self.sent.remove(&seq) else {
                continue;
            };
            self.lost_window.1 += 1;
            let Some(arr) = arrival else {
                self.lost_window.0 += 1;
                continue;
            };
            self.received.push_back((arr, bytes));
            while self
                .received
                .front()
                .is_some_and(|&(t, _)| t + 500_000 < arr)
            {
                self.received.pop_front();
            }
            self.on_packet(now_us, send_us, arr);
        }
        self.update_loss(now_us);
        self.update_rate(now_us);
    }

    fn on_packet(&mut self, now_us: u64, send_us: u64, arr_us: u64) {
        match &mut self.group {
            Some(g) if send_us.saturating_sub(g.first_send_us) <= BURST_US => {
                g.last_send_us = g.last_send_us.max(send_us);
                g.last_arrival_us = g.last_arrival_us.max(arr_us);
                return;
            }
            _ => {}
        }
        // a new group starts: the finished one yields a delay sample against its predecessor
        if let (Some(prev), Some(cur)) = (self.prev_group, self.group) {
            let send_delta_ms = (cur.last_send_us as f64 - prev.last_send_us as f64) / 1e3;
            let arr_delta_ms = (cur.last_arrival_us as f64 - prev.last_arrival_us as f64) / 1e3;
            self.trend_sample(now_us, arr_delta_ms - send_delta_ms, cur.last_arrival_us);
        }
        self.prev_group = self.group;
        self.group = Some(Group {
            first_send_us: send_us,
            last_send_us: send_us,
            last_arrival_us: arr_us,
        });
    }

    fn trend_sample(&mut self, now_us: u64, delta_ms: f64, arrival_us: u64) {
        self.num_deltas += 1;
        self.acc_delay_ms += delta_ms;
        self.smoothed_ms =
            TREND_SMOOTHING * self.smoothed_ms + (1.0 - TREND_SMOOTHING) * self.acc_delay_ms;
        let arr_ms = arrival_us as f64 / 1e3;
        let first = *self.first_arrival_ms.get_or_insert(arr_ms);
        self.samples.push_back((arr_ms - first, self.smoothed_ms));
        if self.samples.len() > TREND_WINDOW {
            self.samples.pop_front();
        }
        if self.samples.len() < TREND_WINDOW {
            return;
        }
        let n = self.samples.len() as f64;
        let mx = self.samples.iter().map(|s| s.0).sum::<f64>() / n;
        let my = self.samples.iter().map(|s| s.1).sum::<f64>() / n;
        let num: f64 = self.samples.iter().map(|s| (s.0 - mx) * (s.1 - my)).sum();
        let den: f64 = self.samples.iter().map(|s| (s.0 - mx).powi(2)).sum();
        let slope = if den > 0.0 { num / den } else { 0.0 };
        let trend = slope * (self.num_deltas.min(60) as f64) * TREND_GAIN;
        self.detect(now_us, trend);
    }

    fn detect(&mut self, now_us: u64, trend: f64) {
        if trend > self.threshold_ms {
            let since = *self.overuse_since.get_or_insert(now_us);
            if now_us - since >= OVERUSE_TIME_US && trend >= self.prev_trend {
                self.usage = Usage::Over;
            }
        } else {
            self.overuse_since = None;
            self.usage = if trend < -self.threshold_ms {
                Usage::Under
            } else {
                Usage::Normal
            };
        }
        self.prev_trend = trend;
        // adaptive threshold (draft §5.4), frozen for outliers (|trend| > threshold + 15 ms)
        let dt_ms = self
            .last_threshold_update_us
            .map_or(0.0, |t| (now_us - t) as f64 / 1e3)
            .min(100.0);
        self.last_threshold_update_us = Some(now_us);
        if trend.abs() <= self.threshold_ms + 15.0 {
            let k = if trend.abs() < self.threshold_ms {
                K_DOWN
            } else {
                K_UP
            };
            self.threshold_ms += k * (trend.abs() - self.threshold_ms) * dt_ms;
            self.threshold_ms = self.threshold_ms.clamp(6.0, 600.0);
        }
    }

    fn update_rate(&mut self, now_us: u64) {
        let dt_s = self
            .last_update_us
            .map_or(0.0, |t| (now_us.saturating_sub(t)) as f64 / 1e6)
            .min(1.0);
        self.last_update_us = Some(now_us);
        let rx = self.received_bps();
        match self.usage {
            Usage::Over => {
                if rx > 0.0 {
                    self.delay_bps = self.delay_bps.min(BETA * rx);
                }
            }
            Usage::Under => {} // hold: the queues drain
            Usage::Normal => {
                self.delay_bps *= (1.0 + ETA_PER_S).powf(dt_s);
                // never far above what is received (draft §5.5: 1.5 × R)
                if rx > 0.0 {
                    self.delay_bps = self.delay_bps.min(1.5 * rx + 10_000.0);
                }
            }
        }
        self.delay_bps = self.delay_bps.clamp(self.min_bps, self.max_bps);
    }

    fn update_loss(&mut self, now_us: u64) {
        if now_us < self.last_loss_update_us + 1_000_000 && self.lost_window.1 < 100 {
            return;
        }
        let (lost, n) = std::mem::take(&mut self.lost_window);
        self.last_loss_update_us = now_us;
        if n == 0 {
            return;
        }
        let p = lost as f64 / n as f64;
        if p > LOSS_HIGH {
            self.loss_bps = self.target_bitrate_bps() * (1.0 - 0.5 * p);
        } else if p < LOSS_LOW {
            self.loss_bps = (self.loss_bps * 1.05).max(self.delay_bps);
        }
        self.loss_bps = self.loss_bps.clamp(self.min_bps, self.max_bps);
    }
}
