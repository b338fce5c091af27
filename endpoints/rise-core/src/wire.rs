//! Wire formats. Every datagram starts with a 1-byte type tag; all integers are big-endian,
//! orientations are IEEE-754 f64 (big-endian bit patterns).
//!
//! | tag | message | layout after the tag | total |
//! |---|---|---|---|
//! | 1 | tracking | sample_id u32, gen_time_us u64, yaw f64, pitch f64, roll f64 | 37 B |
//! | 2 | video | frame_id u32, frame_type u8 (0 key, 1 delta), frag_id u16, frag_cnt u16, send_ts_us u64, tracking_sample_id u32 (`u32::MAX` = none), payload | 22 B + payload |
//! | 3 | ACK | frame_id u32, frag_id u16, send_ts_us u64 (echoed) | 15 B |
//!
//! Decoders are total: any byte string yields a message or a [`DecodeError`], never a panic.

use crate::config::FrameType;
use std::fmt;

pub const TAG_TRACKING: u8 = 1;
pub const TAG_VIDEO: u8 = 2;
pub const TAG_ACK: u8 = 3;

pub const TRACKING_BYTES: usize = 1 + 4 + 8 + 3 * 8;
pub const VIDEO_HEADER_BYTES: usize = 1 + 4 + 1 + 2 + 2 + 8 + 4;
pub const ACK_BYTES: usize = 1 + 4 + 2 + 8;
/// Byte offset of `send_ts_us` inside a video datagram (stamped at egress).
pub const VIDEO_SEND_TS_OFFSET: usize = 1 + 4 + 1 + 2 + 2;
/// Wire value of "no tracking sample yet".
pub const NO_SAMPLE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tracking {
    pub sample_id: u32,
    pub gen_time_us: u64,
    pub yaw_rad: f64,
    pub pitch_rad: f64,
    pub roll_rad: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VideoHeader {
    pub frame_id: u32,
    pub frame_type: FrameType,
    pub frag_id: u16,
    pub frag_cnt: u16,
    pub send_ts_us: u64,
    /// The peer's tracking sample the frame was rendered from, `None` before the first one.
    pub tracking_sample_id: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    pub frame_id: u32,
    pub frag_id: u16,
    pub send_ts_us: u64,
}

/// A decoded datagram; video carries its payload length (the payload itself is padding).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Message {
    Tracking(Tracking),
    Video {
        header: VideoHeader,
        payload_len: usize,
    },
    Ack(Ack),
}

/// Why a datagram could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    Empty,
    UnknownTag(u8),
    /// Shorter than the fixed layout of its type.
    Truncated {
        tag: u8,
        need: usize,
        got: usize,
    },
    /// Longer than the fixed layout of a tracking or ACK message.
    TrailingBytes {
        tag: u8,
        expected: usize,
        got: usize,
    },
    BadFrameType(u8),
    /// frag_cnt is 0 or frag_id ≥ frag_cnt.
    BadFragment {
        frag_id: u16,
        frag_cnt: u16,
    },
    /// An orientation is NaN or infinite.
    NonFiniteOrientation,
    /// Well formed, but disagrees with earlier fragments of the same frame (type or count).
    InconsistentFrame {
        frame_id: u32,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Empty => write!(f, "empty datagram"),
            DecodeError::UnknownTag(t) => write!(f, "unknown type tag {t}"),
            DecodeError::Truncated { tag, need, got } => {
                write!(f, "type {tag} truncated: need {need} bytes, got {got}")
            }
            DecodeError::TrailingBytes { tag, expected, got } => {
                write!(f, "type {tag} has {got} bytes, expected {expected}")
            }
            DecodeError::BadFrameType(t) => write!(f, "bad frame type {t}"),
            DecodeError::BadFragment { frag_id, frag_cnt } => {
                write!(f, "bad fragment {frag_id} of {frag_cnt}")
            }
            DecodeError::NonFiniteOrientation => write!(f, "non-finite orientation"),
            DecodeError::InconsistentFrame { frame_id } => {
                write!(
                    f,
                    "fragment disagrees with earlier fragments of frame {frame_id}"
                )
            }
        }
    }
}

impl std::error::Error for DecodeError {}

impl DecodeError {
    /// A short machine-friendly name for logs.
    pub fn kind(&self) -> &'static str {
        match self {
            DecodeError::Empty => "empty",
            DecodeError::UnknownTag(_) => "unknown_tag",
            DecodeError::Truncated { .. } => "truncated",
            DecodeError::TrailingBytes { .. } => "trailing_bytes",
            DecodeError::BadFrameType(_) => "bad_frame_type",
            DecodeError::BadFragment { .. } => "bad_fragment",
            DecodeError::NonFiniteOrientation => "non_finite_orientation",
            DecodeError::InconsistentFrame { .. } => "inconsistent_frame",
        }
    }
}

