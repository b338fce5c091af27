//! H.264 access units ↔ RTP packets (RFC 6184, packetization-mode 1: single NAL unit packets
//! and FU-A fragments; STAP-A is understood on receipt), and the receiver's assembly of whole
//! frames by RTP timestamp.
//!
//! A frame is *complete* when the packet with the marker bit (RFC 6184 §5.1: last packet of
//! the access unit) arrived, every sequence number from the frame's first packet to it
//! arrived, and the packet just before the first one is known to belong to an earlier frame
//! (so no leading packet is missing). Frames leave in sequence order: when a frame completes,
//! every older frame still pending is reported lost (it can no longer be decoded in time).

use std::collections::BTreeMap;

use crate::rtp::{self, RtpHeader, SeqExtender, HEADER_BYTES};

const FU_A: u8 = 28;
const STAP_A: u8 = 24;

/// The NAL units of an Annex-B byte stream (start codes 00 00 01 or 00 00 00 01 removed).
pub fn split_annexb(b: &[u8]) -> Vec<&[u8]> {
    let mut starts = Vec::new(); // (start of the start code, start of the NAL)
    let mut i = 0;
    while i + 3 <= b.len() {
        if b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1 {
            let sc = if i > 0 && b[i - 1] == 0 { i - 1 } else { i };
            starts.push((sc, i + 3));
            i += 3;
        } else {
            i += 1;
        }
    }
    let mut out = Vec::with_capacity(starts.len());
    for (k, &(_, nal)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(b.len(), |&(sc, _)| sc);
        if end > nal {
            out.push(&b[nal..end]);
        }
    }
    out
}

/// Turns access units into RTP packets no longer than `max_packet_bytes` (header included).
#[derive(Debug, Clone)]
pub struct Packetizer {
    pub ssrc: u32,
    pub payload_type: u8,
    pub max_packet_bytes: usize,
    next_seq: u16,
}

impl Packetizer {
    pub fn new(ssrc: u32, payload_type: u8, max_packet_bytes: usize, first_seq: u16) -> Self {
        assert!(
            max_packet_bytes > HEADER_BYTES + 2,
            "packets too small for FU-A"
        );
        Packetizer {
            ssrc,
            payload_type,
            max_packet_bytes,
            next_seq: first_seq,
        }
    }

    fn packet(&mut self, ts: u32, marker: bool, parts: &[&[u8]]) -> Vec<u8> {
        let mut p = Vec::with_capacity(self.max_packet_bytes);
        RtpHeader {
            marker,
            payload_type: self.payload_type,
            seq: self.next_seq,
            timestamp: ts,
            ssrc: self.ssrc,
        }
        .write(&mut p);
        self.next_seq = self.next_seq.wrapping_add(1);
        for x in parts {
            p.extend_from_slice(x);
        }
        p
    }

    /// The RTP packets of one access unit (Annex-B), all with timestamp `ts`, the marker on
    /// the last one. An access unit without NAL units gives no packet.
    pub fn packetize(&mut self, au: &[u8], ts: u32) -> Vec<Vec<u8>> {
        let nals = split_annexb(au);
        let room = self.max_packet_bytes - HEADER_BYTES;
        let mut out = Vec::new();
        for (k, nal) in nals.iter().enumerate() {
            let last_nal = k + 1 == nals.len();
            if nal.len() <= room {
                out.push(self.packet(ts, last_nal, &[nal]));
                continue;
            }
            let (hdr, body) = (nal[0], &nal[1..]);
            let ind = (hdr & 0xe0) | FU_A;
            let chunks: Vec<&[u8]> = body.chunks(room - 2).collect();
            for (j, c) in chunks.iter().enumerate() {
                let (s, e) = (j == 0, j + 1 == chunks.len());
                let fu = ((s as u8) << 7) | ((e as u8) << 6) | (hdr & 0x1f);
                out.push(self.packet(ts, last_nal && e, &[&[ind, fu], c]));
            }
        }
        out
    }
}

/// RTP payloads (in sequence order) → the access unit in Annex-B. None if a FU-A sequence
/// is broken or a payload is malformed.
pub fn depacketize<'a>(payloads: impl IntoIterator<Item = &'a [u8]>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut in_fu = false;
    for p in payloads {
        let t = *p.first()? & 0x1f;
        match t {
            1..=23 => {
                if in_fu {
                    return None;
                }
                out.extend_from_slice(&[0, 0, 0, 1]);
                out.extend_from_slice(p);
            }
            STAP_A => {
                let mut r = &p[1..];
                while r.len() >= 2 {
                    let n = u16::from_be_bytes([r[0], r[1]]) as usize;
                    let nal = r.get(2..2 + n)?;
                    out.extend_from_slice(&[0, 0, 0, 1]);
                    out.extend_from_slice(nal);
                    r = &r[2 + n..];
                }
            }
            FU_A => {
                let fu = *p.get(1)?;
                let (s, e) = (fu & 0x80 != 0, fu & 0x40 != 0);
                if s {
                    if in_fu {
                        return None;
                    }
                    out.extend_from_slice(&[0, 0, 0, 1, (p[0] & 0xe0) | (fu & 0x1f)]);
                    in_fu = true;
                } else if !in_fu {
                    return None;
                }
                out.extend_from_slice(&p[2..]);
                if e {
                    in_fu = false;
                }
            }
            _ => return None,
        }
    }
    (!in_fu).then_some(out)
}

