//! Test support: a two-node network (10.0.0.1 on side a, 10.0.1.1 on side b) over a link
//! given as linkem JSON, and raw datagram send/receive in virtual time.
#![allow(dead_code)]

use quinn::udp::{EcnCodepoint, RecvMeta, Transmit};
use quinn::AsyncUdpSocket;
use simnet::{NodeSpec, ReaderStall, Side, SimNet, SimNetConfig, SimRuntime, StatsOut};
use std::io::IoSliceMut;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

pub const GUEST: &str = "10.0.0.1";
pub const HOST: &str = "10.0.1.1";

/// A linkem config with `dir` (a direction's JSON) both ways.
pub fn link(seed: u64, dir: &str) -> linkem::Config {
    let text =
        format!(r#"{{"seed": {seed}, "mtu_bytes": 1500, "a_to_b": {dir}, "b_to_a": {dir}}}"#);
    linkem::parse_config(&text).expect("test link parses")
}

pub fn direction(rate_bps: u64, delay_us: u64, loss: &str, limit_bytes: u64) -> String {
    format!(
        r#"{{"rate": {{"kind": "constant", "rate_bps": {rate_bps}}}, "delay_us": {delay_us},
            "jitter_us": 0, "jitter_reorder": false, "loss": {loss},
            "queue": {{"limit_bytes": {limit_bytes}, "limit_packets": null, "drop": "tail"}}}}"#
    )
}

pub fn net(
    rt: &SimRuntime,
    link: linkem::Config,
    guest_rcvbuf: Option<u64>,
    stats: Option<PathBuf>,
) -> SimNet {
    net_with_stall(rt, link, guest_rcvbuf, None, stats)
}

/// As [`net`], the guest's readers also stalled as `stall` says.
pub fn net_with_stall(
    rt: &SimRuntime,
    link: linkem::Config,
    guest_rcvbuf: Option<u64>,
    stall: Option<ReaderStall>,
    stats: Option<PathBuf>,
) -> SimNet {
    net_full(rt, link, guest_rcvbuf, stall, stats, None)
}

/// As [`net_with_stall`], with linkem's per-packet log written to `packet_log`.
pub fn net_full(
    rt: &SimRuntime,
    link: linkem::Config,
    guest_rcvbuf: Option<u64>,
    stall: Option<ReaderStall>,
    stats: Option<PathBuf>,
    packet_log: Option<PathBuf>,
) -> SimNet {
    let nodes = vec![
        NodeSpec {
            addr: GUEST.parse().unwrap(),
            side: Side::A,
            recv_buffer_bytes: guest_rcvbuf,
            reader_stall: stall,
        },
        NodeSpec {
            addr: HOST.parse().unwrap(),
            side: Side::B,
            recv_buffer_bytes: None,
            reader_stall: None,
        },
    ];
    let stats = stats.map(|path| StatsOut {
        path,
        interval_ms: 1000,
    });
    let cfg = SimNetConfig {
        link,
        nodes,
        stats,
        packet_log,
    };
    SimNet::new(rt, &cfg).expect("net builds")
}

pub fn bind(net: &SimNet, ip: &str, port: u16) -> Arc<dyn AsyncUdpSocket> {
    let node = net.node(ip.parse().unwrap()).expect("node exists");
    node.bind(SocketAddr::new("0.0.0.0".parse().unwrap(), port))
        .expect("binds")
}

pub fn send(sock: &dyn AsyncUdpSocket, to: SocketAddr, payload: &[u8]) {
    send_ecn(sock, to, payload, None);
}

/// As [`send`], with `ecn` as the IP header's ECN codepoint (quinn sets ECT(0)).
pub fn send_ecn(
    sock: &dyn AsyncUdpSocket,
    to: SocketAddr,
    payload: &[u8],
    ecn: Option<EcnCodepoint>,
) {
    sock.try_send(&Transmit {
        destination: to,
        ecn,
        contents: payload,
        segment_size: None,
        src_ip: None,
    })
    .expect("sends");
}

/// The next datagram: (virtual ns when it arrived, source, payload).
pub async fn recv(net: &SimNet, sock: &dyn AsyncUdpSocket) -> (u64, SocketAddr, Vec<u8>) {
    let (payload, meta) = recv_meta(sock).await;
    (net.now_ns(), meta.addr, payload)
}

/// The next datagram's payload and the ECN codepoint its receiver is told.
pub async fn recv_ecn(sock: &dyn AsyncUdpSocket) -> (Vec<u8>, Option<EcnCodepoint>) {
    let (payload, meta) = recv_meta(sock).await;
    (payload, meta.ecn)
}

/// The next datagram's payload and what the socket says about it.
async fn recv_meta(sock: &dyn AsyncUdpSocket) -> (Vec<u8>, RecvMeta) {
    let mut buf = vec![0u8; 2048];
    let mut meta = [RecvMeta::default()];
    let n = std::future::poll_fn(|cx| {
        let mut bufs = [IoSliceMut::new(&mut buf)];
        sock.poll_recv(cx, &mut bufs, &mut meta)
    })
    .await
    .expect("receives");
    assert_eq!(n, 1);
    buf.truncate(meta[0].len);
    (buf, meta[0])
}

pub fn addr(ip: &str, port: u16) -> SocketAddr {
    SocketAddr::new(ip.parse().unwrap(), port)
}
