//! The network: nodes, bound sockets, the two link directions, and routing between them.

use crate::capture::{ecn_bits, Capture, CaptureSpec};
use crate::clock::Origin;
use crate::packet_log::PacketLog;
use crate::rcvbuf::{Datagram, RecvCounters, RecvQueue};
use crate::runtime::SimRuntime;
use crate::socket::SimSocket;
use crate::stats::{StatsOut, StatsWriter, DIR_NAMES};
use crate::FRAME_OVERHEAD_BYTES;
use linkem::packet_log::{write_record, Fate};
use linkem::{Direction, Event};
use quinn::udp::EcnCodepoint;
use std::collections::BTreeMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Waker;
use tokio::time::Sleep;

/// Which side of the link a node is on: "a" is linkem's iface_a (the guests' side), so a
/// datagram from side a to side b crosses `a_to_b`, the uplink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// One node: its address, side, optional receive buffer per socket (`sk_rcvbuf` bytes, see
/// [`crate::rcvbuf`]; None: unbounded) and optional reader stalls.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    pub addr: IpAddr,
    pub side: Side,
    pub recv_buffer_bytes: Option<u64>,
    pub reader_stall: Option<ReaderStall>,
}

/// A crude model of a reader that waits for a core: every `every_ns`, for `for_ns`, the
/// node's sockets hand nothing to their readers (datagrams keep arriving into the receive
/// buffer). Virtual time has no CPU time of its own; this puts back the stalls that made a
/// small receive buffer overflow on the real path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReaderStall {
    pub every_ns: u64,
    pub for_ns: u64,
}

impl ReaderStall {
    /// When the stall holding `now_ns` ends (None: no stall at `now_ns`).
    pub fn until_ns(&self, now_ns: u64) -> Option<u64> {
        let phase = now_ns % self.every_ns.max(1);
        (phase < self.for_ns).then(|| now_ns - phase + self.for_ns)
    }
}

#[derive(Debug, Clone)]
pub struct SimNetConfig {
    /// The link, as linkem parses it (its `seed` seeds the directions, as in real linkem).
    pub link: linkem::Config,
    pub nodes: Vec<NodeSpec>,
    pub stats: Option<StatsOut>,
    /// linkem's per-packet log (`--packet-log`), if asked for.
    pub packet_log: Option<PathBuf>,
}

/// A datagram crossing the link.
#[derive(Debug)]
pub(crate) struct Pkt {
    pub from: SocketAddr,
    pub to: SocketAddr,
    pub data: Vec<u8>,
    /// The ECN codepoint the sender set (quinn: ECT(0) while it trusts the path). The real
    /// path keeps it: the kernel sends it in the IP header, veth and linkem forward the frame
    /// untouched (linkem never marks CE) and the receiver's socket reports it (IP_RECVTOS).
    pub ecn: Option<EcnCodepoint>,
}

struct NodeState {
    side: Side,
    recv_buffer_bytes: Option<u64>,
    reader_stall: Option<ReaderStall>,
    next_port: u16,
}

pub(crate) struct SockState {
    pub queue: RecvQueue,
    pub waker: Option<Waker>,
    pub datagrams_sent: u64,
    pub stall: Option<ReaderStall>,
    /// A reader held by a stall waits to be woken at this time.
    pub stall_wake_ns: Option<u64>,
}

/// Counters of one address (every socket that was bound to it, summed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketReport {
    pub recv: RecvCounters,
    pub datagrams_sent: u64,
}

pub(crate) struct State {
    pub dirs: [Direction<Pkt>; 2],
    nodes: BTreeMap<IpAddr, NodeState>,
    pub sockets: BTreeMap<SocketAddr, SockState>,
    closed: BTreeMap<SocketAddr, SocketReport>,
    pub stats: StatsWriter,
    packet_log: Option<PacketLog>,
    capture: Option<Capture>,
    events: Vec<Event<Pkt>>,
    mtu_bytes: u64,
    /// Datagrams to an address of a node with no socket bound there.
    no_socket_drops: u64,
    /// Datagrams to an address no node has.
    unroutable: u64,
    finished: bool,
    errors: Vec<String>,
    /// Buffers of datagrams already read, for the next sends (a send copies its datagram).
    pub spare: Vec<Vec<u8>>,
}

/// How many read datagrams' buffers [`State::spare`] keeps.
const SPARE_BUFFERS: usize = 256;

/// Keep a read datagram's buffer in `spare` for a later send.
pub(crate) fn recycle(spare: &mut Vec<Vec<u8>>, buf: Vec<u8>) {
    if spare.len() < SPARE_BUFFERS {
        spare.push(buf);
    }
}