/// Whether an RTP payload begins a NAL unit (single NAL, STAP-A, or a FU-A with S set).
fn starts_nal(p: &[u8]) -> bool {
    match p.first().map(|b| b & 0x1f) {
        Some(1..=23) | Some(STAP_A) => true,
        Some(FU_A) => p.get(1).is_some_and(|fu| fu & 0x80 != 0),
        _ => false,
    }
}

/// What the assembler hands on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assembled {
    /// A whole access unit (Annex-B) with its RTP timestamp.
    Complete { timestamp: u32, au: Vec<u8> },
    /// A frame of which packets arrived but that can never be complete.
    Lost { timestamp: u32 },
}

#[derive(Debug, Default)]
struct Pending {
    timestamp: u32,
    packets: BTreeMap<u64, (bool, Vec<u8>)>, // ext seq -> (marker, payload)
}

/// Reassembles frames from RTP packets that may be lost, duplicated or reordered.
#[derive(Debug, Default)]
pub struct Assembler {
    ext: SeqExtender,
    frames: BTreeMap<u64, Pending>, // first ext seq seen -> frame
    seq_ts: BTreeMap<u64, u32>,     // recent ext seq -> timestamp (boundary detection)
    emitted_up_to: Option<u64>,     // highest ext seq of a frame already handed on
    first_seen: Option<u64>,        // the stream's first packet (no predecessor to test)
}

