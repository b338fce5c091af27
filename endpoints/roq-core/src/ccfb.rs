//! RTCP congestion control feedback (RFC 8888): one report block for one SSRC.
//!
//! ```text
//! |V=2|P| FMT=11 |  PT=205  |  length  |  SSRC of sender  |  SSRC of the media  |
//! |  begin_seq  |  num_reports  |  R|ECN|ATO (16 bit) × num_reports (+ pad)  |  RTS  |
//! ```
//! ATO is the arrival time offset before the Report Timestamp (RTS, NTP "middle 32 bits",
//! 1/65536 s) in 1/1024 s; 0x1FFE means "≥ 8189/1024 s", 0x1FFF "not available".

use std::collections::BTreeMap;

pub const PT_RTPFB: u8 = 205;
pub const FMT_CCFB: u8 = 11;
const ATO_MAX: u16 = 0x1ffe;
const ATO_NA: u16 = 0x1fff;

/// One packet's report: received or not and, if received, its arrival time (µs, receiver
/// clock, at 1/1024 s resolution).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketReport {
    pub seq: u16,
    pub arrival_us: Option<u64>,
    pub ecn: u8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ccfb {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
    pub begin_seq: u16,
    pub reports: Vec<PacketReport>,
    /// The report time, µs of the receiver's clock (NTP middle 32 bits on the wire).
    pub report_us: u64,
}

fn us_to_rts(us: u64) -> u32 {
    ((us as u128 * 65536 / 1_000_000) & 0xffff_ffff) as u32
}

impl Ccfb {
    pub fn encode(&self) -> Vec<u8> {
        let n = self.reports.len();
        let words = 3 + n.div_ceil(2) + 1; // the length field: 32-bit words after the first
        let mut b = Vec::with_capacity(4 * (words + 1));
        b.push(0x80 | FMT_CCFB);
        b.push(PT_RTPFB);
        b.extend_from_slice(&(words as u16).to_be_bytes());
        b.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        b.extend_from_slice(&self.media_ssrc.to_be_bytes());
        b.extend_from_slice(&self.begin_seq.to_be_bytes());
        b.extend_from_slice(&(n as u16).to_be_bytes());
        for r in &self.reports {
            let v = match r.arrival_us {
                None => 0,
                Some(a) => {
                    let d = self.report_us.saturating_sub(a) * 1024 / 1_000_000;
                    0x8000 | ((r.ecn as u16 & 3) << 13) | (d.min(ATO_MAX as u64) as u16)
                }
            };
            b.extend_from_slice(&v.to_be_bytes());
        }
        if n % 2 == 1 {
            b.extend_from_slice(&[0, 0]);
        }
        b.extend_from_slice(&us_to_rts(self.report_us).to_be_bytes());
        b
    }

    /// Parses a CCFB; `rts_to_us` maps the 32-bit report timestamp to µs of the receiver
    /// clock (the sender keeps the high bits: see [`RtsUnwrapper`]).
    pub fn decode(b: &[u8], rts_to_us: &mut RtsUnwrapper) -> Result<Ccfb, String> {
        if b.len() < 20 || b[0] >> 6 != 2 || b[0] & 0x1f != FMT_CCFB || b[1] != PT_RTPFB {
            return Err("not an RFC 8888 CCFB packet".into());
        }
        let words = u16::from_be_bytes([b[2], b[3]]) as usize;
        if b.len() < 4 * (words + 1) {
            return Err(format!(
                "CCFB of {} bytes, length says {}",
                b.len(),
                4 * (words + 1)
            ));
        }
        let n = u16::from_be_bytes([b[14], b[15]]) as usize;
        if 4 * (words + 1) != 16 + 2 * n + 2 * (n % 2) + 4 {
            return Err("CCFB with more than one report block".into());
        }
        let rts_off = 16 + 2 * n + 2 * (n % 2);
        let rts = u32::from_be_bytes(b[rts_off..rts_off + 4].try_into().unwrap());
        let report_us = rts_to_us.unwrap(rts);
        let begin_seq = u16::from_be_bytes([b[12], b[13]]);
        let mut reports = Vec::with_capacity(n);
        for i in 0..n {
            let v = u16::from_be_bytes([b[16 + 2 * i], b[17 + 2 * i]]);
            let ato = v & 0x1fff;
            let arrival_us = (v & 0x8000 != 0 && ato != ATO_NA)
                .then(|| report_us.saturating_sub(ato as u64 * 1_000_000 / 1024));
            reports.push(PacketReport {
                seq: begin_seq.wrapping_add(i as u16),
                arrival_us,
                ecn: ((v >> 13) & 3) as u8,
            });
        }
        Ok(Ccfb {
            sender_ssrc: u32::from_be_bytes(b[4..8].try_into().unwrap()),
            media_ssrc: u32::from_be_bytes(b[8..12].try_into().unwrap()),
            begin_seq,
            reports,
            report_us,
        })
    }
}

