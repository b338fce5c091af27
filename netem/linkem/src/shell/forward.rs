//! One forwarding thread per direction: receive a batch, feed the core, send what the core
//! releases, sleep precisely until the core's next event (or a frame arrives).

use super::clock::{
    monotonic_ns, realtime_to_monotonic_offset, set_normal, tighten_timer_slack, try_realtime,
    wait_readable,
};
use super::pace::Pacer;
use super::packet_log::{LogTx, Record};
use super::socket::{take_rx_drops, Receiver, Sender};
use linkem::direction::DelayAgg;
use linkem::packet_log::Fate;
use linkem::stats::{ShellExtras, StatsTracker};
use linkem::{Direction, Event};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

const S: u64 = 1_000_000_000;
/// Longest sleep, so a stop request is seen promptly.
const MAX_SLEEP_NS: u64 = 20_000_000;
/// Read at most this many batches before serving the output side again.
const RX_BATCHES_PER_ROUND: usize = 4;

/// Receive coalescing window for dense traffic (see `Coalescer`).
const COALESCE_NS: u64 = 50_000;
/// Traffic counts as dense only while frames keep coming within this time.
const DENSE_HOLD_NS: u64 = 1_000_000;

/// Interrupt moderation in userspace: when frames arrived at more than one per
/// `COALESCE_NS` on average over the last `DENSE_WINDOW_NS` (≈ 20 000 frames/s), the thread
/// sleeps `COALESCE_NS` at a time instead of waking for every frame, so each wake-up reads a
/// batch. Short bursts (a video frame's packets) do not count; sparse traffic keeps
/// immediate wake-ups; `DENSE_HOLD_NS` without frames switches back at once.
#[derive(Default)]
struct Coalescer {
    last_rx_ns: u64,
    window_start_ns: u64,
    window_frames: u64,
    dense: bool,
}

/// Length of the window over which the frame rate is judged.
const DENSE_WINDOW_NS: u64 = 10_000_000;

impl Coalescer {
    fn on_receive(&mut self, now_ns: u64, n: usize) {
        if n == 0 {
            return;
        }
        self.window_frames += n as u64;
        self.last_rx_ns = now_ns;
        let elapsed = now_ns.saturating_sub(self.window_start_ns);
        if elapsed >= DENSE_WINDOW_NS {
            self.dense = self.window_frames * COALESCE_NS >= elapsed;
            self.window_start_ns = now_ns;
            self.window_frames = 0;
        }
    }

    fn dense(&self, now_ns: u64) -> bool {
        self.dense && now_ns.saturating_sub(self.last_rx_ns) < DENSE_HOLD_NS
    }
}

pub struct Forwarder {
    pub name: &'static str,
    pub core: Direction<Vec<u8>>,
    pub rx: OwnedFd,
    pub tx: OwnedFd,
    pub buf_bytes: usize,
    /// CLOCK_MONOTONIC ns of t = 0.
    pub epoch_ns: u64,
    /// Stats lines go to the writer thread (file I/O never stalls forwarding).
    pub stats: mpsc::Sender<String>,
    pub log: LogTx,
    pub stop: Arc<AtomicBool>,
    /// SCHED_FIFO priority for this thread (None: normal scheduling).
    pub rt_prio: Option<i32>,
    /// When to wake up (batched departures, lazy reads: see `pace`).
    pub pacer: Pacer,
}

