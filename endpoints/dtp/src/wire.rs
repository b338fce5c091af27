//! A block on its own unidirectional stream: a fixed header, then the payload (filler
//! bytes). Big-endian: `block_id u64 | payload_bytes u64 | priority u32 | created_us u64 |
//! deadline_us u64` (36 bytes). `created_us` is the sender's Unix-epoch µs when the
//! application pushed the block; `deadline_us` is relative to it. The header plays the role
//! of DTP's BLOCK_INFO frame: the receiver learns the block's size and deadline before its
//! data.

pub const HEADER_BYTES: usize = 36;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    pub block_id: u64,
    pub payload_bytes: u64,
    pub priority: u32,
    pub created_us: u64,
    pub deadline_us: u64,
}

impl BlockHeader {
    pub fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[0..8].copy_from_slice(&self.block_id.to_be_bytes());
        b[8..16].copy_from_slice(&self.payload_bytes.to_be_bytes());
        b[16..20].copy_from_slice(&self.priority.to_be_bytes());
        b[20..28].copy_from_slice(&self.created_us.to_be_bytes());
        b[28..36].copy_from_slice(&self.deadline_us.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8; HEADER_BYTES]) -> BlockHeader {
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        BlockHeader {
            block_id: u64_at(0),
            payload_bytes: u64_at(8),
            priority: u32::from_be_bytes(b[16..20].try_into().expect("4 bytes")),
            created_us: u64_at(20),
            deadline_us: u64_at(28),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let h = BlockHeader {
            block_id: u64::MAX - 3,
            payload_bytes: 200_000,
            priority: 3,
            created_us: 1_700_000_000_123_456,
            deadline_us: 200_000,
        };
        assert_eq!(BlockHeader::decode(&h.encode()), h);
    }
}
