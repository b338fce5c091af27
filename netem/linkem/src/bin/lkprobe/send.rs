//! The sender: one thread per flow, each paced on CLOCK_MONOTONIC, sending every due packet
//! of a wake-up in `sendmmsg` batches.

use crate::args::SendArgs;
use crate::clock::{monotonic_ns, realtime_ns, sleep_until};
use crate::udp::{connect_sender, BATCH, OVERHEAD_BYTES};
use std::io;
use std::mem::zeroed;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;

/// Evenly paced traffic wakes at most this often (due packets leave together).
const TICK_NS: u64 = 100_000;

#[derive(Default, Clone, Copy)]
struct FlowResult {
    sent: u64,
    errors: u64,
}

/// The schedule of one flow: how many packets are due by `t_ns` after the start.
struct Schedule {
    /// Evenly paced: ns between packets. Frames: ns between frames.
    interval_ns: f64,
    /// Packets per frame (frames only).
    per_frame: u64,
    frames: bool,
}

impl Schedule {
    fn new(rate_bps: f64, payload_bytes: usize, fps: f64) -> Self {
        let wire_bits = ((payload_bytes + OVERHEAD_BYTES) * 8) as f64;
        if fps > 0.0 {
            let per_frame = (rate_bps / fps / wire_bits).round().max(1.0) as u64;
            Schedule {
                interval_ns: 1e9 / fps,
                per_frame,
                frames: true,
            }
        } else {
            Schedule {
                interval_ns: wire_bits / rate_bps * 1e9,
                per_frame: 1,
                frames: false,
            }
        }
    }

    /// Packets due by `t_ns` (the first frame or packet is due at 0).
    fn due(&self, t_ns: u64) -> u64 {
        (t_ns as f64 / self.interval_ns).floor() as u64 * self.per_frame + self.per_frame
    }

    /// When the packet after `sent` packets is due.
    fn next_due_ns(&self, sent: u64) -> u64 {
        let slot = if self.frames {
            sent / self.per_frame
        } else {
            sent
        };
        (slot as f64 * self.interval_ns).ceil() as u64
    }
}

fn send_batch(sock: &UdpSocket, bufs: &mut [Vec<u8>], seq0: u64, n: usize) -> (u64, u64) {
    let stamp = realtime_ns();
    for (i, b) in bufs.iter_mut().take(n).enumerate() {
        b[..8].copy_from_slice(&(seq0 + i as u64).to_le_bytes());
        b[8..16].copy_from_slice(&stamp.to_le_bytes());
    }
    // SAFETY: iovecs and headers point into `bufs`, alive for the call.
    let mut iovs: [libc::iovec; BATCH] = unsafe { zeroed() };
    let mut hdrs: [libc::mmsghdr; BATCH] = unsafe { zeroed() };
    for i in 0..n {
        iovs[i] = libc::iovec {
            iov_base: bufs[i].as_mut_ptr() as *mut libc::c_void,
            iov_len: bufs[i].len(),
        };
        hdrs[i].msg_hdr.msg_iov = &mut iovs[i];
        hdrs[i].msg_hdr.msg_iovlen = 1;
    }
    let mut done = 0usize;
    let mut errors = 0u64;
    while done < n {
        // SAFETY: valid headers for n - done messages.
        let r = unsafe {
            libc::sendmmsg(
                sock.as_raw_fd(),
                hdrs[done..].as_mut_ptr(),
                (n - done) as libc::c_uint,
                0,
            )
        };
        if r <= 0 {
            // A refused datagram (e.g. ENOBUFS) is counted and skipped.
            errors += 1;
            done += 1;
        } else {
            done += r as usize;
        }
    }
    (n as u64 - errors, errors)
}

fn run_flow(a: &SendArgs, flow: u16, start_ns: u64) -> io::Result<FlowResult> {
    let sock = connect_sender(a.dst, a.port + flow)?;
    let sched = Schedule::new(a.rate_mbps * 1e6 / a.flows as f64, a.payload_bytes, a.fps);
    let total = sched.due((a.seconds * 1e9) as u64 - 1);
    let mut bufs: Vec<Vec<u8>> = (0..BATCH).map(|_| vec![0u8; a.payload_bytes]).collect();
    let mut res = FlowResult::default();
    let mut seq = 0u64;
    while seq < total {
        let now = monotonic_ns().saturating_sub(start_ns);
        let due = sched.due(now).min(total);
        while seq < due {
            let n = ((due - seq) as usize).min(BATCH);
            let (ok, err) = send_batch(&sock, &mut bufs, seq, n);
            res.sent += ok;
            res.errors += err;
            seq += n as u64;
        }
        if seq >= total {
            break;
        }
        let next = sched
            .next_due_ns(seq)
            .max(now + if sched.frames { 0 } else { TICK_NS });
        sleep_until(start_ns + next);
    }
    Ok(res)
}

pub fn run(a: &SendArgs) -> io::Result<String> {
    let start_ns = monotonic_ns() + 1_000_000;
    let results = std::thread::scope(|s| {
        let hs: Vec<_> = (0..a.flows)
            .map(|k| s.spawn(move || run_flow(a, k, start_ns)))
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("sender panicked")))
            })
            .collect::<io::Result<Vec<_>>>()
    })?;
    let elapsed_s = (monotonic_ns().saturating_sub(start_ns)) as f64 / 1e9;
    let sent: u64 = results.iter().map(|r| r.sent).sum();
    let errors: u64 = results.iter().map(|r| r.errors).sum();
    let wire = (a.payload_bytes + OVERHEAD_BYTES) as u64;
    Ok(serde_json::json!({
        "sent_packets": sent,
        "send_errors": errors,
        "sent_wire_bytes": sent * wire,
        "seconds": a.seconds,
        "elapsed_s": elapsed_s,
        // Over the time it took: a sender that fell behind shows a lower offered rate.
        "offered_mbps": (sent * wire * 8) as f64 / a.seconds.max(elapsed_s) / 1e6,
        "flows": a.flows,
        "fps": a.fps,
        "payload_bytes": a.payload_bytes,
    })
    .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_schedule_matches_rate() {
        // 1442-byte frames at 11.536 Mbit/s: one every 1 ms.
        let s = Schedule::new(11.536e6, 1400, 0.0);
        assert_eq!(s.due(0), 1);
        assert_eq!(s.due(999_999), 1);
        assert_eq!(s.due(1_000_000), 2);
        assert_eq!(s.due(999_999_999), 1000);
        assert_eq!(s.next_due_ns(1), 1_000_000);
    }

    #[test]
    fn frame_schedule_sends_whole_frames() {
        // 30 Mbit/s at 30 fps: 1 Mbit per frame = 87 frames of 1442 bytes.
        let s = Schedule::new(30e6, 1400, 30.0);
        assert_eq!(s.per_frame, 87);
        assert_eq!(s.due(0), 87);
        assert_eq!(s.due(33_333_332), 87);
        assert_eq!(s.due(33_333_334), 174);
        assert_eq!(s.next_due_ns(87), 33_333_334);
        assert_eq!(s.next_due_ns(100), 33_333_334);
    }
}
