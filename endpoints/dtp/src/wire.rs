//! A block on its own unidirectional stream: a fixed header, then the payload (a known
//! pattern, [`stream_byte`], so the receiver can check what it rebuilt). Big-endian: `block_id u64 | payload_bytes u64 | priority u32 | created_us u64 |
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

/// The byte at `offset` of block `block_id`'s stream (header included): the header's bytes
/// first, then a pattern of the block id and the offset.
pub fn stream_byte(h: &[u8; HEADER_BYTES], block_id: u64, offset: u64) -> u8 {
    if offset < HEADER_BYTES as u64 {
        return h[offset as usize];
    }
    (offset.wrapping_mul(0x9E37_79B9) ^ block_id.wrapping_mul(0x85EB_CA6B) ^ (offset >> 8)) as u8
}

/// Fills `buf` with the stream's bytes from `offset`.
pub fn fill(h: &[u8; HEADER_BYTES], block_id: u64, offset: u64, buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = stream_byte(h, block_id, offset + i as u64);
    }
}

/// A parity symbol in a QUIC DATAGRAM: `block_id u64 | total u64 | start u64 | end u64 |
/// symbol_bytes u16 | m u8 | n u8 | index u8` (37 bytes, big-endian), then `symbol_bytes`
/// bytes, then any padding (zeros; the sender pads a parity datagram to the whole packet so
/// that no stream bytes share its packet: see `encode_padded`). The group covers the block's
/// stream offsets [start, end) in `m` symbols; `total` is the stream's length, so a block
/// whose stream packets were all lost can be rebuilt.
pub const PARITY_HEADER_BYTES: usize = 37;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParityHeader {
    pub block_id: u64,
    pub total: u64,
    pub start: u64,
    pub end: u64,
    pub symbol_bytes: u16,
    pub m: u8,
    pub n: u8,
    pub index: u8,
}

impl ParityHeader {
    pub fn encode(&self, symbol: &[u8]) -> Vec<u8> {
        let mut b = Vec::with_capacity(PARITY_HEADER_BYTES + symbol.len());
        b.extend_from_slice(&self.block_id.to_be_bytes());
        b.extend_from_slice(&self.total.to_be_bytes());
        b.extend_from_slice(&self.start.to_be_bytes());
        b.extend_from_slice(&self.end.to_be_bytes());
        b.extend_from_slice(&self.symbol_bytes.to_be_bytes());
        b.extend_from_slice(&[self.m, self.n, self.index]);
        b.extend_from_slice(symbol);
        b
    }

    /// `encode`, then zeros up to `len` bytes (nothing added if it is already longer).
    /// quinn fills a packet with DATAGRAM frames first and puts stream frames in the room
    /// left, so a parity datagram shorter than the packet carries some of the very stream
    /// bytes it protects, and one loss takes both (seen with 1 KB blocks at 10 % loss:
    /// redundancy recovered nothing). Padded to `Connection::max_datagram_size`, it leaves
    /// less room than a stream frame's header.
    pub fn encode_padded(&self, symbol: &[u8], len: usize) -> Vec<u8> {
        let mut b = self.encode(symbol);
        if b.len() < len {
            b.resize(len, 0);
        }
        b
    }

    /// The parity datagram for a packet with `room` bytes of datagram space: the header and
    /// symbol padded to `room`, or None when they no longer fit (quinn's datagram room
    /// shrinks when its MTU black-hole detection falls back to the base MTU under heavy
    /// loss, after the group's symbol size was chosen).
    pub fn datagram(&self, symbol: &[u8], room: usize) -> Option<Vec<u8>> {
        (PARITY_HEADER_BYTES + symbol.len() <= room).then(|| self.encode_padded(symbol, room))
    }

    /// None if shorter than the header plus `symbol_bytes`; bytes after the symbol are
    /// padding and ignored.
    pub fn decode(b: &[u8]) -> Option<(ParityHeader, &[u8])> {
        if b.len() < PARITY_HEADER_BYTES {
            return None;
        }
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let h = ParityHeader {
            block_id: u64_at(0),
            total: u64_at(8),
            start: u64_at(16),
            end: u64_at(24),
            symbol_bytes: u16::from_be_bytes([b[32], b[33]]),
            m: b[34],
            n: b[35],
            index: b[36],
        };
        let sym = b.get(PARITY_HEADER_BYTES..PARITY_HEADER_BYTES + usize::from(h.symbol_bytes))?;
        Some((h, sym))
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

    #[test]
    fn parity_round_trip() {
        let p = ParityHeader {
            block_id: 7,
            total: 2000,
            start: 36,
            end: 1036,
            symbol_bytes: 3,
            m: 1,
            n: 2,
            index: 1,
        };
        let b = p.encode(&[1, 2, 3]);
        assert_eq!(ParityHeader::decode(&b), Some((p, &[1u8, 2, 3][..])));
        assert_eq!(ParityHeader::decode(&b[..b.len() - 1]), None);
        assert_eq!(ParityHeader::decode(&b[..10]), None);
        let padded = p.encode_padded(&[1, 2, 3], 100);
        assert_eq!(padded.len(), 100);
        assert_eq!(ParityHeader::decode(&padded), Some((p, &[1u8, 2, 3][..])));
        assert_eq!(p.encode_padded(&[1, 2, 3], 5), b);
        assert_eq!(p.datagram(&[1, 2, 3], 100), Some(padded));
        assert_eq!(p.datagram(&[1, 2, 3], b.len()), Some(b.clone()));
        assert_eq!(p.datagram(&[1, 2, 3], b.len() - 1), None);
    }

    #[test]
    fn stream_bytes_start_with_the_header() {
        let h = [9u8; HEADER_BYTES];
        let mut buf = [0u8; 40];
        fill(&h, 3, 0, &mut buf);
        assert_eq!(&buf[..HEADER_BYTES], &h[..]);
        assert_eq!(buf[38], stream_byte(&h, 3, 38));
        assert_ne!(stream_byte(&h, 3, 100), stream_byte(&h, 4, 100));
    }
}
