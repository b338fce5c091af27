//! UDP sockets for lkprobe.

use std::io;
use std::mem::size_of;
use std::net::{Ipv4Addr, UdpSocket};
use std::os::fd::AsRawFd;

pub const BATCH: usize = 64;
/// Ethernet (14) + IPv4 (20) + UDP (8) header bytes around a payload.
pub const OVERHEAD_BYTES: usize = 42;

pub fn setopt(s: &UdpSocket, level: i32, opt: i32, val: libc::c_int) -> io::Result<()> {
    // SAFETY: pointer to a c_int of the given size.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            opt,
            &val as *const _ as *const libc::c_void,
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A socket bound to `port` on every address, 32 MiB receive buffer, kernel receive stamps.
pub fn bind_receiver(port: u16) -> io::Result<UdpSocket> {
    let s = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, port))
        .map_err(|e| io::Error::new(e.kind(), format!("bind UDP port {port}: {e}")))?;
    let buf = 32 << 20;
    if setopt(&s, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, buf).is_err() {
        setopt(&s, libc::SOL_SOCKET, libc::SO_RCVBUF, buf)?;
    }
    setopt(&s, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
    s.set_read_timeout(Some(std::time::Duration::from_millis(100)))?;
    Ok(s)
}

/// A socket connected to `dst:port` with a 4 MiB send buffer.
pub fn connect_sender(dst: Ipv4Addr, port: u16) -> io::Result<UdpSocket> {
    let s = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))?;
    s.connect((dst, port))
        .map_err(|e| io::Error::new(e.kind(), format!("connect to {dst}:{port}: {e}")))?;
    setopt(&s, libc::SOL_SOCKET, libc::SO_SNDBUF, 4 << 20)?;
    Ok(s)
}
