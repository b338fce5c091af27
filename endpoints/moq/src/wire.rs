//! A frame on a stream: a fixed header, then `size_bytes` payload bytes (the encoded frame's
//! size; the content is filler). Big-endian:
//! `frame_id u64 | group u64 | pict u8 (0 I, 1 P, 2 B) | capture_us u64 | size_bytes u32`
//! (29 bytes). `capture_us` is the publisher's Unix-epoch µs at capture.

use crate::Pict;

pub const HEADER_BYTES: usize = 29;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    pub frame_id: u64,
    pub group: u64,
    pub pict: Pict,
    pub capture_us: u64,
    pub size_bytes: u32,
}

impl FrameHeader {
    pub fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[0..8].copy_from_slice(&self.frame_id.to_be_bytes());
        b[8..16].copy_from_slice(&self.group.to_be_bytes());
        b[16] = self.pict.code();
        b[17..25].copy_from_slice(&self.capture_us.to_be_bytes());
        b[25..29].copy_from_slice(&self.size_bytes.to_be_bytes());
        b
    }

    /// None if the picture type code is unknown.
    pub fn decode(b: &[u8; HEADER_BYTES]) -> Option<FrameHeader> {
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Some(FrameHeader {
            frame_id: u64_at(0),
            group: u64_at(8),
            pict: Pict::from_code(b[16])?,
            capture_us: u64_at(17),
            size_bytes: u32::from_be_bytes(b[25..29].try_into().expect("4 bytes")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_layout() {
        let h = FrameHeader {
            frame_id: 7,
            group: 2,
            pict: Pict::B,
            capture_us: 1_700_000_000_123_456,
            size_bytes: 12_345,
        };
        let b = h.encode();
        assert_eq!(b[7], 7);
        assert_eq!(b[15], 2);
        assert_eq!(b[16], 2);
        assert_eq!(&b[25..29], &12_345u32.to_be_bytes());
        assert_eq!(FrameHeader::decode(&b), Some(h));
        let mut bad = b;
        bad[16] = 9;
        assert_eq!(FrameHeader::decode(&bad), None);
    }
}
