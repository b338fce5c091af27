//! The two transports behind one interface: RTP/RTCP in QUIC datagrams behind the flow
//! identifier, or in plain UDP datagrams.

use std::net::SocketAddr;

use anyhow::{Context, Result};
use bytes::Bytes;
use quinn::Connection;
use tokio::net::UdpSocket;

use roq_core::flow;

/// The flow identifier of the one RTP session (RTCP multiplexed on it, RFC 5761).
pub const FLOW_ID: u64 = 0;

pub enum Net {
    Quic(Connection),
    Udp {
        sock: UdpSocket,
        peer: Option<SocketAddr>,
    },
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
                    // a full socket buffer or an unreachable peer loses the packet, as UDP does
                    let _ = sock.send_to(pkt, p).await;
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
