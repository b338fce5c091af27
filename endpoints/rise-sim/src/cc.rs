//! quinn 0.11's congestion controllers, re-stated from quinn-proto 0.11.19
//! (`src/congestion/cubic.rs`, `src/congestion/new_reno.rs`): same state, same arithmetic, same
//! defaults. Time is ns.

/// quinn-proto `congestion::BASE_DATAGRAM_SIZE`.
pub const BASE_DATAGRAM_SIZE: u64 = 1200;

/// quinn's default initial window for both controllers: `14720.clamp(2 * 1200, 10 * 1200)`.
pub const INITIAL_WINDOW: u64 = 12_000;

/// RFC 8312 constants used by quinn's Cubic.
const BETA_CUBIC: f64 = 0.7;
const C: f64 = 0.4;

/// NewReno's `loss_reduction_factor` default in quinn.
const NEW_RENO_LOSS_REDUCTION: f32 = 0.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcKind {
    Cubic,
    NewReno,
}

impl CcKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CcKind::Cubic => "cubic",
            CcKind::NewReno => "newreno",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Cubic {
    window: u64,
    ssthresh: u64,
    recovery_start_ns: Option<u64>,
    k: f64,
    w_max: f64,
    cwnd_inc: u64,
    mtu: u64,
}

impl Cubic {
    fn w_cubic(&self, t_s: f64) -> f64 {
        let w_max = self.w_max / self.mtu as f64;
        (C * (t_s - self.k).powi(3) + w_max) * self.mtu as f64
    }

    fn w_est(&self, t_s: f64, rtt_s: f64) -> f64 {
        let w_max = self.w_max / self.mtu as f64;
        (w_max * BETA_CUBIC + 3.0 * (1.0 - BETA_CUBIC) / (1.0 + BETA_CUBIC) * t_s / rtt_s)
            * self.mtu as f64
    }

    fn cubic_k(&self) -> f64 {
        let w_max = self.w_max / self.mtu as f64;
        (w_max * (1.0 - BETA_CUBIC) / C).cbrt()
    }
}

#[derive(Debug, Clone)]
pub struct NewReno {
    window: u64,
    ssthresh: u64,
    recovery_start_ns: u64,
    bytes_acked: u64,
    mtu: u64,
}

/// One of quinn's controllers.
#[derive(Debug, Clone)]
pub enum Controller {
    Cubic(Cubic),
    NewReno(NewReno),
}

impl Controller {
    pub fn new(kind: CcKind, now_ns: u64, mtu: u64) -> Self {
        match kind {
            CcKind::Cubic => Controller::Cubic(Cubic {
                window: INITIAL_WINDOW,
                ssthresh: u64::MAX,
                recovery_start_ns: None,
                k: 0.0,
                w_max: 0.0,
                cwnd_inc: 0,
                mtu,
            }),
            CcKind::NewReno => Controller::NewReno(NewReno {
                window: INITIAL_WINDOW,
                ssthresh: u64::MAX,
                recovery_start_ns: now_ns,
                bytes_acked: 0,
                mtu,
            }),
        }
    }

    pub fn window(&self) -> u64 {
        match self {
            Controller::Cubic(c) => c.window,
            Controller::NewReno(c) => c.window,
        }
    }

    pub fn ssthresh(&self) -> u64 {
        match self {
            Controller::Cubic(c) => c.ssthresh,
            Controller::NewReno(c) => c.ssthresh,
        }
    }

    fn minimum_window(mtu: u64) -> u64 {
        2 * mtu
    }

    /// A packet sent at `sent_ns` carrying `bytes` was acknowledged; `rtt_ns` is quinn's
    /// `RttEstimator::get()`.
    pub fn on_ack(
        &mut self,
        now_ns: u64,
        sent_ns: u64,
        bytes: u64,
        app_limited: bool,
        rtt_ns: u64,
    ) {
        match self {
            Controller::Cubic(c) => {
                if app_limited || c.recovery_start_ns.is_some_and(|r| sent_ns <= r) {
                    return;
                }
                if c.window < c.ssthresh {
                    c.window += bytes;
                    return;
                }
                let ca_start = match c.recovery_start_ns {
                    Some(t) => t,
                    None => {
                        c.recovery_start_ns = Some(now_ns);
                        c.w_max = c.window as f64;
                        c.k = 0.0;
                        now_ns
                    }
                };
                let t_s = now_ns.saturating_sub(ca_start) as f64 / 1e9;
                let rtt_s = rtt_ns as f64 / 1e9;
                let w_cubic = c.w_cubic(t_s + rtt_s);
                let w_est = c.w_est(t_s, rtt_s);
                let mut cubic_cwnd = c.window;
                if w_cubic < w_est {
                    cubic_cwnd = cubic_cwnd.max(w_est as u64);
                } else if (cubic_cwnd as f64) < w_cubic {
                    let inc = (w_cubic - cubic_cwnd as f64) / cubic_cwnd as f64 * c.mtu as f64;
                    cubic_cwnd = cubic_cwnd.saturating_add(inc as u64);
                }
                c.cwnd_inc += cubic_cwnd - c.window;
                if c.cwnd_inc >= c.mtu {
                    c.window += c.mtu;
                    c.cwnd_inc = 0;
                }
            }
            Controller::NewReno(c) => {
                if app_limited || sent_ns <= c.recovery_start_ns {
                    return;
                }
                if c.window < c.ssthresh {
                    c.window += bytes;
                    if c.window >= c.ssthresh {
                        c.bytes_acked = c.window - c.ssthresh;
                    }
                } else {
                    c.bytes_acked += bytes;
                    if c.bytes_acked >= c.window {
                        c.bytes_acked -= c.window;
                        c.window += c.mtu;
                    }
                }
            }
        }
    }

