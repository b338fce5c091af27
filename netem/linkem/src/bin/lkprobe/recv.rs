//! The receiver: one thread per flow, `recvmmsg` batches with the kernel's receive stamps.

use crate::args::{RecvArgs, HEADER_BYTES};
use crate::clock::{kernel_stamp_ns, monotonic_ns, realtime_ns};
use crate::udp::{bind_receiver, BATCH, OVERHEAD_BYTES};
use std::io::{self, Write};
use std::mem::{size_of, zeroed};
use std::net::UdpSocket;
use std::os::fd::AsRawFd;

const BUF_BYTES: usize = 2048;
const CMSG_BYTES: usize = 64;

#[derive(Default)]
struct FlowResult {
    received: u64,
    wire_bytes: u64,
    /// Highest sequence number seen + 1.
    seq_end: u64,
    /// (seq, send_ns, recv_ns) per packet, only with --samples.
    samples: Vec<[i64; 3]>,
    delays_us: Vec<u32>,
}

fn run_flow(a: &RecvArgs, sock: UdpSocket) -> io::Result<FlowResult> {
    let mut bufs = vec![[0u8; BUF_BYTES]; BATCH];
    let mut cmsgs = vec![[0u8; CMSG_BYTES]; BATCH];
    // SAFETY: plain-data arrays, pointers set below before each call.
    let mut iovs: [libc::iovec; BATCH] = unsafe { zeroed() };
    let mut hdrs: [libc::mmsghdr; BATCH] = unsafe { zeroed() };
    let mut res = FlowResult::default();
    let start = monotonic_ns();
    let (limit_ns, idle_ns) = ((a.seconds * 1e9) as u64, (a.idle_s * 1e9) as u64);
    let mut last_rx: Option<u64> = None;
    loop {
        let now = monotonic_ns();
        if now - start > limit_ns || last_rx.is_some_and(|t| now - t > idle_ns) {
            break;
        }
        for i in 0..BATCH {
            iovs[i] = libc::iovec {
                iov_base: bufs[i].as_mut_ptr() as *mut libc::c_void,
                iov_len: BUF_BYTES,
            };
            let m = &mut hdrs[i].msg_hdr;
            m.msg_iov = &mut iovs[i];
            m.msg_iovlen = 1;
            m.msg_control = cmsgs[i].as_mut_ptr() as *mut libc::c_void;
            m.msg_controllen = CMSG_BYTES as _;
        }
        // SAFETY: BATCH valid headers pointing into live buffers; the socket's read timeout
        // bounds the wait for the first message.
        let n = unsafe {
            libc::recvmmsg(
                sock.as_raw_fd(),
                hdrs.as_mut_ptr(),
                BATCH as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock
                | io::ErrorKind::TimedOut
                | io::ErrorKind::Interrupted => continue,
                _ => return Err(e),
            }
        }
        last_rx = Some(monotonic_ns());
        for i in 0..n as usize {
            let len = hdrs[i].msg_len as usize;
            if len < HEADER_BYTES {
                continue;
            }
            let b = &bufs[i];
            let seq = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
            let sent = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes"));
            let recv = kernel_stamp_ns(&hdrs[i].msg_hdr).unwrap_or_else(realtime_ns);
            res.received += 1;
            res.wire_bytes += (len + OVERHEAD_BYTES) as u64;
            res.seq_end = res.seq_end.max(seq + 1);
            res.delays_us
                .push((recv.saturating_sub(sent) / 1000).min(u32::MAX as u64) as u32);
            if a.samples.is_some() {
                res.samples.push([seq as i64, sent as i64, recv as i64]);
            }
        }
    }
    Ok(res)
}

fn percentile_ms(sorted_us: &[u32], q: f64) -> Option<f64> {
    if sorted_us.is_empty() {
        return None;
    }
    let i = ((q * sorted_us.len() as f64) as usize).min(sorted_us.len() - 1);
    Some(sorted_us[i] as f64 / 1000.0)
}

pub fn run(a: &RecvArgs) -> io::Result<String> {
    let socks = (0..a.flows)
        .map(|k| bind_receiver(a.port + k))
        .collect::<io::Result<Vec<_>>>()?;
    // Bound and listening: a caller may start the sender now.
    eprintln!("lkprobe: listening");
    let results = std::thread::scope(|s| {
        let hs: Vec<_> = socks
            .into_iter()
            .map(|sock| s.spawn(move || run_flow(a, sock)))
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("receiver panicked")))
            })
            .collect::<io::Result<Vec<_>>>()
    })?;
    if let Some(path) = &a.samples {
        let mut out =
            io::BufWriter::new(std::fs::File::create(path).map_err(|e| {
                io::Error::new(e.kind(), format!("--samples {}: {e}", path.display()))
            })?);
        for (flow, r) in results.iter().enumerate() {
            for s in &r.samples {
                let rec = [flow as i64, s[0], s[1], s[2]];
                for v in rec {
                    out.write_all(&v.to_le_bytes())?;
                }
            }
        }
        out.flush()?;
    }
    let mut delays: Vec<u32> = results
        .iter()
        .flat_map(|r| r.delays_us.iter().copied())
        .collect();
    delays.sort_unstable();
    let received: u64 = results.iter().map(|r| r.received).sum();
    let seq_end: u64 = results.iter().map(|r| r.seq_end).sum();
    Ok(serde_json::json!({
        "received_packets": received,
        "received_wire_bytes": results.iter().map(|r| r.wire_bytes).sum::<u64>(),
        "seq_end": seq_end,
        "flows": a.flows,
        "sample_record_bytes": 4 * size_of::<i64>(),
        "one_way_delay_ms_median": percentile_ms(&delays, 0.5),
        "one_way_delay_ms_p99": percentile_ms(&delays, 0.99),
    })
    .to_string())
}