pub(crate) struct Shared {
    pub state: Mutex<State>,
    /// The driver's timer at the link's next event's ms boundary ([`crate::driver`]).
    pub timer: Mutex<Option<Pin<Box<Sleep>>>>,
    pub origin: Origin,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("simnet state lock")
    }
}

/// The in-memory network. Cheap to clone (one shared state).
#[derive(Clone)]
pub struct SimNet {
    pub(crate) shared: Arc<Shared>,
}

/// What the link and the sockets counted, at the end.
#[derive(Debug, Clone)]
pub struct LinkReport {
    /// The final stats line of each direction (`a_to_b`, `b_to_a`), as written.
    pub final_lines: [String; 2],
    /// Per address (node IP, port), sorted.
    pub sockets: BTreeMap<SocketAddr, SocketReport>,
    pub no_socket_drops: u64,
    pub unroutable: u64,
    /// What went wrong in the network itself (a stats file that could not be written).
    pub errors: Vec<String>,
}

impl SimNet {
    /// Build the network on `rt` (see [`crate::runtime::build`]); opens the stats file.
    pub fn new(rt: &SimRuntime, cfg: &SimNetConfig) -> io::Result<SimNet> {
        let link = &cfg.link;
        let mut nodes = BTreeMap::new();
        for n in &cfg.nodes {
            let st = NodeState {
                side: n.side,
                recv_buffer_bytes: n.recv_buffer_bytes,
                reader_stall: n.reader_stall,
                next_port: EPHEMERAL_FIRST,
            };
            if nodes.insert(n.addr, st).is_some() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("two nodes have the address {}", n.addr),
                ));
            }
        }
        let state = State {
            dirs: [
                Direction::new(&link.a_to_b, link.mtu_bytes, link.seed, 0),
                Direction::new(&link.b_to_a, link.mtu_bytes, link.seed, 1),
            ],
            nodes,
            sockets: BTreeMap::new(),
            closed: BTreeMap::new(),
            stats: StatsWriter::create(cfg.stats.as_ref())?,
            packet_log: cfg
                .packet_log
                .as_deref()
                .map(PacketLog::create)
                .transpose()?,
            capture: None,
            events: Vec::new(),
            mtu_bytes: link.mtu_bytes,
            no_socket_drops: 0,
            unroutable: 0,
            finished: false,
            errors: Vec::new(),
            spare: Vec::new(),
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            timer: Mutex::new(None),
            origin: rt.origin,
        });
        // From now on the runtime drives the link whenever it is idle.
        rt.net.set(Arc::downgrade(&shared)).map_err(|_| {
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                "this runtime already drives a SimNet (one per runtime)",
            )
        })?;
        Ok(SimNet { shared })
    }

    /// The sockets of the node with address `addr` (None: no such node).
    pub fn node(&self, addr: IpAddr) -> Option<NodeNet> {
        self.shared
            .lock()
            .nodes
            .contains_key(&addr)
            .then(|| NodeNet {
                shared: self.shared.clone(),
                ip: addr,
            })
    }

    /// Capture every frame the nodes of `spec` send and receive, one pcap file per node
    /// ([`crate::capture`]). Call before anything is sent.
    pub fn capture(&self, spec: &CaptureSpec) -> io::Result<()> {
        self.shared.lock().capture = Some(Capture::create(spec)?);
        Ok(())
    }

    /// Virtual ns since the origin.
    pub fn now_ns(&self) -> u64 {
        self.shared.origin.now_ns()
    }

    /// Write the final stats lines (at the current virtual time) and return the counters.
    /// Call once, at the end; the driver stops moving packets after it.
    pub fn finish(&self) -> io::Result<LinkReport> {
        let now = self.now_ns();
        let mut st = self.shared.lock();
        st.poll(now);
        st.finished = true;
        let State {
            stats,
            dirs,
            closed,
            packet_log,
            ..
        } = &mut *st;
        let final_lines = stats.finish(now, dirs)?;
        if let Some(log) = packet_log.as_mut() {
            log.flush()?;
        }
        let mut sockets = closed.clone();
        if let Some(mut capture) = st.capture.take() {
            let errors = capture.finish();
            st.errors.extend(errors);
        }
        for (k, s) in &st.sockets {
            sockets.entry(*k).or_default().add(&s.report());
        }
        Ok(LinkReport {
            final_lines,
            sockets,
            no_socket_drops: st.no_socket_drops,
            unroutable: st.unroutable,
            errors: st.errors.clone(),
        })
    }
}

