//! When a forwarding thread wakes up next, and whether a frame arriving wakes it.
//!
//! Three rules make the cost follow the traffic instead of the packet count:
//! - **Wake for departures only**: the thread wakes when a frame can next leave the model
//!   (`Direction::next_departure_ns`), not for the rate server's inner events, which the
//!   model replays exactly when it is next advanced.
//! - **Batched departures within a bound, never early**: the thread wakes at
//!   `Direction::batch_departure_ns(batch_ns)`, the latest departure the model knows of
//!   within `batch_ns` of the next one, and releases every frame whose exit time has come;
//!   all leave in one `sendmmsg`. So no frame leaves more than `batch_ns` after its model
//!   time (plus the wake-up latency), the last frame of each batch leaves on time, and a
//!   frame with no other departure within the bound is woken for at its exact time. No frame
//!   leaves before its model time (a packet cannot beat its propagation delay; an earlier
//!   design released frames up to `batch_ns` / 2 early, and a ping through 2 × 10 ms then
//!   measured 19.9 ms). The design before this one woke at most once per `batch_ns` after a
//!   send, which made nearly every frame of dense traffic late by up to the bound, lone
//!   frames included (netem/README.md, "I/O shell").
//! - **Lazy reads**: frames carry the kernel's receive stamp, so they enter the model at the
//!   time they arrived however late they are read. While the model holds packets, the thread
//!   does not wake for arrivals; it reads them at the next departure wake-up or after
//!   `read_lag_ns`, whichever comes first. `read_lag_ns` is the direction's smallest transit
//!   time (delay − jitter) minus `batch_ns`: a frame read that late is in the model `batch_ns`
//!   before it can leave, so it still leaves within the bound. Below `batch_ns` (no delay),
//!   or with `batch_ns` 0, every frame wakes the thread.

/// Where the thread should sleep until, and whether a readable receive socket ends the sleep.
#[derive(Debug, PartialEq, Eq)]
pub struct Sleep {
    pub until_ns: u64,
    pub watch_rx: bool,
}

pub struct Pacer {
    pub batch_ns: u64,
    pub read_lag_ns: u64,
}

impl Pacer {
    /// `min_transit_ns`: the smallest time any frame spends in the model (delay − jitter).
    pub fn new(batch_ns: u64, min_transit_ns: u64) -> Self {
        let lag = min_transit_ns.saturating_sub(batch_ns);
        Pacer {
            batch_ns,
            // No batching (0) also means no lazy reads: every frame wakes the thread.
            read_lag_ns: if batch_ns > 0 && lag >= batch_ns {
                lag
            } else {
                0
            },
        }
    }