/// A big-endian reader over a slice whose reads never panic.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        // Callers check the total length first; missing bytes read as zero defensively.
        let mut out = [0u8; N];
        if let Some(s) = self.data.get(self.pos..self.pos + N) {
            out.copy_from_slice(s);
        }
        self.pos += N;
        out
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_be_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_be_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_be_bytes(self.take())
    }
    fn f64(&mut self) -> f64 {
        f64::from_bits(self.u64())
    }
}

fn frame_type_byte(t: FrameType) -> u8 {
    match t {
        FrameType::Key => 0,
        FrameType::Delta => 1,
    }
}

pub fn encode_tracking(t: &Tracking) -> Vec<u8> {
    let mut b = Vec::with_capacity(TRACKING_BYTES);
    b.push(TAG_TRACKING);
    b.extend_from_slice(&t.sample_id.to_be_bytes());
    b.extend_from_slice(&t.gen_time_us.to_be_bytes());
    b.extend_from_slice(&t.yaw_rad.to_bits().to_be_bytes());
    b.extend_from_slice(&t.pitch_rad.to_bits().to_be_bytes());
    b.extend_from_slice(&t.roll_rad.to_bits().to_be_bytes());
    b
}

/// A video datagram: the header followed by `payload_len` zero bytes.
pub fn encode_video(h: &VideoHeader, payload_len: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(VIDEO_HEADER_BYTES + payload_len);
    b.push(TAG_VIDEO);
    b.extend_from_slice(&h.frame_id.to_be_bytes());
    b.push(frame_type_byte(h.frame_type));
    b.extend_from_slice(&h.frag_id.to_be_bytes());
    b.extend_from_slice(&h.frag_cnt.to_be_bytes());
    b.extend_from_slice(&h.send_ts_us.to_be_bytes());
    b.extend_from_slice(&h.tracking_sample_id.unwrap_or(NO_SAMPLE).to_be_bytes());
    b.resize(VIDEO_HEADER_BYTES + payload_len, 0);
    b
}

/// Overwrite the send timestamp of an encoded video datagram (done at egress).
pub fn stamp_video_send_ts(datagram: &mut [u8], send_ts_us: u64) {
    if let Some(s) = datagram.get_mut(VIDEO_SEND_TS_OFFSET..VIDEO_SEND_TS_OFFSET + 8) {
        s.copy_from_slice(&send_ts_us.to_be_bytes());
    }
}

pub fn encode_ack(a: &Ack) -> Vec<u8> {
    let mut b = Vec::with_capacity(ACK_BYTES);
    b.push(TAG_ACK);
    b.extend_from_slice(&a.frame_id.to_be_bytes());
    b.extend_from_slice(&a.frag_id.to_be_bytes());
    b.extend_from_slice(&a.send_ts_us.to_be_bytes());
    b
}

fn exact_len(tag: u8, data: &[u8], expected: usize) -> Result<(), DecodeError> {
    if data.len() < expected {
        Err(DecodeError::Truncated {
            tag,
            need: expected,
            got: data.len(),
        })
    } else if data.len() > expected {
        Err(DecodeError::TrailingBytes {
            tag,
            expected,
            got: data.len(),
        })
    } else {
        Ok(())
    }
}