/// First port handed out for a bind to port 0 (the kernel's default ephemeral range starts
/// at 32768); assigned in order, so runs are reproducible.
const EPHEMERAL_FIRST: u16 = 32768;

impl SocketReport {
    fn add(&mut self, o: &SocketReport) {
        let (r, q) = (&mut self.recv, &o.recv);
        r.datagrams_received += q.datagrams_received;
        r.bytes_received += q.bytes_received;
        r.recv_buffer_drops += q.recv_buffer_drops;
        r.peak_charged_bytes = r.peak_charged_bytes.max(q.peak_charged_bytes);
        self.datagrams_sent += o.datagrams_sent;
    }
}

impl SockState {
    fn report(&self) -> SocketReport {
        SocketReport {
            recv: self.queue.counters,
            datagrams_sent: self.datagrams_sent,
        }
    }
}

fn err(kind: io::ErrorKind, msg: String) -> io::Error {
    io::Error::new(kind, msg)
}

impl State {
    /// Move the link to `now_ns`, delivering what leaves; how many datagrams were queued at
    /// a socket.
    pub fn poll(&mut self, now_ns: u64) -> usize {
        if self.finished {
            return 0;
        }
        let mut delivered = 0;
        for i in 0..2 {
            let mut events = std::mem::take(&mut self.events);
            self.dirs[i].poll(now_ns, &mut events);
            delivered += self.handle(i, now_ns, &mut events);
            self.events = events;
        }
        for s in self.sockets.values_mut() {
            if s.stall_wake_ns.is_some_and(|t| t <= now_ns) {
                s.stall_wake_ns = None;
                if let Some(w) = s.waker.take() {
                    w.wake();
                    delivered += 1;
                }
            }
        }
        delivered
    }

    /// When the link next has something to do (a departure or a stats line).
    pub fn next_event_ns(&self) -> Option<u64> {
        if self.finished {
            return None;
        }
        let d = self.dirs.iter().filter_map(|d| d.next_departure_ns()).min();
        let stall = self.sockets.values().filter_map(|s| s.stall_wake_ns).min();
        let d = match (d, stall) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Some(d.map_or(self.stats.next_ns(), |d| d.min(self.stats.next_ns())))
    }

    /// Deliver what the direction released; how many datagrams were queued at a socket.
    fn handle(&mut self, i: usize, now_ns: u64, events: &mut Vec<Event<Pkt>>) -> usize {
        let mut delivered = 0;
        for ev in events.drain(..) {
            self.log_packet(i, &ev);
            if let Event::Sent { pkt, at_ns } = ev {
                self.capture(pkt.payload.to.ip(), at_ns, &pkt.payload);
                self.stats.record_late(i, now_ns.saturating_sub(at_ns));
                delivered += usize::from(self.deliver(pkt.payload));
            }
        }
        delivered
    }

    /// Write `ev` to the packet log, if there is one; a failed write is reported at the end
    /// and ends the log, not the run.
    fn log_packet(&mut self, i: usize, ev: &Event<Pkt>) {
        let Some(log) = self.packet_log.as_mut() else {
            return;
        };
        let (pkt, at_ns, fate) = match ev {
            Event::Sent { pkt, at_ns } => (pkt, *at_ns, Fate::Sent),
            Event::Dropped { pkt, at_ns, cause } => (pkt, *at_ns, Fate::Dropped(*cause)),
        };
        if let Err(e) = write_record(
            log.out(),
            DIR_NAMES[i],
            pkt.arrival_ns,
            at_ns,
            pkt.bytes,
            fate,
        ) {
            self.errors.push(format!(
                "writing the packet log: {e}; no more lines written"
            ));
            self.packet_log = None;
        }
    }

    /// `p` on the interface of the node `at`, at `ns`, if that node is captured.
    fn capture(&mut self, at: IpAddr, ns: u64, p: &Pkt) {
        self.capture_raw(at, ns, p.from, p.to, p.ecn, &p.data);
    }

    fn capture_raw(
        &mut self,
        at: IpAddr,
        ns: u64,
        from: SocketAddr,
        to: SocketAddr,
        ecn: Option<EcnCodepoint>,
        data: &[u8],
    ) {
        if let Some(c) = self.capture.as_mut() {
            c.frame(at, ns, from, to, ecn_bits(ecn), data);
        }
    }

    /// Queue `p` at its socket (true), or count it dropped (false).
    fn deliver(&mut self, p: Pkt) -> bool {
        let Some(s) = self.sockets.get_mut(&p.to) else {
            self.no_socket_drops += 1;
            return false;
        };
        let d = Datagram {
            from: p.from,
            data: p.data,
            ecn: p.ecn,
        };
        let queued = s.queue.push(d);
        if queued {
            if let Some(w) = s.waker.take() {
                w.wake();
            }
        }
        queued
    }