impl Assembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one RTP packet; returns the frames this decides, oldest first.
    pub fn push(&mut self, pkt: &[u8]) -> Result<Vec<Assembled>, rtp::RtpError> {
        let (h, payload) = rtp::parse(pkt)?;
        let s = self.ext.extend(h.seq);
        if self.emitted_up_to.is_some_and(|e| s <= e) || self.seq_ts.contains_key(&s) {
            return Ok(Vec::new()); // late or duplicate
        }
        self.seq_ts.insert(s, h.timestamp);
        if self.first_seen.is_none() && starts_nal(payload) {
            self.first_seen = Some(s);
        }
        self.first_seen.get_or_insert(u64::MAX);
        // The frame this packet belongs to: a pending one with the same timestamp.
        let key = self
            .frames
            .iter()
            .find(|(_, f)| f.timestamp == h.timestamp)
            .map(|(k, _)| *k);
        let key = match key {
            Some(k) if s < k => {
                let f = self.frames.remove(&k).unwrap();
                self.frames.insert(s, f);
                s
            }
            Some(k) => k,
            None => {
                self.frames.insert(
                    s,
                    Pending {
                        timestamp: h.timestamp,
                        ..Default::default()
                    },
                );
                s
            }
        };
        self.frames
            .get_mut(&key)
            .unwrap()
            .packets
            .insert(s, (h.marker, payload.to_vec()));
        Ok(self.decide())
    }

    fn complete(&self, first: u64, f: &Pending) -> Option<Vec<u8>> {
        let (&last, &(marker, _)) = f.packets.iter().next_back()?;
        let contiguous = (last - first + 1) as usize == f.packets.len();
        let boundary = first > 0
            && (self
                .seq_ts
                .get(&(first - 1))
                .is_some_and(|&t| t != f.timestamp)
                || self.emitted_up_to == Some(first - 1)
                || self.first_seen == Some(first));
        if !(marker && contiguous && boundary) {
            return None;
        }
        depacketize(f.packets.values().map(|(_, p)| p.as_slice()))
    }

    fn decide(&mut self) -> Vec<Assembled> {
        let mut out = Vec::new();
        loop {
            let done = self
                .frames
                .iter()
                .find_map(|(&k, f)| self.complete(k, f).map(|au| (k, au)));
            let Some((k, au)) = done else { break };
            let older: Vec<u64> = self.frames.range(..k).map(|(&o, _)| o).collect();
            for o in older {
                let f = self.frames.remove(&o).unwrap();
                out.push(Assembled::Lost {
                    timestamp: f.timestamp,
                });
            }
            let f = self.frames.remove(&k).unwrap();
            self.emitted_up_to = Some(*f.packets.keys().next_back().unwrap());
            out.push(Assembled::Complete {
                timestamp: f.timestamp,
                au,
            });
        }
        if let Some(e) = self.emitted_up_to {
            // keep the packet just before the next frame for its boundary test
            self.seq_ts = self.seq_ts.split_off(&e);
        }
        out
    }

    /// Every frame still pending, as lost (the end of the stream).
    pub fn flush(&mut self) -> Vec<Assembled> {
        std::mem::take(&mut self.frames)
            .into_values()
            .map(|f| Assembled::Lost {
                timestamp: f.timestamp,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn au(sizes: &[usize], seed: u8) -> Vec<u8> {
        let mut v = Vec::new();
        for (k, &n) in sizes.iter().enumerate() {
            v.extend_from_slice(&[0, 0, 0, 1, 0x65]);
            // payload bytes never form a start code: values 1..=255
            v.extend((0..n).map(|i| ((i as u8) ^ seed ^ (k as u8)) | 1));
        }
        v
    }

    #[test]
    fn split_finds_three_and_four_byte_start_codes() {
        let b = [0, 0, 1, 9, 0, 0, 0, 1, 7, 7, 0, 0, 1, 8];
        assert_eq!(split_annexb(&b), vec![&[9][..], &[7, 7], &[8]]);
    }

    #[test]
    fn packets_fit_the_mtu_and_round_trip() {
        let mut p = Packetizer::new(1, 96, 1200, 65530);
        let a = au(&[20, 5000, 1187], 3);
        let pkts = p.packetize(&a, 3600);
        assert!(pkts.iter().all(|x| x.len() <= 1200));
        // NALs of 21 B and 1188 B fit one packet each; 5001 B needs ceil(5000 / 1186) = 5 FU-As
        assert_eq!(pkts.len(), 1 + 5 + 1);
        let marks: Vec<bool> = pkts
            .iter()
            .map(|x| rtp::parse(x).unwrap().0.marker)
            .collect();
        assert_eq!(marks, [false, false, false, false, false, false, true]);
        let mut asm = Assembler::new();
        // a previous frame (seq 65529) marks the boundary of this one
        let mut q = Packetizer::new(1, 96, 1200, 65529);
        let mut got = asm.push(&q.packetize(&au(&[10], 1), 0)[0]).unwrap();
        for x in &pkts {
            got.extend(asm.push(x).unwrap());
        }
        assert_eq!(
            got.last(),
            Some(&Assembled::Complete {
                timestamp: 3600,
                au: a
            })
        );
    }

    fn stream(frames: usize) -> (Vec<Vec<u8>>, Vec<Vec<Vec<u8>>>) {
        let mut p = Packetizer::new(9, 96, 1200, 100);
        let aus: Vec<Vec<u8>> = (0..frames).map(|i| au(&[30, 2000], i as u8)).collect();
        let pk = aus
            .iter()
            .enumerate()
            .map(|(i, a)| p.packetize(a, i as u32 * 3600))
            .collect();
        (aus, pk)
    }

    #[test]
    fn a_lost_fragment_loses_its_frame_only() {
        let (aus, pk) = stream(4);
        let mut asm = Assembler::new();
        let mut got = Vec::new();
        for (i, f) in pk.iter().enumerate() {
            for (j, x) in f.iter().enumerate() {
                if i == 2 && j == 1 {
                    continue; // a middle FU-A of frame 2
                }
                got.extend(asm.push(x).unwrap());
            }
        }
        got.extend(asm.flush());
        // frame 0 starts the stream: its first packet begins a NAL, so it completes
        assert_eq!(
            got,
            vec![
                Assembled::Complete {
                    timestamp: 0,
                    au: aus[0].clone()
                },
                Assembled::Complete {
                    timestamp: 3600,
                    au: aus[1].clone()
                },
                Assembled::Lost { timestamp: 7200 },
                Assembled::Complete {
                    timestamp: 10800,
                    au: aus[3].clone()
                },
            ]
        );
    }

    #[test]
    fn reordering_and_duplicates_still_complete() {
        let (aus, pk) = stream(3);
        let mut asm = Assembler::new();
        let mut got = Vec::new();
        let mut order: Vec<&Vec<u8>> = pk.iter().flatten().collect();
        order.swap(4, 5);
        order.insert(3, order[2]);
        for x in order {
            got.extend(asm.push(x).unwrap());
        }
        let complete: Vec<u32> = got
            .iter()
            .filter_map(|a| match a {
                Assembled::Complete { timestamp, au } => {
                    assert_eq!(au, &aus[(*timestamp / 3600) as usize]);
                    Some(*timestamp)
                }
                _ => None,
            })
            .collect();
        assert_eq!(complete, vec![0, 3600, 7200]);
    }
}
