//! The RTP-over-QUIC flow identifier (draft-ietf-avtcore-rtp-over-quic): each QUIC datagram
//! starts with a QUIC variable-length integer (RFC 9000 §16) naming the RTP session, followed
//! by one RTP or RTCP packet (RTCP multiplexed on the same flow, RFC 5761).

/// Appends `v` as a QUIC varint (1, 2, 4 or 8 bytes). Panics above 2^62 − 1.
pub fn write_varint(v: u64, out: &mut Vec<u8>) {
    if v < 1 << 6 {
        out.push(v as u8);
    } else if v < 1 << 14 {
        out.extend_from_slice(&((v as u16) | 0x4000).to_be_bytes());
    } else if v < 1 << 30 {
        out.extend_from_slice(&((v as u32) | 0x8000_0000).to_be_bytes());
    } else {
        assert!(v < 1 << 62, "varint {v} out of range");
        out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes());
    }
}

/// The varint at the start of `b` and the bytes after it; None if `b` is too short.
pub fn read_varint(b: &[u8]) -> Option<(u64, &[u8])> {
    let first = *b.first()?;
    let len = 1usize << (first >> 6);
    if b.len() < len {
        return None;
    }
    let mut v = (first & 0x3f) as u64;
    for x in &b[1..len] {
        v = (v << 8) | *x as u64;
    }
    Some((v, &b[len..]))
}

/// A datagram payload: flow identifier then the packet.
pub fn encap(flow_id: u64, pkt: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pkt.len() + 8);
    write_varint(flow_id, &mut out);
    out.extend_from_slice(pkt);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_of_every_length_round_trip() {
        for (v, len) in [
            (0u64, 1),
            (63, 1),
            (64, 2),
            (16383, 2),
            (16384, 4),
            (1 << 30, 8),
        ] {
            let d = encap(v, b"rtp");
            assert_eq!(d.len(), len + 3, "{v}");
            assert_eq!(read_varint(&d), Some((v, &b"rtp"[..])));
        }
        // RFC 9000 §A.1's example: 0x7bbd is 15293.
        assert_eq!(read_varint(&[0x7b, 0xbd]), Some((15293, &[][..])));
        assert_eq!(read_varint(&[0x7b]), None);
    }
}
