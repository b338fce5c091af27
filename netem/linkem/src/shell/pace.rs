//! When a forwarding thread wakes up next, and whether a frame arriving wakes it.
//!
//! Three rules make the cost follow the traffic instead of the packet count:
//! - **Wake for departures only**: the thread wakes when a frame can next leave the model
//!   (`Direction::next_departure_ns`), not for the rate server's inner events, which the
//!   model replays exactly when it is next advanced.
//! - **Batched departures**: after a wake-up that sent frames, the next departure wake-up
//!   comes at least `batch_ns` later, and it releases every frame whose exit time has come;
//!   all leave in one `sendmmsg`. No frame leaves before its model time (a packet cannot
//!   beat its propagation delay; an earlier design released frames up to `batch_ns` / 2
//!   early, and a ping through 2 × 10 ms then measured 19.9 ms). A frame in dense traffic
//!   therefore leaves at most `batch_ns` after its model time (plus the wake-up latency); a
//!   frame after a pause of `batch_ns` or more is woken for at its exact time.
//! - **Lazy reads**: frames carry the kernel's receive stamp, so they enter the model at the
//!   time they arrived however late they are read. While the model holds packets, the thread
//!   does not wake for arrivals; it reads them at the next departure wake-up or after
//!   `read_lag_ns`, whichever comes first. `read_lag_ns` is the direction's smallest transit
//!   time (delay − jitter) minus `batch_ns`: a frame read that late still leaves no later
//!   than the batching bound allows. Below `batch_ns` (no delay), or with `batch_ns` 0, every
//!   frame wakes the thread.

/// Where the thread should sleep until, and whether a readable receive socket ends the sleep.
#[derive(Debug, PartialEq, Eq)]
pub struct Sleep {
    pub until_ns: u64,
    pub watch_rx: bool,
}

pub struct Pacer {
    pub batch_ns: u64,
    pub read_lag_ns: u64,
    /// When the last wake-up that sent frames happened (None: never).
    last_send_ns: Option<u64>,
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
            last_send_ns: None,
        }
    }

    /// A wake-up at `now_ns` handed frames to the kernel.
    pub fn sent(&mut self, now_ns: u64) {
        self.last_send_ns = Some(now_ns);
    }

    /// The next sleep, given the model's next event and the latest time to wake anyway.
    pub fn plan(&self, now_ns: u64, next_event_ns: Option<u64>, deadline_ns: u64) -> Sleep {
        let departure = next_event_ns.map(|t| match self.last_send_ns {
            Some(last) => t.max(last.saturating_add(self.batch_ns)),
            None => t,
        });
        match departure {
            Some(d) if self.read_lag_ns > 0 => Sleep {
                until_ns: d.min(deadline_ns).min(now_ns + self.read_lag_ns),
                watch_rx: false,
            },
            _ => Sleep {
                until_ns: departure.unwrap_or(u64::MAX).min(deadline_ns),
                watch_rx: true,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    #[test]
    fn sparse_departures_are_on_time_dense_ones_batched() {
        let mut p = Pacer::new(250 * US, 10 * MS);
        // Nothing sent yet: wake exactly at the event.
        assert_eq!(p.plan(0, Some(5 * MS), 20 * MS).until_ns, 5 * MS);
        p.sent(5 * MS);
        // An event 100 µs after a send waits for the batch bound…
        assert_eq!(
            p.plan(5 * MS, Some(5 * MS + 100 * US), 20 * MS).until_ns,
            5 * MS + 250 * US
        );
        // …one after a longer pause does not.
        assert_eq!(p.plan(6 * MS, Some(6 * MS), 20 * MS).until_ns, 6 * MS);
    }

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
}
