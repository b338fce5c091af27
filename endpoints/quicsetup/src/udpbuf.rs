//! The UDP socket every priolab QUIC endpoint binds, with kernel receive and send buffers
//! large enough for the largest burst the workloads send (endpoints/README.md, "Cause of the
//! stall miss": with the kernel default of 212,992 B the Guest's socket dropped 11–238 Host
//! packets per run whenever its one reader thread waited a few ms for a core).
//!
//! The size: a rise key frame at its cap (rise-core `MAX_FRAME_BYTES`, 999,999 B) is 719
//! datagrams sent back to back at the pacer's rate (up to ≈ 620 Mbit/s measured, into a
//! 1 Gbit/s link); the kernel charges a buffer with each packet's `skb` truesize, not its
//! payload: the default 212,992 B held ≈ 90 such packets here, i.e. ≈ 2,368 B per packet. One
//! capped frame is then 719 × 2,368 ≈ 1.70 MB of kernel memory. assumption: twice that (a key
//! frame plus as much again arriving while the reader is held up), rounded up to 4 MiB; the
//! kernel doubles the value for its bookkeeping and reports 8 MiB (≈ 67 ms of a 1 Gbit/s link).
//! The other workloads (moq, dtp, qpr, roq) send no larger bursts than one such frame
//! (assumption, not measured for each). The same value is used for the send buffer.
//!
//! `SO_RCVBUFFORCE`/`SO_SNDBUFFORCE` (need CAP_NET_ADMIN: the endpoints run as root in the
//! emulated hosts) ignore `net.core.rmem_max`/`wmem_max` (212,992 B on a fresh Debian); without
//! the capability the plain `SO_RCVBUF`/`SO_SNDBUF` are used, which the kernel silently caps.
//! The effective sizes (what `getsockopt` reports) are logged and kept for the summary.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Mutex;

use anyhow::{Context, Result};
use socket2::{Domain, Protocol, Socket, Type};

/// What is asked of the kernel for each of the two buffers (see the module's documentation).
pub const SOCKET_BUFFER_BYTES: usize = 4 * 1024 * 1024;

/// How a buffer size was set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferMode {
    /// `SO_*BUFFORCE`: the system maximum does not apply.
    Forced,
    /// `SO_RCVBUF`/`SO_SNDBUF` (no CAP_NET_ADMIN): capped at `net.core.[rw]mem_max`.
    Plain,
}

impl BufferMode {
    pub fn as_str(self) -> &'static str {
        match self {
            BufferMode::Forced => "forced",
            BufferMode::Plain => "plain",
        }
    }
}

/// The requested and effective (kernel-reported) buffer sizes of one endpoint's socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketBuffers {
    pub requested_bytes: usize,
    pub rcvbuf_bytes: usize,
    pub rcvbuf_mode: BufferMode,
    pub sndbuf_bytes: usize,
    pub sndbuf_mode: BufferMode,
}

impl SocketBuffers {
    /// One line for the endpoint's startup log.
    pub fn describe(&self) -> String {
        format!(
            "UDP socket buffers: rcvbuf_bytes={} ({}), sndbuf_bytes={} ({}), requested_bytes={}",
            self.rcvbuf_bytes,
            self.rcvbuf_mode.as_str(),
            self.sndbuf_bytes,
            self.sndbuf_mode.as_str(),
            self.requested_bytes
        )
    }
}

static LAST: Mutex<Option<SocketBuffers>> = Mutex::new(None);