    /// The next sleep, given the departure to wake for (`batch_departure_ns(batch_ns)`) and
    /// the latest time to wake anyway.
    pub fn plan(&self, now_ns: u64, departure_ns: Option<u64>, deadline_ns: u64) -> Sleep {
        match departure_ns {
            Some(d) if self.read_lag_ns > 0 => Sleep {
                until_ns: d.min(deadline_ns).min(now_ns + self.read_lag_ns),
                watch_rx: false,
            },
            _ => Sleep {
                until_ns: departure_ns.unwrap_or(u64::MAX).min(deadline_ns),
                watch_rx: true,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linkem::config::parse_config;
    use linkem::{Direction, Event};

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    #[test]
    fn arrivals_wake_only_an_empty_model_when_the_delay_allows() {
        let p = Pacer::new(250 * US, 10 * MS);
        assert_eq!(p.read_lag_ns, 9_750 * US);
        // Packets pending: sleep through arrivals, at most the read lag.
        assert_eq!(
            p.plan(MS, Some(30 * MS), 40 * MS),
            Sleep {
                until_ns: MS + 9_750 * US,
                watch_rx: false
            }
        );
        // Empty model: the first frame wakes the thread.
        assert_eq!(
            p.plan(MS, None, 20 * MS),
            Sleep {
                until_ns: 20 * MS,
                watch_rx: true
            }
        );
        // No delay: every frame wakes it.
        let p0 = Pacer::new(250 * US, 100 * US);
        assert_eq!(p0.read_lag_ns, 0);
        assert!(p0.plan(0, Some(MS), 20 * MS).watch_rx);
        // No batching: no lazy reads either.
        assert_eq!(Pacer::new(0, 10 * MS).read_lag_ns, 0);
    }

    /// What the forwarding thread does, in virtual time with wake-ups exactly on time: frames
    /// arrive at the given times (stamped then, read at the next wake-up), each wake-up
    /// advances the core and sleeps as the pacer says. Returns (wake-ups that sent frames,
    /// each sent frame's lateness = release time − model exit time).
    fn drive(link: &str, arrivals: &[u64], batch_ns: u64) -> (usize, Vec<u64>) {
        let doc = format!(r#"{{"seed": 1, "a_to_b": {link}, "b_to_a": {link}}}"#);
        let cfg = parse_config(&doc).expect("valid config").a_to_b;
        let mut core: Direction<u64> = Direction::new(&cfg, 1500, 1, 0);
        let pacer = Pacer::new(batch_ns, cfg.delay_ns.saturating_sub(cfg.jitter_ns));
        let (mut now, mut next_rx, mut sends) = (0, 0, 0);
        let (mut late, mut events) = (Vec::new(), Vec::new());
        loop {
            while next_rx < arrivals.len() && arrivals[next_rx] <= now {
                core.enqueue(arrivals[next_rx], next_rx as u64, 1442, &mut events);
                next_rx += 1;
            }
            core.poll(now, &mut events);
            let before = late.len();
            for e in events.drain(..) {
                if let Event::Sent { at_ns, .. } = e {
                    assert!(at_ns <= now, "released before its exit time");
                    late.push(now - at_ns);
                }
            }
            sends += usize::from(late.len() > before);
            let plan = pacer.plan(now, core.batch_departure_ns(batch_ns), now + 20 * MS);
            let rx = arrivals.get(next_rx).copied().filter(|_| plan.watch_rx);
            let wake = plan.until_ns.min(rx.unwrap_or(u64::MAX));
            if next_rx == arrivals.len() && core.in_flight() == 0 {
                return (sends, late);
            }
            now = wake.max(now);
        }
    }

    /// 30 frames of 87 packets at once, one every 33.3 ms (30 Mbit/s, video-like).
    fn bursts() -> Vec<u64> {
        (0..30u64)
            .flat_map(|f| std::iter::repeat_n(f * 33_333 * US, 87))
            .collect()
    }

    const LINK_60: &str = r#"{"rate": {"kind": "constant", "rate_bps": 60000000},
        "delay_us": 5000, "queue": {"limit_packets": 10000}}"#;

    #[test]
    fn batches_stay_within_the_bound_and_lone_frames_leave_on_time() {
        // 60 Mbit/s: the packets of a burst leave 192.3 µs apart.
        let (sends0, late0) = drive(LINK_60, &bursts(), 0);
        assert_eq!(sends0, late0.len(), "no batching: a wake-up per frame");
        assert!(late0.iter().all(|&l| l == 0));
        // A bound below the spacing changes nothing: every frame on time.
        let (sends, late) = drive(LINK_60, &bursts(), 150 * US);
        assert_eq!((sends, late.iter().max()), (sends0, Some(&0)));
        // 250 µs: two frames per wake-up (the first 192 µs late, the second on time).
        let (sends, late) = drive(LINK_60, &bursts(), 250 * US);
        assert_eq!(late.len(), late0.len());
        assert!(late.iter().all(|&l| l <= 250 * US));
        assert!(sends * 2 <= sends0 + 30, "{sends} wake-ups vs {sends0}");
        let mean = late.iter().sum::<u64>() as f64 / late.len() as f64;
        assert!(mean < 100_000.0, "mean lateness {mean} ns");
        // 1 ms: five frames per wake-up, none more than the bound late.
        let (sends, late) = drive(LINK_60, &bursts(), MS);
        assert!(late.iter().all(|&l| l <= MS));
        assert!(sends * 5 <= sends0 + 5 * 30, "{sends} wake-ups vs {sends0}");
    }

    #[test]
    fn sparse_traffic_is_never_delayed_by_the_bound() {
        // A ping every 10 ms through 10 ms of delay, unlimited rate, 250 µs bound.
        let pings: Vec<u64> = (0..50).map(|i| i * 10 * MS + 7 * US).collect();
        let link = r#"{"rate": {"kind": "unlimited"}, "delay_us": 10000,
            "queue": {"limit_packets": 100}}"#;
        let (sends, late) = drive(link, &pings, 250 * US);
        assert_eq!((sends, late.len()), (50, 50));
        assert!(late.iter().all(|&l| l == 0));
    }
}
