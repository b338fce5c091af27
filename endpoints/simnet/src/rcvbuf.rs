//! A socket's receive queue, optionally bounded like the kernel's receive buffer.
//!
//! The kernel does not charge a UDP socket the payload: it charges each queued packet's
//! `skb->truesize` (the buffer the frame sits in plus the `struct sk_buff`) against
//! `sk_rcvbuf`, and drops an arriving packet (counted as UDP `RcvbufErrors`) when the memory
//! already charged exceeds `sk_rcvbuf` (`__udp_enqueue_schedule_skb`: the packet is admitted
//! while the charge before it is at most the limit, so the queue may overshoot by one).
//! `recv_buffer_bytes` is `sk_rcvbuf` as the kernel holds it (net.core.rmem_default is
//! 212,992; `SO_RCVBUF` doubles what it is given).
//!
//! [`charged_bytes`] estimates truesize for a frame that linkem's AF_PACKET socket writes
//! onto a veth: a linear buffer of the Ethernet frame plus 64 bytes of headroom plus the
//! 320-byte `skb_shared_info`, rounded up to the kmalloc size class, plus 256 bytes for the
//! `sk_buff`. A 1200-byte QUIC datagram is charged 2,304 bytes, so 212,992 bytes hold 93 of
//! them, not the 177 the payload alone would suggest (quicsetup's `udpbuf` notes ≈ 90 rise
//! packets held by that buffer on the real path, ≈ 2,368 bytes each). It is an estimate
//! (kernel versions and drivers differ), which is why it lives in one function.

use crate::FRAME_OVERHEAD_BYTES;
use quinn::udp::EcnCodepoint;
use std::collections::VecDeque;
use std::net::SocketAddr;

const HEADROOM_BYTES: u64 = 64;
const SHARED_INFO_BYTES: u64 = 320;
const SK_BUFF_BYTES: u64 = 256;

/// The kmalloc size class holding `n` bytes (power-of-two classes, plus 96 and 192).
fn kmalloc_class(n: u64) -> u64 {
    match n {
        0..=64 => 64,
        65..=96 => 96,
        97..=128 => 128,
        129..=192 => 192,
        _ => n.next_power_of_two(),
    }
}

/// What a received datagram of `payload_bytes` costs the receive buffer (estimated truesize).
pub fn charged_bytes(payload_bytes: usize) -> u64 {
    let frame = payload_bytes as u64 + FRAME_OVERHEAD_BYTES;
    kmalloc_class(frame + HEADROOM_BYTES + SHARED_INFO_BYTES) + SK_BUFF_BYTES
}

#[derive(Debug)]
pub struct Datagram {
    pub from: SocketAddr,
    pub data: Vec<u8>,
    /// The ECN codepoint of its IP header, as the sender set it (see [`crate::net`]).
    pub ecn: Option<EcnCodepoint>,
}

/// Counters of one socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecvCounters {
    pub datagrams_received: u64,
    pub bytes_received: u64,
    pub recv_buffer_drops: u64,
    /// Largest charge the queue reached (bytes, as charged).
    pub peak_charged_bytes: u64,
}

#[derive(Debug)]
pub struct RecvQueue {
    limit_bytes: Option<u64>,
    items: VecDeque<Datagram>,
    charged: u64,
    pub counters: RecvCounters,
}

impl RecvQueue {
    pub fn new(limit_bytes: Option<u64>) -> Self {
        RecvQueue {
            limit_bytes,
            items: VecDeque::new(),
            charged: 0,
            counters: RecvCounters::default(),
        }
    }

    /// Queue `d` unless the buffer is over its limit; false: dropped (counted).
    pub fn push(&mut self, d: Datagram) -> bool {
        if self.limit_bytes.is_some_and(|l| self.charged > l) {
            self.counters.recv_buffer_drops += 1;
            return false;
        }
        self.charged += charged_bytes(d.data.len());
        self.counters.peak_charged_bytes = self.counters.peak_charged_bytes.max(self.charged);
        self.counters.datagrams_received += 1;
        self.counters.bytes_received += d.data.len() as u64;
        self.items.push_back(d);
        true
    }

    pub fn pop(&mut self) -> Option<Datagram> {
        let d = self.items.pop_front()?;
        self.charged -= charged_bytes(d.data.len());
        Some(d)
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn charged(&self) -> u64 {
        self.charged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dg(n: usize) -> Datagram {
        Datagram {
            from: "10.0.0.1:1".parse().unwrap(),
            data: vec![0; n],
            ecn: None,
        }
    }

    #[test]
    fn a_quic_datagram_is_charged_its_estimated_truesize() {
        assert_eq!(charged_bytes(1200), 2304);
        assert_eq!(charged_bytes(40), 768);
        assert_eq!(212_992 / charged_bytes(1200), 92);
    }

    #[test]
    fn admits_while_the_charge_is_at_most_the_limit_then_drops() {
        let mut q = RecvQueue::new(Some(2 * 2304));
        assert!(q.push(dg(1200)));
        assert!(q.push(dg(1200)));
        // Charge 4608 = limit: still admitted (the kernel drops only above it).
        assert!(q.push(dg(1200)));
        assert!(!q.push(dg(1200)));
        assert_eq!(q.counters.recv_buffer_drops, 1);
        assert_eq!(q.counters.datagrams_received, 3);
        q.pop();
        q.pop();
        assert_eq!(q.charged(), 2304);
        assert!(q.push(dg(1200)));
    }

    #[test]
    fn unbounded_never_drops() {
        let mut q = RecvQueue::new(None);
        for _ in 0..10_000 {
            assert!(q.push(dg(1400)));
        }
        assert_eq!(q.counters.recv_buffer_drops, 0);
    }
}