/// The buffers of the socket this process bound last (for the endpoint's summary).
pub fn socket_buffers() -> Option<SocketBuffers> {
    *LAST.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sets `SOL_SOCKET`/`opt` to `bytes` with `setsockopt(2)`.
fn set_int_opt(sock: &Socket, opt: libc::c_int, bytes: usize) -> std::io::Result<()> {
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: the descriptor is open for `sock`'s lifetime; the value pointer and length
    // describe one c_int living on this stack frame for the duration of the call.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            std::ptr::addr_of!(v).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The forced option first; on EPERM (no CAP_NET_ADMIN) the plain one.
fn set_buffer(
    sock: &Socket,
    force_opt: libc::c_int,
    plain: impl Fn(&Socket, usize) -> std::io::Result<()>,
    bytes: usize,
) -> std::io::Result<BufferMode> {
    match set_int_opt(sock, force_opt, bytes) {
        Ok(()) => Ok(BufferMode::Forced),
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
            plain(sock, bytes)?;
            Ok(BufferMode::Plain)
        }
        Err(e) => Err(e),
    }
}

/// A UDP socket bound to `bind` with both buffers set to `bytes` (forced when permitted).
pub fn bind_udp(bind: SocketAddr, bytes: usize) -> Result<(std::net::UdpSocket, SocketBuffers)> {
    let sock = Socket::new(Domain::for_address(bind), Type::DGRAM, Some(Protocol::UDP))
        .context("creating the UDP socket")?;
    let rcvbuf_mode = set_buffer(
        &sock,
        libc::SO_RCVBUFFORCE,
        Socket::set_recv_buffer_size,
        bytes,
    )
    .context("setting the UDP receive buffer")?;
    let sndbuf_mode = set_buffer(
        &sock,
        libc::SO_SNDBUFFORCE,
        Socket::set_send_buffer_size,
        bytes,
    )
    .context("setting the UDP send buffer")?;
    sock.bind(&bind.into())
        .with_context(|| format!("binding {bind}"))?;
    let buffers = SocketBuffers {
        requested_bytes: bytes,
        rcvbuf_bytes: sock.recv_buffer_size().context("reading SO_RCVBUF")?,
        rcvbuf_mode,
        sndbuf_bytes: sock.send_buffer_size().context("reading SO_SNDBUF")?,
        sndbuf_mode,
    };
    *LAST.lock().unwrap_or_else(|e| e.into_inner()) = Some(buffers);
    Ok((sock.into(), buffers))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has_cap_net_admin() -> bool {
        // CapEff bit 12 (CAP_NET_ADMIN) of this process.
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("CapEff:").map(|v| v.trim().to_string()))
            })
            .and_then(|hex| u64::from_str_radix(&hex, 16).ok())
            .is_some_and(|caps| caps & (1 << 12) != 0)
    }

    #[test]
    // One test: `socket_buffers` is process-wide and tests run in parallel.
    fn effective_buffers_are_at_least_the_requested_ones_when_permitted() {
        let (sock, b) = bind_udp("127.0.0.1:0".parse().unwrap(), SOCKET_BUFFER_BYTES).unwrap();
        assert!(sock.local_addr().unwrap().port() != 0);
        assert_eq!(b.requested_bytes, SOCKET_BUFFER_BYTES);
        if has_cap_net_admin() {
            assert_eq!(b.rcvbuf_mode, BufferMode::Forced);
            assert_eq!(b.sndbuf_mode, BufferMode::Forced);
            assert!(b.rcvbuf_bytes >= SOCKET_BUFFER_BYTES, "{b:?}");
            assert!(b.sndbuf_bytes >= SOCKET_BUFFER_BYTES, "{b:?}");
        } else {
            // Capped silently by net.core.rmem_max: the mode says so.
            assert_eq!(b.rcvbuf_mode, BufferMode::Plain, "{b:?}");
        }
        assert_eq!(socket_buffers(), Some(b));

        // 64 KiB is under every rmem_max, so both modes give exactly the doubled value: the
        // size reported is the one set on this socket, not a system default.
        let (_s, b) = bind_udp("127.0.0.1:0".parse().unwrap(), 64 * 1024).unwrap();
        assert_eq!(b.rcvbuf_bytes, 2 * 64 * 1024, "{b:?}");
        assert_eq!(b.sndbuf_bytes, 2 * 64 * 1024, "{b:?}");
        assert_eq!(socket_buffers(), Some(b));
    }
}