    /// Packets were declared lost; `sent_ns` is the send time of the newest lost one.
    pub fn on_congestion_event(&mut self, now_ns: u64, sent_ns: u64, persistent: bool) {
        match self {
            Controller::Cubic(c) => {
                if c.recovery_start_ns.is_some_and(|r| sent_ns <= r) {
                    return;
                }
                c.recovery_start_ns = Some(now_ns);
                let window = c.window as f64;
                c.w_max = if window < c.w_max {
                    window * (1.0 + BETA_CUBIC) / 2.0
                } else {
                    window
                };
                c.ssthresh = ((window * BETA_CUBIC) as u64).max(Self::minimum_window(c.mtu));
                c.window = c.ssthresh;
                c.k = c.cubic_k();
                c.cwnd_inc = (c.cwnd_inc as f64 * BETA_CUBIC) as u64;
                if persistent {
                    c.recovery_start_ns = None;
                    c.w_max = c.window as f64;
                    c.ssthresh =
                        ((c.window as f64 * BETA_CUBIC) as u64).max(Self::minimum_window(c.mtu));
                    c.cwnd_inc = 0;
                    c.window = Self::minimum_window(c.mtu);
                }
            }
            Controller::NewReno(c) => {
                if sent_ns <= c.recovery_start_ns {
                    return;
                }
                c.recovery_start_ns = now_ns;
                c.window = (c.window as f32 * NEW_RENO_LOSS_REDUCTION) as u64;
                c.window = c.window.max(Self::minimum_window(c.mtu));
                c.ssthresh = c.window;
                if persistent {
                    c.window = Self::minimum_window(c.mtu);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn slow_start_grows_by_bytes_acked() {
        for kind in [CcKind::Cubic, CcKind::NewReno] {
            let mut c = Controller::new(kind, 0, 1200);
            assert_eq!(c.window(), INITIAL_WINDOW);
            c.on_ack(10 * MS, 1, 1200, false, 20 * MS);
            assert_eq!(c.window(), INITIAL_WINDOW + 1200, "{kind:?}");
            // app-limited acks do not grow the window
            c.on_ack(11 * MS, 2, 1200, true, 20 * MS);
            assert_eq!(c.window(), INITIAL_WINDOW + 1200, "{kind:?}");
        }
    }

    #[test]
    fn loss_backs_off_once_per_recovery_period() {
        let mut c = Controller::new(CcKind::Cubic, 0, 1200);
        for i in 0..100 {
            c.on_ack(MS + i, 1 + i, 1200, false, 20 * MS);
        }
        let w = c.window();
        c.on_congestion_event(50 * MS, 40 * MS, false);
        assert_eq!(c.window(), (w as f64 * 0.7) as u64);
        assert_eq!(c.ssthresh(), c.window());
        // a second loss of a packet sent before the recovery started: no second cut
        c.on_congestion_event(51 * MS, 45 * MS, false);
        assert_eq!(c.window(), (w as f64 * 0.7) as u64);
        // acks of packets sent before recovery do not grow it either
        c.on_ack(52 * MS, 49 * MS, 1200, false, 20 * MS);
        assert_eq!(c.window(), (w as f64 * 0.7) as u64);

        let mut r = Controller::new(CcKind::NewReno, 0, 1200);
        for i in 0..100 {
            r.on_ack(MS + i, 1 + i, 1200, false, 20 * MS);
        }
        let w = r.window();
        r.on_congestion_event(50 * MS, 40 * MS, false);
        assert_eq!(r.window(), w / 2);
        r.on_congestion_event(60 * MS, 55 * MS, true);
        assert_eq!(r.window(), 2400, "persistent congestion: minimum window");
    }

    #[test]
    fn cubic_avoidance_grows_at_most_one_mtu_per_ack_and_regains_w_max() {
        let mtu = 1200;
        let mut c = Controller::new(CcKind::Cubic, 0, mtu);
        for i in 0..200 {
            c.on_ack(MS + i, 1 + i, mtu, false, 20 * MS);
        }
        let w0 = c.window();
        c.on_congestion_event(10 * MS, 5 * MS, false);
        let cut = c.window();
        // acks every ms for 3 s of packets sent after the cut
        let mut t = 31 * MS;
        let mut prev = cut;
        let mut max_step = 0;
        while t < 3_000 * MS {
            c.on_ack(t, t - 20 * MS, mtu, false, 20 * MS);
            max_step = max_step.max(c.window() - prev);
            prev = c.window();
            t += MS;
        }
        assert!(max_step <= mtu, "step {max_step}");
        // K = cbrt(w_max(1−β)/C) in packets: the window is back at w_max well before 3 s
        assert!(c.window() >= w0, "{} < {w0}", c.window());
    }

    #[test]
    fn newreno_avoidance_adds_one_mtu_per_window_acked() {
        let mtu = 1200;
        let mut c = Controller::new(CcKind::NewReno, 0, mtu);
        c.on_congestion_event(MS, 1, false); // ssthresh = window = 6000
        let w = c.window();
        let mut acked = 0;
        let mut t = 2 * MS;
        while acked < w {
            c.on_ack(t, t, mtu, false, 20 * MS);
            acked += mtu;
            t += 1;
        }
        assert_eq!(c.window(), w + mtu);
    }
}
