//! AF_PACKET sockets: a receiving socket per interface (ETH_P_ALL, promiscuous, own outgoing
//! frames ignored, large buffer) and a sending socket per interface (protocol 0, so it
//! receives nothing; PACKET_QDISC_BYPASS). Batched I/O with recvmmsg/sendmmsg.

use super::clock::kernel_stamp_ns;
use std::ffi::CString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub const BATCH: usize = 64;
const SOCK_BUF_BYTES: libc::c_int = 32 << 20;

fn cvt(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

pub fn ifindex(name: &str) -> io::Result<i32> {
    let c = CString::new(name).map_err(|_| io::Error::other("bad interface name"))?;
    // SAFETY: valid C string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("interface {name:?} not found"),
        ));
    }
    Ok(i as i32)
}

fn setopt(fd: i32, level: i32, opt: i32, val: libc::c_int, what: &str) -> io::Result<()> {
    // SAFETY: pointer to a c_int of the given size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            &val as *const _ as *const libc::c_void,
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    cvt(r, what).map(|_| ())
}

fn bind(fd: i32, ifindex: i32, proto_be: u16, name: &str) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain data.
    let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = proto_be;
    sll.sll_ifindex = ifindex;
    // SAFETY: valid sockaddr_ll and its size.
    let r = unsafe {
        libc::bind(
            fd,
            &sll as *const _ as *const libc::sockaddr,
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    cvt(r, &format!("bind AF_PACKET socket to {name}")).map(|_| ())
}

fn packet_socket() -> io::Result<OwnedFd> {
    // Protocol 0 at creation: nothing is queued before bind() picks interface and protocol.
    // SAFETY: plain socket call.
    let fd = cvt(
        unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) },
        "socket(AF_PACKET) (needs root/CAP_NET_RAW)",
    )?;
    // SAFETY: fresh fd we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Receiving socket on `name`: every frame the interface receives, none it sends.
pub fn open_rx(name: &str) -> io::Result<OwnedFd> {
    let idx = ifindex(name)?;
    let s = packet_socket()?;
    let fd = s.as_raw_fd();
    // Kernels before 4.20 lack it; the sll_pkttype check below covers them.
    let _ = setopt(
        fd,
        libc::SOL_PACKET,
        libc::PACKET_IGNORE_OUTGOING,
        1,
        "PACKET_IGNORE_OUTGOING",
    );
    if setopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_RCVBUFFORCE,
        SOCK_BUF_BYTES,
        "SO_RCVBUFFORCE",
    )
    .is_err()
    {
        setopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            SOCK_BUF_BYTES,
            "SO_RCVBUF",
        )?;
    }
    // Kernel receive stamps: frames may be read late and still enter the model on time.
    setopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_TIMESTAMPNS,
        1,
        "SO_TIMESTAMPNS",
    )?;
    bind(fd, idx, (libc::ETH_P_ALL as u16).to_be(), name)?;
    // SAFETY: packet_mreq is plain data.
    let mut mr: libc::packet_mreq = unsafe { zeroed() };
    mr.mr_ifindex = idx;
    mr.mr_type = libc::PACKET_MR_PROMISC as u16;
    // SAFETY: valid packet_mreq and its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_ADD_MEMBERSHIP,
            &mr as *const _ as *const libc::c_void,
            size_of::<libc::packet_mreq>() as libc::socklen_t,
        )
    };
    cvt(r, &format!("set {name} promiscuous"))?;
    Ok(s)
}

/// Sending socket on `name`; bound with protocol 0 so it receives nothing.
pub fn open_tx(name: &str) -> io::Result<OwnedFd> {
    let idx = ifindex(name)?;
    let s = packet_socket()?;
    let fd = s.as_raw_fd();
    if setopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_SNDBUFFORCE,
        SOCK_BUF_BYTES,
        "SO_SNDBUFFORCE",
    )
    .is_err()
    {
        setopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            SOCK_BUF_BYTES,
            "SO_SNDBUF",
        )?;
    }
    let _ = setopt(
        fd,
        libc::SOL_PACKET,
        libc::PACKET_QDISC_BYPASS,
        1,
        "PACKET_QDISC_BYPASS",
    );
    bind(fd, idx, 0, name)?;
    Ok(s)
}

/// Batched receive into pooled buffers of `buf_bytes`.
pub struct Receiver {
    buf_bytes: usize,
    bufs: Vec<Vec<u8>>,
    iovs: Vec<libc::iovec>,
    addrs: Vec<libc::sockaddr_ll>,
    cmsgs: Vec<[u64; CMSG_WORDS]>,
    hdrs: Vec<libc::mmsghdr>,
}

/// Control buffer per message (one SCM_TIMESTAMPNS), in u64 words for alignment.
const CMSG_WORDS: usize = 8;

// SAFETY: the raw pointers inside point into buffers owned by the Receiver itself.
unsafe impl Send for Receiver {}