    /// A datagram from the socket `from` (node IP, port) to `to`, at `now_ns`, with the ECN
    /// codepoint `ecn` in its IP header.
    pub fn send(
        &mut self,
        now_ns: u64,
        from: SocketAddr,
        to: SocketAddr,
        data: &[u8],
        ecn: Option<EcnCodepoint>,
    ) -> io::Result<()> {
        if data.len() as u64 + FRAME_OVERHEAD_BYTES > self.mtu_bytes + 14 {
            // The kernel refuses a datagram over the path MTU with don't-fragment set.
            return Err(err(
                io::ErrorKind::InvalidInput,
                format!(
                    "message too long: {} bytes over an mtu of {}",
                    data.len(),
                    self.mtu_bytes
                ),
            ));
        }
        if let Some(s) = self.sockets.get_mut(&from) {
            s.datagrams_sent += 1;
        }
        // the sender's interface sees the frame whatever becomes of it
        self.capture_raw(from.ip(), now_ns, from, to, ecn, data);
        let src_side = self.nodes[&from.ip()].side;
        let Some(dst) = self.nodes.get(&to.ip()) else {
            self.unroutable += 1;
            return Ok(());
        };
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(data);
        let pkt = Pkt {
            from,
            to,
            data: buf,
            ecn,
        };
        if dst.side == src_side {
            // Same side of the link: no emulated link between them.
            self.capture(to.ip(), now_ns, &pkt);
            self.deliver(pkt);
            return Ok(());
        }
        let i = usize::from(src_side == Side::B);
        let mut events = std::mem::take(&mut self.events);
        let bytes = data.len() as u64 + FRAME_OVERHEAD_BYTES;
        self.dirs[i].enqueue(now_ns, pkt, bytes, &mut events);
        self.handle(i, now_ns, &mut events);
        self.events = events;
        Ok(())
    }

    /// Write the stats lines due by `now_ns`; a failed write is reported at the end (and
    /// ends the run's stats, not the run).
    pub fn tick_stats(&mut self, now_ns: u64) {
        let State { stats, dirs, .. } = self;
        if let Err(e) = stats.tick(now_ns, dirs) {
            self.errors
                .push(format!("writing link stats: {e}; no more lines written"));
            stats.stop_writing();
        }
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    pub fn unbind(&mut self, key: SocketAddr) {
        if let Some(s) = self.sockets.remove(&key) {
            self.closed.entry(key).or_default().add(&s.report());
        }
    }
}

/// The sockets of one node: what a process on that node binds through.
#[derive(Clone)]
pub struct NodeNet {
    shared: Arc<Shared>,
    ip: IpAddr,
}

impl NodeNet {
    pub fn ip(&self) -> IpAddr {
        self.ip
    }

    /// Bind `addr` on this node: its IP must be the node's or unspecified (then the socket
    /// reports `addr` as given, and receives at the node's address); port 0 picks the next
    /// free port from 32768.
    pub fn bind(&self, addr: SocketAddr) -> io::Result<Arc<SimSocket>> {
        if !addr.ip().is_unspecified() && addr.ip() != self.ip {
            return Err(err(
                io::ErrorKind::AddrNotAvailable,
                format!("cannot bind {addr}: this node's address is {}", self.ip),
            ));
        }
        let mut st = self.shared.lock();
        let mut port = addr.port();
        let node = st.nodes.get_mut(&self.ip).expect("node exists");
        let (rcvbuf, stall) = (node.recv_buffer_bytes, node.reader_stall);
        if port == 0 {
            let mut p = node.next_port;
            while st.sockets.contains_key(&SocketAddr::new(self.ip, p)) {
                p = p.checked_add(1).ok_or_else(|| {
                    err(io::ErrorKind::AddrInUse, "no free ephemeral port".into())
                })?;
            }
            port = p;
            st.nodes.get_mut(&self.ip).expect("node exists").next_port =
                p.wrapping_add(1).max(EPHEMERAL_FIRST);
        }
        let key = SocketAddr::new(self.ip, port);
        if st.sockets.contains_key(&key) {
            return Err(err(io::ErrorKind::AddrInUse, format!("{key} is in use")));
        }
        st.sockets.insert(
            key,
            SockState {
                queue: RecvQueue::new(rcvbuf),
                waker: None,
                datagrams_sent: 0,
                stall,
                stall_wake_ns: None,
            },
        );
        let mut local = addr;
        local.set_port(port);
        Ok(Arc::new(SimSocket::new(self.shared.clone(), key, local)))
    }
}
