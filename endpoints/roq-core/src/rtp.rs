//! The RTP fixed header (RFC 3550 §5.1) without CSRCs or extensions, and the RTP/RTCP
//! demultiplexing rule of RFC 5761 §4 (payload types 64–95 in the second byte are RTCP).

/// Bytes of the fixed header (no CSRC, no extension).
pub const HEADER_BYTES: usize = 12;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtpHeader {
    pub marker: bool,
    pub payload_type: u8,
    pub seq: u16,
    pub timestamp: u32,
    pub ssrc: u32,
}

impl RtpHeader {
    /// Appends the 12-byte header to `out`.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(0x80); // V=2, P=0, X=0, CC=0
        out.push(((self.marker as u8) << 7) | (self.payload_type & 0x7f));
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.timestamp.to_be_bytes());
        out.extend_from_slice(&self.ssrc.to_be_bytes());
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum RtpError {
    TooShort(usize),
    Version(u8),
    Padding,
}

impl std::fmt::Display for RtpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RtpError::TooShort(n) => {
                write!(f, "RTP packet of {n} bytes is shorter than its header")
            }
            RtpError::Version(v) => write!(f, "RTP version {v}, expected 2"),
            RtpError::Padding => write!(f, "RTP padding longer than the packet"),
        }
    }
}

impl std::error::Error for RtpError {}

/// A parsed RTP packet: its header and the payload (CSRCs, extension and padding removed).
pub fn parse(pkt: &[u8]) -> Result<(RtpHeader, &[u8]), RtpError> {
    if pkt.len() < HEADER_BYTES {
        return Err(RtpError::TooShort(pkt.len()));
    }
    let v = pkt[0] >> 6;
    if v != 2 {
        return Err(RtpError::Version(v));
    }
    let cc = (pkt[0] & 0x0f) as usize;
    let mut start = HEADER_BYTES + 4 * cc;
    if pkt[0] & 0x10 != 0 {
        if pkt.len() < start + 4 {
            return Err(RtpError::TooShort(pkt.len()));
        }
        let words = u16::from_be_bytes([pkt[start + 2], pkt[start + 3]]) as usize;
        start += 4 + 4 * words;
    }
    let mut end = pkt.len();
    if pkt[0] & 0x20 != 0 {
        let pad = *pkt.last().unwrap() as usize;
        if pad == 0 || pad > end.saturating_sub(start) {
            return Err(RtpError::Padding);
        }
        end -= pad;
    }
    if start > end {
        return Err(RtpError::TooShort(pkt.len()));
    }
    let h = RtpHeader {
        marker: pkt[1] & 0x80 != 0,
        payload_type: pkt[1] & 0x7f,
        seq: u16::from_be_bytes([pkt[2], pkt[3]]),
        timestamp: u32::from_be_bytes([pkt[4], pkt[5], pkt[6], pkt[7]]),
        ssrc: u32::from_be_bytes([pkt[8], pkt[9], pkt[10], pkt[11]]),
    };
    Ok((h, &pkt[start..end]))
}

/// RFC 5761 §4: a packet whose second byte is 192–223 (RTCP packet types 192–223) is RTCP.
pub fn is_rtcp(pkt: &[u8]) -> bool {
    pkt.len() >= 2 && (192..=223).contains(&pkt[1])
}

/// Extends a 16-bit sequence number to 64 bits next to the highest seen so far (RFC 3550
/// appendix A.1's wrap handling, without the probation logic).
#[derive(Debug, Default, Clone)]
pub struct SeqExtender {
    highest: Option<u64>,
}

impl SeqExtender {
    pub fn extend(&mut self, seq: u16) -> u64 {
        let Some(h) = self.highest else {
            self.highest = Some(seq as u64 + (1 << 16));
            return seq as u64 + (1 << 16);
        };
        let base = h & !0xffff;
        let cands = [base.wrapping_sub(1 << 16), base, base + (1 << 16)];
        let e = cands
            .into_iter()
            .map(|b| b + seq as u64)
            .min_by_key(|c| c.abs_diff(h))
            .unwrap();
        if e > h {
            self.highest = Some(e);
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let h = RtpHeader {
            marker: true,
            payload_type: 96,
            seq: 65535,
            timestamp: 0xdead_beef,
            ssrc: 7,
        };
        let mut b = Vec::new();
        h.write(&mut b);
        b.extend_from_slice(b"abc");
        let (g, p) = parse(&b).unwrap();
        assert_eq!(g, h);
        assert_eq!(p, b"abc");
        assert!(!is_rtcp(&b));
        assert_eq!(parse(&b[..5]), Err(RtpError::TooShort(5)));
    }

    #[test]
    fn seq_extension_wraps_forward_and_tolerates_reordering() {
        let mut x = SeqExtender::default();
        let a = x.extend(65534);
        let b = x.extend(65535);
        let c = x.extend(0);
        let d = x.extend(65535); // late
        assert_eq!((b - a, c - b), (1, 1));
        assert_eq!(d, b);
    }
}
