//! Video receiver: reassembles frames and decodes them in order.
//!
//! A frame is decodable when all its fragments are there and it is a key frame or its
//! reference (the frame right before it) was decoded. When the next frame is not decodable
//! but a complete key frame later exists, the receiver skips ahead to the latest such key frame.
//! Decoded frames are displayed at once.

use crate::config::FrameType;
use crate::wire::{DecodeError, VideoHeader};
use std::collections::BTreeMap;

/// At most this many frames are buffered ahead of the decoder; the oldest are dropped beyond.
pub const MAX_BUFFERED_FRAMES: usize = 512;

struct PartialFrame {
    frame_type: FrameType,
    frag_cnt: u16,
    got: Vec<u64>,
    n_got: u32,
    tracking_sample_id: Option<u32>,
}

impl PartialFrame {
    fn complete(&self) -> bool {
        self.n_got == self.frag_cnt as u32
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    pub frame_id: u32,
    pub frame_type: FrameType,
    pub tracking_sample_id: Option<u32>,
}

/// What a fragment did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FragmentOutcome {
    /// The fragment was seen before (a retransmission that crossed its ACK).
    pub duplicate: bool,
    /// The fragment belongs to a frame already decoded or skipped.
    pub late: bool,
    pub decoded: Vec<Decoded>,
    /// Frames passed over when skipping ahead to a key frame.
    pub skipped_frames: u64,
}

#[derive(Default)]
pub struct Receiver {
    frames: BTreeMap<u32, PartialFrame>,
    next_frame: u32,
    last_decoded: Option<u32>,
}

impl Receiver {
    pub fn on_fragment(&mut self, h: &VideoHeader) -> Result<FragmentOutcome, DecodeError> {
        let mut out = FragmentOutcome::default();
        if h.frame_id < self.next_frame {
            out.late = true;
            return Ok(out);
        }
        let f = self
            .frames
            .entry(h.frame_id)
            .or_insert_with(|| PartialFrame {
                frame_type: h.frame_type,
                frag_cnt: h.frag_cnt,
                got: vec![0; (h.frag_cnt as usize).div_ceil(64)],
                n_got: 0,
                tracking_sample_id: h.tracking_sample_id,
            });
        if f.frame_type != h.frame_type
            || f.frag_cnt != h.frag_cnt
            || f.tracking_sample_id != h.tracking_sample_id
        {
            return Err(DecodeError::InconsistentFrame {
                frame_id: h.frame_id,
            });
        }
        let (word, bit) = (h.frag_id as usize / 64, h.frag_id % 64);
        // frag_id < frag_cnt is guaranteed by the decoder; stay total regardless.
        match f.got.get_mut(word) {
            Some(w) if *w & (1u64 << bit) != 0 => out.duplicate = true,
            Some(w) => {
                *w |= 1u64 << bit;
                f.n_got += 1;
            }
            None => {
                return Err(DecodeError::BadFragment {
                    frag_id: h.frag_id,
                    frag_cnt: h.frag_cnt,
                })
            }
        }
        self.decode_ready(&mut out);
        while self.frames.len() > MAX_BUFFERED_FRAMES {
            self.frames.pop_first();
        }
        Ok(out)
    }

    fn decodable(&self, id: u32) -> bool {
        self.frames.get(&id).is_some_and(|f| {
            f.complete()
                && (f.frame_type == FrameType::Key || (id > 0 && self.last_decoded == Some(id - 1)))
        })
    }

