//! Messages on the wire (fixed-size, big-endian).
//!
//! - Control stream (the first bidirectional stream the player opens; [QPR §III-C]):
//!   the player sends [`HELLO`], then one [`Request`] per unreliable object; the server
//!   answers each with an [`EndOfData`] once the object's last datagram is handed to QUIC.
//!   assumption: the paper carries unreliable requests in datagrams; here they go on the
//!   control stream so a lost request cannot stall the player (the paper gives no timeout
//!   for that case). Only the response is unreliable.
//! - Reliable object: one bidirectional stream per request; the player writes a
//!   [`Request`] and finishes; the server writes the object's bytes and finishes.
//! - Unreliable object: datagrams of [`DGRAM_HEADER`] bytes (request id, index) + payload.

pub const HELLO: &[u8; 4] = b"QPR1";
pub const REQUEST_LEN: usize = 14;
pub const EOD_LEN: usize = 20;
pub const DGRAM_HEADER: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub id: u32,
    pub segment: u64,
    pub object: u8,
    pub quality: u8,
}

impl Request {
    pub fn encode(&self) -> [u8; REQUEST_LEN] {
        let mut b = [0u8; REQUEST_LEN];
        b[0..4].copy_from_slice(&self.id.to_be_bytes());
        b[4..12].copy_from_slice(&self.segment.to_be_bytes());
        b[12] = self.object;
        b[13] = self.quality;
        b
    }

    /// None if the object or quality is out of range.
    pub fn decode(b: &[u8; REQUEST_LEN]) -> Option<Request> {
        let r = Request {
            id: u32::from_be_bytes(b[0..4].try_into().ok()?),
            segment: u64::from_be_bytes(b[4..12].try_into().ok()?),
            object: b[12],
            quality: b[13],
        };
        ((r.object as usize) < crate::OBJECTS && (r.quality as usize) < crate::QUALITIES)
            .then_some(r)
    }
}

/// The server's end of an unreliable response: how many datagrams it sent (with FEC, source
/// and repair symbols), the object's payload bytes, and the payload bytes of a full datagram
/// (the FEC symbol size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndOfData {
    pub id: u32,
    pub datagrams: u32,
    pub bytes: u64,
    pub symbol_bytes: u32,
}

impl EndOfData {
    pub fn encode(&self) -> [u8; EOD_LEN] {
        let mut b = [0u8; EOD_LEN];
        b[0..4].copy_from_slice(&self.id.to_be_bytes());
        b[4..8].copy_from_slice(&self.datagrams.to_be_bytes());
        b[8..16].copy_from_slice(&self.bytes.to_be_bytes());
        b[16..20].copy_from_slice(&self.symbol_bytes.to_be_bytes());
        b
    }

    pub fn decode(b: &[u8; EOD_LEN]) -> EndOfData {
        EndOfData {
            id: u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
            datagrams: u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
            bytes: u64::from_be_bytes(b[8..16].try_into().expect("8 bytes")),
            symbol_bytes: u32::from_be_bytes([b[16], b[17], b[18], b[19]]),
        }
    }
}

/// (request id, datagram index) of a datagram; None if shorter than the header.
pub fn dgram_header(d: &[u8]) -> Option<(u32, u32)> {
    (d.len() >= DGRAM_HEADER).then(|| {
        (
            u32::from_be_bytes([d[0], d[1], d[2], d[3]]),
            u32::from_be_bytes([d[4], d[5], d[6], d[7]]),
        )
    })
}

/// Number of datagrams an object of `bytes` takes with `max_datagram` bytes per datagram.
pub fn datagrams_for(bytes: u64, max_datagram: usize) -> u64 {
    let per = (max_datagram - DGRAM_HEADER) as u64;
    bytes.div_ceil(per).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_bad_requests_are_refused() {
        let r = Request {
            id: 7,
            segment: 1 << 40,
            object: 3,
            quality: 4,
        };
        assert_eq!(Request::decode(&r.encode()), Some(r));
        let mut bad = r.encode();
        bad[12] = 4;
        assert_eq!(Request::decode(&bad), None);
        let e = EndOfData {
            id: 9,
            datagrams: 100,
            bytes: 123_456,
            symbol_bytes: 1_444,
        };
        assert_eq!(EndOfData::decode(&e.encode()), e);
        assert_eq!(dgram_header(&[0, 0, 0, 1, 0, 0, 0, 2, 99]), Some((1, 2)));
        assert_eq!(dgram_header(&[0; 7]), None);
        assert_eq!(datagrams_for(0, 1208), 1);
        assert_eq!(datagrams_for(1200, 1208), 1);
        assert_eq!(datagrams_for(1201, 1208), 2);
    }
}