impl Receiver {
    pub fn new(buf_bytes: usize) -> Self {
        let bufs: Vec<Vec<u8>> = (0..BATCH).map(|_| vec![0u8; buf_bytes]).collect();
        // SAFETY: plain data.
        let iovs = vec![unsafe { zeroed::<libc::iovec>() }; BATCH];
        let addrs = vec![unsafe { zeroed::<libc::sockaddr_ll>() }; BATCH];
        let cmsgs = vec![[0u64; CMSG_WORDS]; BATCH];
        let hdrs = vec![unsafe { zeroed::<libc::mmsghdr>() }; BATCH];
        let mut r = Receiver {
            buf_bytes,
            bufs,
            iovs,
            addrs,
            cmsgs,
            hdrs,
        };
        for i in 0..BATCH {
            r.wire(i);
        }
        r
    }

    fn wire(&mut self, i: usize) {
        self.iovs[i].iov_base = self.bufs[i].as_mut_ptr() as *mut libc::c_void;
        self.iovs[i].iov_len = self.bufs[i].len();
        let h = &mut self.hdrs[i].msg_hdr;
        h.msg_iov = &mut self.iovs[i];
        h.msg_iovlen = 1;
        h.msg_name = &mut self.addrs[i] as *mut _ as *mut libc::c_void;
        h.msg_control = self.cmsgs[i].as_mut_ptr() as *mut libc::c_void;
    }

    /// Receive up to BATCH frames without blocking; `f(frame, wire_len, stamp)` gets each
    /// frame (truncated to the buffer when `wire_len` is larger) and the kernel's receive
    /// time (CLOCK_REALTIME ns, if stamped). Returns how many were read.
    pub fn recv(
        &mut self,
        fd: i32,
        pool: &mut Vec<Vec<u8>>,
        mut f: impl FnMut(Vec<u8>, usize, Option<u64>),
    ) -> io::Result<usize> {
        for h in self.hdrs.iter_mut() {
            h.msg_hdr.msg_namelen = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            h.msg_hdr.msg_controllen = (CMSG_WORDS * 8) as _;
            h.msg_len = 0;
        }
        // SAFETY: hdrs/iovs/addrs/bufs are wired and alive for the call.
        let n = unsafe {
            libc::recvmmsg(
                fd,
                self.hdrs.as_mut_ptr(),
                BATCH as libc::c_uint,
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        let n = n as usize;
        for i in 0..n {
            if self.addrs[i].sll_pkttype == libc::PACKET_OUTGOING {
                continue;
            }
            let wire_len = self.hdrs[i].msg_len as usize;
            let stamp = kernel_stamp_ns(&self.hdrs[i].msg_hdr);
            let mut fresh = pool.pop().unwrap_or_default();
            fresh.resize(self.buf_bytes, 0);
            let mut frame = std::mem::replace(&mut self.bufs[i], fresh);
            frame.truncate(wire_len.min(self.buf_bytes));
            self.wire(i);
            f(frame, wire_len, stamp);
        }
        Ok(n)
    }
}

/// Batched send of whole frames.
pub struct Sender {
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    pub frames: Vec<Vec<u8>>,
}

// SAFETY: pointers are rebuilt from `frames` before every send.
unsafe impl Send for Sender {}

impl Sender {
    pub fn new() -> Self {
        Sender {
            // SAFETY: plain data.
            iovs: vec![unsafe { zeroed::<libc::iovec>() }; BATCH],
            hdrs: vec![unsafe { zeroed::<libc::mmsghdr>() }; BATCH],
            frames: Vec::with_capacity(BATCH),
        }
    }

    pub fn is_full(&self) -> bool {
        self.frames.len() >= BATCH
    }

    /// Send every queued frame; frames go back to `pool`. Returns the number that failed.
    pub fn flush(&mut self, fd: i32, pool: &mut Vec<Vec<u8>>) -> u64 {
        let mut failed = 0;
        let mut start = 0;
        let n = self.frames.len();
        while start < n {
            let cnt = n - start;
            for k in 0..cnt {
                let f = &mut self.frames[start + k];
                self.iovs[k].iov_base = f.as_mut_ptr() as *mut libc::c_void;
                self.iovs[k].iov_len = f.len();
                let h = &mut self.hdrs[k].msg_hdr;
                h.msg_iov = &mut self.iovs[k];
                h.msg_iovlen = 1;
            }
            // SAFETY: cnt wired headers pointing to live frames.
            let r = unsafe {
                libc::sendmmsg(
                    fd,
                    self.hdrs.as_mut_ptr(),
                    cnt as libc::c_uint,
                    libc::MSG_DONTWAIT,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // The first frame failed (ENOBUFS, EAGAIN, EMSGSIZE…): drop it, go on.
                failed += 1;
                start += 1;
            } else {
                start += r as usize;
            }
        }
        pool.append(&mut self.frames);
        failed
    }
}

impl Default for Sender {
    fn default() -> Self {
        Self::new()
    }
}

/// Frames the kernel dropped on this receiving socket (buffer full) since the last call.
pub fn take_rx_drops(fd: i32) -> u64 {
    #[repr(C)]
    #[derive(Default)]
    struct TpacketStats {
        tp_packets: u32,
        tp_drops: u32,
    }
    let mut st = TpacketStats::default();
    let mut len = size_of::<TpacketStats>() as libc::socklen_t;
    // SAFETY: valid buffer and length for PACKET_STATISTICS (reading resets the counters).
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            &mut st as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    if r == 0 {
        st.tp_drops as u64
    } else {
        0
    }
}