impl Forwarder {
    pub fn run(mut self) -> io::Result<()> {
        tighten_timer_slack();
        // SCHED_FIFO while traffic is sparse (precise wake-ups), normal scheduling while it is
        // dense (batches form by themselves; FIFO would preempt the traffic's own senders).
        let mut realtime = false;
        if let Some(p) = self.rt_prio {
            realtime = try_realtime(p);
            if !realtime {
                eprintln!(
                    "linkem: {}: SCHED_FIFO not permitted, using normal scheduling",
                    self.name
                );
                self.rt_prio = None;
            }
        }
        let mut receiver = Receiver::new(self.buf_bytes);
        let mut sender = Sender::new();
        let mut pool: Vec<Vec<u8>> = Vec::new();
        let mut events: Vec<Event<Vec<u8>>> = Vec::with_capacity(1024);
        let mut tracker = StatsTracker::default();
        let (rx_fd, tx_fd) = (self.rx.as_raw_fd(), self.tx.as_raw_fd());
        let mut tx_errors = 0u64;
        let (mut late_interval, mut late_total) = (DelayAgg::default(), DelayAgg::default());
        // Frames dropped before forwarding started do not count.
        take_rx_drops(rx_fd);
        let mut rx_drops = 0u64;
        let mut next_stats_ns = S;
        let mut coalesce = Coalescer::default();
        // The latest time handed to the core: frames stamped earlier (read late, or stamped
        // just before the previous poll) enter at this time, so the core's clock never goes
        // back.
        let mut core_now = 0u64;
        while !self.stop.load(Ordering::Relaxed) {
            let mut drained = false;
            let rt_to_mono = realtime_to_monotonic_offset();
            for _ in 0..RX_BATCHES_PER_ROUND {
                let now = monotonic_ns().saturating_sub(self.epoch_ns);
                let core = &mut self.core;
                let epoch = self.epoch_ns;
                // A stamp is capped at the clock read after recvmmsg returned (every frame it
                // read was stamped before then), not at `now`: a frame stamped between `now`
                // and the call would enter the core early and leave before its delay (seen
                // under TCG as a 25 ms link's minimum of 24.95 ms).
                let mut read_at: Option<u64> = None;
                let n = receiver.recv(rx_fd, &mut pool, |frame, wire_len, stamp| {
                    let bound =
                        *read_at.get_or_insert_with(|| monotonic_ns().saturating_sub(epoch));
                    let at = stamp.map_or(bound, |rt| {
                        rt.wrapping_add(rt_to_mono).saturating_sub(epoch).min(bound)
                    });
                    core_now = core_now.max(at);
                    core.enqueue(core_now, frame, wire_len as u64, &mut events);
                })?;
                coalesce.on_receive(now, n);
                if n < super::socket::BATCH {
                    drained = true;
                    break;
                }
            }
            let now = monotonic_ns().saturating_sub(self.epoch_ns).max(core_now);
            core_now = now;
            // Only frames whose exit time has come leave: never early (a packet cannot beat
            // its propagation delay); batching makes a frame at most `batch_ns` late.
            self.core.poll(now, &mut events);
            for ev in events.drain(..) {
                match ev {
                    Event::Sent { pkt, at_ns } => {
                        let late = now.saturating_sub(at_ns);
                        late_interval.add(late);
                        late_total.add(late);
                        if self.log.enabled() {
                            self.log.log(Record {
                                dir: self.name,
                                arrival_ns: pkt.arrival_ns,
                                at_ns,
                                bytes: pkt.bytes,
                                fate: Fate::Sent,
                            });
                        }
                        sender.frames.push(pkt.payload);
                        if sender.is_full() {
                            tx_errors += sender.flush(tx_fd, &mut pool);
                        }
                    }
                    Event::Dropped { pkt, at_ns, cause } => {
                        if self.log.enabled() {
                            self.log.log(Record {
                                dir: self.name,
                                arrival_ns: pkt.arrival_ns,
                                at_ns,
                                bytes: pkt.bytes,
                                fate: Fate::Dropped(cause),
                            });
                        }
                        pool.push(pkt.payload);
                    }
                }
            }
            let failed = sender.flush(tx_fd, &mut pool);
            if failed > 0 && self.log.enabled() {
                self.log.log(Record {
                    dir: self.name,
                    arrival_ns: now,
                    at_ns: now,
                    bytes: 0,
                    fate: Fate::TxError,
                });
            }
            tx_errors += failed;
            if now >= next_stats_ns {
                let delay = self.core.take_interval_delay();
                rx_drops += take_rx_drops(rx_fd);
                let extras = ShellExtras {
                    rx_drops,
                    tx_errors,
                    log_dropped: self.log.dropped(),
                };
                let line = tracker.interval_line(
                    (next_stats_ns / S) as f64,
                    self.name,
                    self.core.counters(),
                    delay,
                    self.core.queue_bytes(),
                    extras,
                    std::mem::take(&mut late_interval),
                );
                self.write_stats(&line)?;
                next_stats_ns += S * ((now - next_stats_ns) / S + 1);
            }
            if drained {
                let deadline = next_stats_ns.min(now + MAX_SLEEP_NS);
                let departure = self.core.batch_departure_ns(self.pacer.batch_ns);
                let plan = self.pacer.plan(now, departure, deadline);
                let now = monotonic_ns().saturating_sub(self.epoch_ns);
                let dense = coalesce.dense(now);
                if let Some(p) = self.rt_prio {
                    if dense == realtime {
                        realtime = if dense {
                            !set_normal()
                        } else {
                            try_realtime(p)
                        };
                    }
                }
                if dense && plan.watch_rx {
                    // Dense traffic that would wake the thread per frame (no delay to read
                    // lazily within): sleep a short fixed window instead.
                    let wake = plan.until_ns.min(now + COALESCE_NS);
                    if wake > now {
                        wait_readable(-1, wake - now);
                    }
                } else if plan.until_ns > now {
                    let fd = if plan.watch_rx { rx_fd } else { -1 };
                    wait_readable(fd, plan.until_ns - now);
                }
            }
        }
        let now = monotonic_ns().saturating_sub(self.epoch_ns);
        rx_drops += take_rx_drops(rx_fd);
        let extras = ShellExtras {
            rx_drops,
            tx_errors,
            log_dropped: self.log.dropped(),
        };
        let line = tracker.final_line(
            now as f64 / 1e9,
            self.name,
            self.core.counters(),
            self.core.queue_bytes(),
            extras,
            late_total,
        );
        self.write_stats(&line)
    }

    fn write_stats(&self, line: &str) -> io::Result<()> {
        self.stats
            .send(line.to_string())
            .map_err(|_| io::Error::other("the stats writer stopped"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalescer_needs_sustained_rate_not_bursts() {
        let mut c = Coalescer::default();
        // A 40-frame burst every 10 ms (a video frame): 4 000 frames/s, stays sparse.
        for k in 0..20u64 {
            c.on_receive(k * 10_000_000 + 1, 40);
            assert!(!c.dense(k * 10_000_000 + 2));
        }
        // 100 000 frames/s sustained for 20 ms: dense.
        let t0 = 300_000_000;
        for i in 0..2000u64 {
            c.on_receive(t0 + i * 10_000, 1);
        }
        let t1 = t0 + 2000 * 10_000;
        assert!(c.dense(t1));
        // 1 ms of silence: back to immediate wake-ups.
        assert!(!c.dense(t1 + DENSE_HOLD_NS));
    }
}