/// Decode one datagram. Total: never panics.
pub fn decode(data: &[u8]) -> Result<Message, DecodeError> {
    let Some(&tag) = data.first() else {
        return Err(DecodeError::Empty);
    };
    let mut r = Reader { data, pos: 1 };
    match tag {
        TAG_TRACKING => {
            exact_len(tag, data, TRACKING_BYTES)?;
            let t = Tracking {
                sample_id: r.u32(),
                gen_time_us: r.u64(),
                yaw_rad: r.f64(),
                pitch_rad: r.f64(),
                roll_rad: r.f64(),
            };
            if !(t.yaw_rad.is_finite() && t.pitch_rad.is_finite() && t.roll_rad.is_finite()) {
                return Err(DecodeError::NonFiniteOrientation);
            }
            Ok(Message::Tracking(t))
        }
        TAG_VIDEO => {
            if data.len() < VIDEO_HEADER_BYTES {
                return Err(DecodeError::Truncated {
                    tag,
                    need: VIDEO_HEADER_BYTES,
                    got: data.len(),
                });
            }
            let frame_id = r.u32();
            let frame_type = match r.u8() {
                0 => FrameType::Key,
                1 => FrameType::Delta,
                other => return Err(DecodeError::BadFrameType(other)),
            };
            let frag_id = r.u16();
            let frag_cnt = r.u16();
            if frag_cnt == 0 || frag_id >= frag_cnt {
                return Err(DecodeError::BadFragment { frag_id, frag_cnt });
            }
            let send_ts_us = r.u64();
            let sample = r.u32();
            Ok(Message::Video {
                header: VideoHeader {
                    frame_id,
                    frame_type,
                    frag_id,
                    frag_cnt,
                    send_ts_us,
                    tracking_sample_id: (sample != NO_SAMPLE).then_some(sample),
                },
                payload_len: data.len() - VIDEO_HEADER_BYTES,
            })
        }
        TAG_ACK => {
            exact_len(tag, data, ACK_BYTES)?;
            Ok(Message::Ack(Ack {
                frame_id: r.u32(),
                frag_id: r.u16(),
                send_ts_us: r.u64(),
            }))
        }
        other => Err(DecodeError::UnknownTag(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn frame_type() -> impl Strategy<Value = FrameType> {
        prop_oneof![Just(FrameType::Key), Just(FrameType::Delta)]
    }

    proptest! {
        #[test]
        fn decode_never_panics(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode(&data);
        }

        #[test]
        fn decode_with_valid_tag_never_panics(tag in 0u8..5, rest in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut data = vec![tag];
            data.extend(rest);
            let _ = decode(&data);
        }

        #[test]
        fn truncations_are_errors(id in any::<u32>(), ts in any::<u64>(), cut in 0usize..37) {
            let t = Tracking { sample_id: id, gen_time_us: ts, yaw_rad: 0.1, pitch_rad: -0.2, roll_rad: 0.3 };
            let b = encode_tracking(&t);
            prop_assert!(decode(&b[..cut]).is_err());
            let a = encode_ack(&Ack { frame_id: id, frag_id: 1, send_ts_us: ts });
            prop_assert!(decode(&a[..cut.min(ACK_BYTES - 1)]).is_err());
            let v = encode_video(&VideoHeader { frame_id: id, frame_type: FrameType::Key, frag_id: 0, frag_cnt: 1, send_ts_us: ts, tracking_sample_id: None }, 0);
            prop_assert!(decode(&v[..cut.min(VIDEO_HEADER_BYTES - 1)]).is_err());
        }

        #[test]
        fn tracking_round_trip(id in any::<u32>(), ts in any::<u64>(), y in -10.0f64..10.0, p in -10.0f64..10.0, r in -10.0f64..10.0) {
            let t = Tracking { sample_id: id, gen_time_us: ts, yaw_rad: y, pitch_rad: p, roll_rad: r };
            let b = encode_tracking(&t);
            prop_assert_eq!(b.len(), TRACKING_BYTES);
            prop_assert_eq!(decode(&b), Ok(Message::Tracking(t)));
        }

        #[test]
        fn video_round_trip(id in any::<u32>(), ft in frame_type(), cnt in 1u16.., frag in any::<u16>(), ts in any::<u64>(), sample in proptest::option::of(0u32..u32::MAX), payload in 0usize..1500, stamp in any::<u64>()) {
            let h = VideoHeader { frame_id: id, frame_type: ft, frag_id: frag % cnt, frag_cnt: cnt, send_ts_us: ts, tracking_sample_id: sample };
            let mut b = encode_video(&h, payload);
            prop_assert_eq!(b.len(), VIDEO_HEADER_BYTES + payload);
            prop_assert_eq!(decode(&b), Ok(Message::Video { header: h, payload_len: payload }));
            stamp_video_send_ts(&mut b, stamp);
            let h2 = VideoHeader { send_ts_us: stamp, ..h };
            prop_assert_eq!(decode(&b), Ok(Message::Video { header: h2, payload_len: payload }));
        }

        #[test]
        fn ack_round_trip(id in any::<u32>(), frag in any::<u16>(), ts in any::<u64>()) {
            let a = Ack { frame_id: id, frag_id: frag, send_ts_us: ts };
            let b = encode_ack(&a);
            prop_assert_eq!(b.len(), ACK_BYTES);
            prop_assert_eq!(decode(&b), Ok(Message::Ack(a)));
        }
    }

    #[test]
    fn specific_errors() {
        assert_eq!(decode(&[]), Err(DecodeError::Empty));
        assert_eq!(decode(&[9]), Err(DecodeError::UnknownTag(9)));
        let mut a = encode_ack(&Ack {
            frame_id: 1,
            frag_id: 2,
            send_ts_us: 3,
        });
        a.push(0);
        assert!(matches!(decode(&a), Err(DecodeError::TrailingBytes { .. })));
        let mut v = encode_video(
            &VideoHeader {
                frame_id: 1,
                frame_type: FrameType::Delta,
                frag_id: 0,
                frag_cnt: 1,
                send_ts_us: 0,
                tracking_sample_id: Some(4),
            },
            3,
        );
        v[5] = 7;
        assert_eq!(decode(&v), Err(DecodeError::BadFrameType(7)));
        v[5] = 1;
        v[6] = 0;
        v[7] = 1; // frag_id 1 of 1
        assert!(matches!(decode(&v), Err(DecodeError::BadFragment { .. })));
        let mut t = encode_tracking(&Tracking {
            sample_id: 0,
            gen_time_us: 0,
            yaw_rad: 0.0,
            pitch_rad: 0.0,
            roll_rad: 0.0,
        });
        t[13..21].copy_from_slice(&f64::NAN.to_bits().to_be_bytes());
        assert_eq!(decode(&t), Err(DecodeError::NonFiniteOrientation));
    }
}