    fn decode_ready(&mut self, out: &mut FragmentOutcome) {
        loop {
            let id = if self.decodable(self.next_frame) {
                self.next_frame
            } else {
                let later_key = self
                    .frames
                    .range(self.next_frame.saturating_add(1)..)
                    .rev()
                    .find(|(_, f)| f.complete() && f.frame_type == FrameType::Key)
                    .map(|(&id, _)| id);
                match later_key {
                    Some(k) => {
                        out.skipped_frames += (k - self.next_frame) as u64;
                        k
                    }
                    None => break,
                }
            };
            let Some(f) = self.frames.remove(&id) else {
                break;
            };
            // forget everything older than the decoded frame
            while self.frames.first_key_value().is_some_and(|(&k, _)| k < id) {
                self.frames.pop_first();
            }
            out.decoded.push(Decoded {
                frame_id: id,
                frame_type: f.frame_type,
                tracking_sample_id: f.tracking_sample_id,
            });
            self.last_decoded = Some(id);
            match id.checked_add(1) {
                Some(n) => self.next_frame = n,
                None => break,
            }
        }
    }

    /// The id of the next frame the decoder waits for.
    pub fn next_frame(&self) -> u32 {
        self.next_frame
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(frame_id: u32, key: bool, frag_id: u16, frag_cnt: u16) -> VideoHeader {
        VideoHeader {
            frame_id,
            frame_type: if key {
                FrameType::Key
            } else {
                FrameType::Delta
            },
            frag_id,
            frag_cnt,
            send_ts_us: 0,
            tracking_sample_id: None,
        }
    }

    fn ids(o: &FragmentOutcome) -> Vec<u32> {
        o.decoded.iter().map(|d| d.frame_id).collect()
    }

    #[test]
    fn decodes_in_order_once_complete() {
        let mut r = Receiver::default();
        assert!(ids(&r.on_fragment(&frag(0, true, 1, 2)).unwrap()).is_empty());
        assert_eq!(ids(&r.on_fragment(&frag(0, true, 0, 2)).unwrap()), vec![0]);
        // frame 2 arrives before frame 1: waits
        assert!(ids(&r.on_fragment(&frag(2, false, 0, 1)).unwrap()).is_empty());
        assert_eq!(
            ids(&r.on_fragment(&frag(1, false, 0, 1)).unwrap()),
            vec![1, 2]
        );
        assert!(r.on_fragment(&frag(1, false, 0, 1)).unwrap().late);
    }

    #[test]
    fn lost_delta_blocks_until_a_key_frame() {
        let mut r = Receiver::default();
        r.on_fragment(&frag(0, true, 0, 1)).unwrap();
        // frame 1 lost; 2 and 3 complete but not decodable
        assert!(ids(&r.on_fragment(&frag(2, false, 0, 1)).unwrap()).is_empty());
        assert!(ids(&r.on_fragment(&frag(3, false, 0, 1)).unwrap()).is_empty());
        let o = r.on_fragment(&frag(4, true, 0, 1)).unwrap();
        assert_eq!(ids(&o), vec![4]);
        assert_eq!(o.skipped_frames, 3);
        assert_eq!(ids(&r.on_fragment(&frag(5, false, 0, 1)).unwrap()), vec![5]);
    }

    #[test]
    fn first_frame_must_be_a_key_frame() {
        let mut r = Receiver::default();
        assert!(ids(&r.on_fragment(&frag(0, false, 0, 1)).unwrap()).is_empty());
        assert_eq!(ids(&r.on_fragment(&frag(1, true, 0, 1)).unwrap()), vec![1]);
    }

    #[test]
    fn duplicates_and_inconsistent_fragments() {
        let mut r = Receiver::default();
        r.on_fragment(&frag(0, true, 0, 3)).unwrap();
        assert!(r.on_fragment(&frag(0, true, 0, 3)).unwrap().duplicate);
        assert!(matches!(
            r.on_fragment(&frag(0, true, 1, 4)),
            Err(DecodeError::InconsistentFrame { frame_id: 0 })
        ));
    }

    #[test]
    fn buffer_is_bounded() {
        let mut r = Receiver::default();
        for id in 1..2000 {
            r.on_fragment(&frag(id, false, 0, 2)).unwrap();
        }
        assert!(r.frames.len() <= MAX_BUFFERED_FRAMES);
    }
}
