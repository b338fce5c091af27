//! The two transports behind one interface: RTP/RTCP in QUIC datagrams behind the flow
//! identifier, or in plain UDP datagrams (the kernel's socket, or the injected network's).

use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use bytes::Bytes;
use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, Connection};
use tokio::net::UdpSocket;

use roq_core::flow;

/// The flow identifier of the one RTP session (RTCP multiplexed on it, RFC 5761).
pub const FLOW_ID: u64 = 0;

pub enum Net {
    Quic(Connection),
    Udp {
        sock: UdpSock,
        peer: Option<SocketAddr>,
    },
}

/// A plain UDP socket: the kernel's (tokio, its default buffers), or one from the injected
/// network (quicsetup's `SocketFactory`: the sim's simnet), used as raw datagrams.
pub enum UdpSock {
    Kernel(UdpSocket),
    Injected(Arc<dyn AsyncUdpSocket>),
}

impl UdpSock {
    /// Binds `addr` on the session's network.
    pub async fn bind(net: &quicsetup::Net, addr: SocketAddr) -> Result<UdpSock> {
        let sock = match net {
            quicsetup::Net::Kernel => UdpSocket::bind(addr).await.map(UdpSock::Kernel),
            quicsetup::Net::Injected(f) => f.bind(addr).map(UdpSock::Injected),
        };
        sock.with_context(|| format!("binding {addr}"))
    }

    /// Sends one datagram; a full socket buffer or an unreachable peer loses it, as UDP does.
    async fn send_to(&self, pkt: &[u8], to: SocketAddr) {
        match self {
            UdpSock::Kernel(s) => {
                let _ = s.send_to(pkt, to).await;
            }
            UdpSock::Injected(s) => {
                // no ECN mark: the kernel's plain UDP socket sets none either
                let _ = s.try_send(&Transmit {
                    destination: to,
                    ecn: None,
                    contents: pkt,
                    segment_size: None,
                    src_ip: None,
                });
            }
        }
    }

    /// The next datagram into `buf`: its length and source (cancel-safe).
    async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        match self {
            UdpSock::Kernel(s) => s.recv_from(buf).await,
            UdpSock::Injected(s) => {
                std::future::poll_fn(|cx| {
                    let mut meta = [RecvMeta::default()];
                    let mut bufs = [IoSliceMut::new(&mut *buf)];
                    s.poll_recv(cx, &mut bufs, &mut meta)
                        .map_ok(|_| (meta[0].len, meta[0].addr))
                })
                .await
            }
        }
    }
}

/// Why receiving ended.
#[derive(Debug)]
pub enum Recv {
    Packet(Vec<u8>),
    /// a datagram of another flow or without a flow id
    Other,
    Closed(String),
}

impl Net {
    pub fn name(&self) -> &'static str {
        match self {
            Net::Quic(_) => "quic",
            Net::Udp { .. } => "udp",
        }
    }

    /// Whether a packet of `len` bytes can be handed on now without quinn dropping an older
    /// datagram (its send buffer is full while the congestion window holds it back).
    pub fn has_room(&self, len: usize) -> bool {
        match self {
            Net::Quic(c) => c.datagram_send_buffer_space() >= len + 8,
            Net::Udp { .. } => true,
        }
    }

    pub async fn send(&self, pkt: &[u8]) -> Result<()> {
        match self {
            Net::Quic(c) => c
                .send_datagram(Bytes::from(flow::encap(FLOW_ID, pkt)))
                .context("sending a QUIC datagram"),
            Net::Udp { sock, peer } => {
                if let Some(p) = peer {
                    sock.send_to(pkt, *p).await;
                }
                Ok(())
            }
        }
    }

    /// The next RTP/RTCP packet (cancel-safe).
    pub async fn recv(&mut self) -> Recv {
        match self {
            Net::Quic(c) => match c.read_datagram().await {
                Ok(d) => match flow::read_varint(&d) {
                    Some((FLOW_ID, rest)) => Recv::Packet(rest.to_vec()),
                    _ => Recv::Other,
                },
                Err(e) => Recv::Closed(format!("{e}")),
            },
            Net::Udp { sock, peer } => {
                let mut buf = vec![0u8; 65_536];
                match sock.recv_from(&mut buf).await {
                    Ok((n, from)) => {
                        peer.get_or_insert(from);
                        buf.truncate(n);
                        Recv::Packet(buf)
                    }
                    Err(e) => Recv::Closed(format!("{e}")),
                }
            }
        }
    }
}

/// An RTCP BYE (RFC 3550 §6.6) for `ssrc`: the UDP sender's end of stream.
pub fn rtcp_bye(ssrc: u32) -> Vec<u8> {
    let mut b = vec![0x81, 203, 0, 1];
    b.extend_from_slice(&ssrc.to_be_bytes());
    b
}

pub fn is_bye(pkt: &[u8]) -> bool {
    pkt.len() >= 8 && pkt[1] == 203
}