/// Recovers µs from 32-bit report timestamps (16.16 s, wraps every 18 h) that only go up.
#[derive(Debug, Default)]
pub struct RtsUnwrapper {
    last: Option<u64>, // in 1/65536 s
}

impl RtsUnwrapper {
    pub fn unwrap(&mut self, rts: u32) -> u64 {
        let full = match self.last {
            None => rts as u64,
            Some(l) => {
                let mut f = (l & !0xffff_ffff) | rts as u64;
                if f + (1 << 31) < l {
                    f += 1 << 32;
                }
                f
            }
        };
        self.last = Some(full.max(self.last.unwrap_or(0)));
        (full as u128 * 1_000_000 / 65536) as u64
    }
}

/// The receiver's side: records arrivals and writes reports.
#[derive(Debug)]
pub struct FeedbackBuilder {
    pub sender_ssrc: u32,
    pub max_reports: usize,
    /// Packets already reported are reported again this many times below the last report's
    /// highest sequence number (so one lost report loses no information).
    pub overlap: u64,
    arrivals: BTreeMap<u64, u64>, // ext seq -> arrival µs
    media_ssrc: Option<u32>,
    next_begin: Option<u64>,
}

impl FeedbackBuilder {
    pub fn new(sender_ssrc: u32, max_reports: usize, overlap: u64) -> Self {
        FeedbackBuilder {
            sender_ssrc,
            max_reports,
            overlap,
            arrivals: BTreeMap::new(),
            media_ssrc: None,
            next_begin: None,
        }
    }

    pub fn on_packet(&mut self, media_ssrc: u32, ext_seq: u64, arrival_us: u64) {
        self.media_ssrc = Some(media_ssrc);
        self.arrivals.entry(ext_seq).or_insert(arrival_us);
        if self.next_begin.is_none() {
            self.next_begin = Some(ext_seq);
        }
    }

    /// A report of everything since the last one (and `overlap` before), or None if no new
    /// packet arrived.
    pub fn report(&mut self, now_us: u64) -> Option<Ccfb> {
        let (&high, _) = self.arrivals.iter().next_back()?;
        let begin = self.next_begin?;
        if begin > high {
            return None;
        }
        let lo = begin
            .saturating_sub(self.overlap)
            .max(high + 1 - self.max_reports as u64);
        let lo = lo.max(*self.arrivals.keys().next().unwrap());
        let reports = (lo..=high)
            .map(|s| PacketReport {
                seq: s as u16,
                arrival_us: self.arrivals.get(&s).copied(),
                ecn: 0,
            })
            .collect();
        self.next_begin = Some(high + 1);
        // forget what can no longer be reported
        self.arrivals = self
            .arrivals
            .split_off(&(high + 1).saturating_sub(self.overlap));
        Some(Ccfb {
            sender_ssrc: self.sender_ssrc,
            media_ssrc: self.media_ssrc.unwrap_or(0),
            begin_seq: lo as u16,
            reports,
            report_us: now_us,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_round_trip_with_a_loss() {
        let mut fb = FeedbackBuilder::new(1, 256, 0);
        for (s, t) in [
            (65534u64, 1_000_000u64),
            (65535, 1_010_000),
            (65537, 1_030_000),
        ] {
            fb.on_packet(42, s, t);
        }
        let r = fb.report(1_040_000).unwrap();
        let wire = r.encode();
        assert_eq!(wire.len() % 4, 0);
        let d = Ccfb::decode(&wire, &mut RtsUnwrapper::default()).unwrap();
        assert_eq!((d.media_ssrc, d.begin_seq, d.reports.len()), (42, 65534, 4));
        let got: Vec<(u16, bool)> = d
            .reports
            .iter()
            .map(|r| (r.seq, r.arrival_us.is_some()))
            .collect();
        assert_eq!(got, [(65534, true), (65535, true), (0, false), (1, true)]);
        // arrival times survive to within the 1/1024 s and 1/65536 s quantisation
        let rel = |x: u64| x as i64 - d.report_us as i64;
        let a = d.reports[0].arrival_us.unwrap();
        assert!((rel(a) + 40_000).abs() <= 2_000, "{}", rel(a));
        // nothing new: no report
        assert_eq!(fb.report(1_050_000), None);
    }

    #[test]
    fn rts_unwraps_past_32_bits() {
        let mut u = RtsUnwrapper::default();
        let a = u.unwrap(0xffff_0000);
        let b = u.unwrap(0x0000_1000);
        assert!(b > a && b - a < 2_000_000, "{a} {b}");
    }
}
