//! A minimal in-memory UDP network for tests of sessions in virtual time: every datagram
//! arrives after one fixed delay (on tokio's clock, so instantly under a paused runtime),
//! nothing is lost, nothing queues. The sim site's real network (linkem's link core) is
//! `endpoints/simnet`; this one only shows that a session runs over injected sockets.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::{self, IoSliceMut};
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use quicsetup::SocketFactory;
use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};

#[derive(Default)]
struct Queue {
    packets: VecDeque<(SocketAddr, Vec<u8>)>,
    waker: Option<Waker>,
}

struct Hub {
    sockets: HashMap<SocketAddr, Arc<Mutex<Queue>>>,
    next_port: u16,
}

/// The network; [`MemNet::node`] gives one host's socket factory.
pub struct MemNet {
    hub: Arc<Mutex<Hub>>,
    delay: Duration,
}

impl MemNet {
    pub fn new(one_way_delay: Duration) -> Arc<Self> {
        Arc::new(MemNet {
            hub: Arc::new(Mutex::new(Hub {
                sockets: HashMap::new(),
                next_port: 40_000,
            })),
            delay: one_way_delay,
        })
    }

    /// The socket factory of the host with address `ip` (an unspecified bind address becomes
    /// `ip`, port 0 the next free port).
    pub fn node(self: &Arc<Self>, ip: IpAddr) -> Arc<dyn SocketFactory> {
        Arc::new(Node {
            net: self.clone(),
            ip,
        })
    }
}

struct Node {
    net: Arc<MemNet>,
    ip: IpAddr,
}

impl SocketFactory for Node {
    fn bind(&self, addr: SocketAddr) -> io::Result<Arc<dyn AsyncUdpSocket>> {
        let mut hub = self.net.hub.lock().unwrap();
        let ip = if addr.ip().is_unspecified() {
            self.ip
        } else {
            addr.ip()
        };
        let port = if addr.port() == 0 {
            hub.next_port += 1;
            hub.next_port
        } else {
            addr.port()
        };
        let local = SocketAddr::new(ip, port);
        if hub.sockets.contains_key(&local) {
            return Err(io::Error::new(io::ErrorKind::AddrInUse, local.to_string()));
        }
        let queue = Arc::new(Mutex::new(Queue::default()));
        hub.sockets.insert(local, queue.clone());
        Ok(Arc::new(MemSocket {
            net: self.net.clone(),
            local,
            queue,
        }))
    }
}

struct MemSocket {
    net: Arc<MemNet>,
    local: SocketAddr,
    queue: Arc<Mutex<Queue>>,
}

impl fmt::Debug for MemSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MemSocket({})", self.local)
    }
}

#[derive(Debug)]
struct AlwaysWritable;

impl UdpPoller for AlwaysWritable {
    fn poll_writable(self: Pin<&mut Self>, _cx: &mut Context) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl AsyncUdpSocket for MemSocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        Box::pin(AlwaysWritable)
    }

    fn try_send(&self, t: &Transmit) -> io::Result<()> {
        let dest = self
            .net
            .hub
            .lock()
            .unwrap()
            .sockets
            .get(&t.destination)
            .cloned();
        let Some(dest) = dest else {
            return Ok(()); // nobody there: the datagram is lost, as on a real network
        };
        let (from, bytes, delay) = (self.local, t.contents.to_vec(), self.net.delay);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let mut q = dest.lock().unwrap();
            q.packets.push_back((from, bytes));
            if let Some(w) = q.waker.take() {
                w.wake();
            }
        });
        Ok(())
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        let mut q = self.queue.lock().unwrap();
        let mut n = 0;
        while n < bufs.len().min(meta.len()) {
            let Some((from, bytes)) = q.packets.pop_front() else {
                break;
            };
            let len = bytes.len().min(bufs[n].len());
            bufs[n][..len].copy_from_slice(&bytes[..len]);
            meta[n] = RecvMeta {
                addr: from,
                len,
                stride: len,
                ecn: None,
                dst_ip: Some(self.local.ip()),
            };
            n += 1;
        }
        if n > 0 {
            return Poll::Ready(Ok(n));
        }
        q.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local)
    }
}
