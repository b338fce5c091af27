//! The socket quinn sees: `try_send` hands the datagram to the network at the current virtual
//! time (never blocks: a kernel socket with quinn's 4 MiB send buffer practically never
//! does), `poll_recv` drains the socket's receive queue; the ECN codepoint of each datagram
//! goes with it, as on the real path.

use crate::net::Shared;
use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};
use std::fmt;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

pub struct SimSocket {
    shared: Arc<Shared>,
    /// Where it receives: (node IP, port).
    key: SocketAddr,
    /// What it reports as its local address (the bound address, port filled in).
    local: SocketAddr,
}

impl SimSocket {
    pub(crate) fn new(shared: Arc<Shared>, key: SocketAddr, local: SocketAddr) -> Self {
        SimSocket { shared, key, local }
    }

    /// The address it receives at (node IP, port).
    pub fn key(&self) -> SocketAddr {
        self.key
    }
}

impl fmt::Debug for SimSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimSocket")
            .field("addr", &self.key)
            .finish()
    }
}

impl Drop for SimSocket {
    fn drop(&mut self) {
        if let Ok(mut st) = self.shared.state.lock() {
            st.unbind(self.key);
        }
    }
}

/// Always writable.
#[derive(Debug)]
struct Writable;

impl UdpPoller for Writable {
    fn poll_writable(self: Pin<&mut Self>, _cx: &mut Context) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl AsyncUdpSocket for SimSocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        Box::pin(Writable)
    }

    fn try_send(&self, t: &Transmit) -> io::Result<()> {
        let now = self.shared.origin.now_ns();
        let seg = t.segment_size.unwrap_or(t.contents.len()).max(1);
        // The driver re-plans when the runtime is next idle: a send wakes nothing.
        let mut st = self.shared.lock();
        for chunk in t.contents.chunks(seg) {
            st.send(now, self.key, t.destination, chunk, t.ecn)?;
        }
        Ok(())
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        let now = self.shared.origin.now_ns();
        let mut guard = self.shared.lock();
        let st = &mut *guard;
        let Some(s) = st.sockets.get_mut(&self.key) else {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "socket unbound",
            )));
        };
        if !s.queue.is_empty() {
            if let Some(end) = s.stall.and_then(|r| r.until_ns(now)) {
                // The reader waits for a core: the driver wakes it when the stall ends.
                s.waker = Some(cx.waker().clone());
                s.stall_wake_ns = Some(end);
                return Poll::Pending;
            }
        }
        let mut n = 0;
        while n < bufs.len().min(meta.len()) {
            let Some(d) = s.queue.pop() else { break };
            let len = d.data.len().min(bufs[n].len());
            bufs[n][..len].copy_from_slice(&d.data[..len]);
            meta[n] = RecvMeta {
                addr: d.from,
                len,
                stride: len,
                ecn: d.ecn,
                dst_ip: Some(self.key.ip()),
            };
            n += 1;
            crate::net::recycle(&mut st.spare, d.data);
        }
        if n > 0 {
            return Poll::Ready(Ok(n));
        }
        s.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local)
    }

    fn may_fragment(&self) -> bool {
        false
    }
}
