//! Picture Loss Indication (RFC 4585 §6.3.1): the RTCP payload-specific feedback message and
//! the receiver's decision to send one, a pure state machine driven by time (µs) and by the
//! frames the assembler hands on.
//!
//! ```text
//! |V=2|P|FMT=1|  PT=206 (PSFB)  |  length = 2  |  SSRC of packet sender  |  SSRC of media source  |
//! ```
//! RFC 4585 §6.3.1.2: a PLI carries no Feedback Control Information, so its length is 2 (three
//! 32-bit words: 12 bytes). It travels alone, as a reduced-size RTCP packet (RFC 5506), as the
//! RFC 8888 reports of this receiver do, on the RTP flow (RFC 5761 multiplexing).
//!
//! When ([`PliRequester`]): H.264 from x264 (tune zerolatency) predicts every frame from the
//! ones before it, so a frame lost or damaged breaks the prediction chain for every frame after
//! it until the next IDR. The receiver sees the break when the assembler reports a frame lost,
//! or when a complete frame that is not an IDR arrives before any IDR (the stream's first IDR
//! was lost). It then asks for an IDR with one PLI. Timing, RFC 4585 §3.5 for a unicast
//! session (two members, so T_dither_max = 0, §3.5.1):
//! - a PLI goes out at once as early feedback if `allow_early`; the next regular report is then
//!   skipped (tn = tp + 2·T_rr, tp = the previous tn) and `allow_early` stays false until that
//!   report is due (§3.5.2 steps 4 and 5);
//! - otherwise the PLI waits for the next regular report at tn (§3.5.2 step 4; T_max_fb_delay
//!   is taken as unbounded: a picture loss stays worth reporting until an IDR arrives).
//! - While a PLI is outstanding (no IDR arrived since it was sent), further losses and
//!   undecodable frames ask for nothing more for `repeat_us`; then, if no IDR has arrived, the
//!   receiver asks again (the PLI or its IDR may have been lost). RFC 4585 sets no such interval;
//!   it is the shell's `assumption:` (endpoints/README.md, "roq").
//!
//! [`Recovery::NextIdr`] is the behaviour without PLI: the same state is tracked (what a PLI
//! would have been sent for is counted) but nothing is ever sent, and the decoder waits for
//! the encoder's next periodic or scene-cut IDR.

/// RTCP packet type of payload-specific feedback (RFC 4585 §6.1).
pub const PT_PSFB: u8 = 206;
/// Feedback message type of a PLI (RFC 4585 §6.3).
pub const FMT_PLI: u8 = 1;
/// A PLI's size on the wire.
pub const PLI_BYTES: usize = 12;

/// A Picture Loss Indication: `sender_ssrc` (the receiver that sends it) asks the source
/// `media_ssrc` for a decoder refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pli {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
}

impl Pli {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(PLI_BYTES);
        b.push(0x80 | FMT_PLI); // V=2, P=0, FMT=1
        b.push(PT_PSFB);
        b.extend_from_slice(&2u16.to_be_bytes()); // 32-bit words after the first
        b.extend_from_slice(&self.sender_ssrc.to_be_bytes());
        b.extend_from_slice(&self.media_ssrc.to_be_bytes());
        b
    }

    /// Parses a PLI; an error says why the packet is not one.
    pub fn decode(b: &[u8]) -> Result<Pli, String> {
        if b.len() < PLI_BYTES {
            return Err(format!("{} bytes: a PLI has {PLI_BYTES}", b.len()));
        }
        if b[0] >> 6 != 2 || b[0] & 0x1f != FMT_PLI || b[1] != PT_PSFB {
            return Err("not an RTCP PSFB packet with FMT=1 (PLI)".into());
        }
        let words = u16::from_be_bytes([b[2], b[3]]) as usize;
        if words != 2 {
            return Err(format!(
                "PLI with length {words}: RFC 4585 §6.3.1.2 requires 2"
            ));
        }
        Ok(Pli {
            sender_ssrc: u32::from_be_bytes(b[4..8].try_into().unwrap()),
            media_ssrc: u32::from_be_bytes(b[8..12].try_into().unwrap()),
        })
    }
}

/// What the receiver does when the prediction chain breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// ask for an IDR with a PLI (RFC 4585), as a real receiver does
    Pli,
    /// send nothing; wait for the encoder's next IDR (the behaviour before PLI)
    NextIdr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PliConfig {
    pub recovery: Recovery,
    /// T_rr: the interval between the receiver's regular RTCP reports (RFC 4585 §3.5.3).
    pub rtcp_interval_us: u64,
    /// How long an unanswered PLI holds back the next one.
    pub repeat_us: u64,
}

/// What the assembler decided about one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameEvent {
    /// a whole access unit; `idr` if it holds an IDR slice (NAL type 5)
    Complete { idr: bool },
    /// a frame that can no longer be complete
    Lost,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chain {
    /// no frame yet
    Start,
    /// every frame since the last IDR arrived whole: pictures decode
    Intact,
    /// a frame was lost (or the first IDR never came): nothing decodes until an IDR
    Broken,
}

/// Counters for summary.json.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PliStats {
    /// PLIs handed to the shell to send
    pub sent: u64,
    /// times the chain broke (a PLI was, or under `NextIdr` would have been, asked for)
    pub breaks: u64,
    /// complete frames that arrived while the chain was broken (undecodable)
    pub undecodable_frames: u64,
    /// µs the chain spent broken, summed over its closed breaks
    pub broken_us: u64,
}

/// The receiver's PLI decision (see the module's documentation).
#[derive(Debug, Clone)]
pub struct PliRequester {
    cfg: PliConfig,
    chain: Chain,
    broken_since: Option<u64>,
    /// when the outstanding PLI went out (cleared by an IDR)
    requested_at: Option<u64>,
    /// a PLI waits for the next regular report
    pending: bool,
    /// a PLI is ready for the shell to send
    ready: bool,
    allow_early: bool,
    /// (tp, tn): the last and next regular report times, from the first event on
    schedule: Option<(u64, u64)>,
    stats: PliStats,
}

impl PliRequester {
    pub fn new(cfg: PliConfig) -> Self {
        assert!(cfg.rtcp_interval_us > 0, "T_rr must be positive");
        PliRequester {
            cfg,
            chain: Chain::Start,
            broken_since: None,
            requested_at: None,
            pending: false,
            ready: false,
            allow_early: true,
            schedule: None,
            stats: PliStats::default(),
        }
    }

    pub fn stats(&self) -> PliStats {
        self.stats
    }

    /// Whether pictures decode now (every frame since the last IDR arrived).
    pub fn intact(&self) -> bool {
        self.chain == Chain::Intact
    }

    /// One frame decided by the assembler at `now_us`.
    pub fn on_frame(&mut self, now_us: u64, ev: FrameEvent) {
        // the regular reports up to now; a repeat due now is decided by the frame itself (an
        // IDR makes it moot, a loss or an undecodable frame asks again)
        self.advance_reports(now_us);
        match ev {
            FrameEvent::Complete { idr: true } => {
                if let Some(s) = self.broken_since.take() {
                    self.stats.broken_us += now_us.saturating_sub(s);
                }
                self.chain = Chain::Intact;
                self.requested_at = None;
                self.pending = false; // not sent, not counted
            }
            FrameEvent::Complete { idr: false } if self.chain == Chain::Intact => {}
            FrameEvent::Complete { idr: false } => {
                self.stats.undecodable_frames += 1;
                self.break_chain(now_us);
            }
            FrameEvent::Lost => self.break_chain(now_us),
        }
    }

    fn break_chain(&mut self, now_us: u64) {
        if self.chain != Chain::Broken {
            self.chain = Chain::Broken;
            self.broken_since = Some(now_us);
            self.stats.breaks += 1;
        }
        self.want(now_us);
    }

    /// Asks for an IDR unless one is already asked for.
    fn want(&mut self, now_us: u64) {
        if self.cfg.recovery == Recovery::NextIdr || self.pending || self.ready {
            return;
        }
        if self
            .requested_at
            .is_some_and(|t| now_us < t + self.cfg.repeat_us)
        {
            return;
        }
        if self.allow_early {
            // early feedback (§3.5.2 step 5): now, and skip the next regular report
            let (tp, tn) = self.schedule(now_us);
            self.schedule = Some((tn, tp + 2 * self.cfg.rtcp_interval_us));
            self.allow_early = false;
            self.send(now_us);
        } else {
            self.pending = true;
        }
    }

    fn schedule(&mut self, now_us: u64) -> (u64, u64) {
        *self
            .schedule
            .get_or_insert((now_us, now_us + self.cfg.rtcp_interval_us))
    }

    fn send(&mut self, now_us: u64) {
        self.ready = true;
        self.requested_at = Some(now_us);
        self.stats.sent += 1;
    }

    /// Advances the regular reports to `now_us`; a pending PLI leaves with the first one due,
    /// and an unanswered one is repeated once `repeat_us` has passed.
    pub fn handle_timeout(&mut self, now_us: u64) {
        self.advance_reports(now_us);
        if self.chain == Chain::Broken
            && self
                .requested_at
                .is_some_and(|t| now_us >= t + self.cfg.repeat_us)
        {
            self.want(now_us);
        }
    }

    /// The regular reports due up to `now_us`: each allows early feedback again and takes a
    /// pending PLI.
    fn advance_reports(&mut self, now_us: u64) {
        let (mut tp, mut tn) = self.schedule(now_us);
        while tn <= now_us {
            // a regular report is due at tn (sent or suppressed): early feedback is allowed again
            self.allow_early = true;
            if self.pending {
                self.pending = false;
                self.send(tn);
            }
            tp = tn;
            tn += self.cfg.rtcp_interval_us;
        }
        self.schedule = Some((tp, tn));
    }

    /// When [`handle_timeout`](Self::handle_timeout) has something to do next: the next
    /// regular report while a PLI waits for it, or the repeat of an unanswered PLI. A time
    /// at or before now is always cleared by calling it (no busy loop).
    pub fn poll_timeout(&self) -> Option<u64> {
        let regular = self.schedule.map(|(_, tn)| tn).filter(|_| self.pending);
        // a repeat that is already pending or ready waits for nothing more
        let repeat = self
            .requested_at
            .filter(|_| {
                self.chain == Chain::Broken
                    && self.cfg.recovery == Recovery::Pli
                    && !self.pending
                    && !self.ready
            })
            .map(|t| t + self.cfg.repeat_us);
        match (regular, repeat) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether to send a PLI now (true once per PLI).
    pub fn poll_pli(&mut self) -> bool {
        std::mem::take(&mut self.ready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pli_bytes_are_rfc_4585_section_6_3_1() {
        let p = Pli {
            sender_ssrc: 0x0000_feed,
            media_ssrc: 0x0005_ca1e,
        };
        let b = p.encode();
        assert_eq!(
            b,
            [
                0x81, 0xce, 0x00, 0x02, // V=2 P=0 FMT=1, PT=206, length 2
                0x00, 0x00, 0xfe, 0xed, // SSRC of packet sender
                0x00, 0x05, 0xca, 0x1e, // SSRC of media source
            ]
        );
        assert_eq!(Pli::decode(&b), Ok(p));
        // RFC 5761: the second byte (206) marks it as RTCP on the RTP flow
        assert!(crate::rtp::is_rtcp(&b));
    }

    /// Random frame events over a minute, timeouts handled when they fall due (as the shell
    /// does): handling a timeout always clears it (the shell cannot spin), and without an IDR
    /// in between two PLIs are at least `repeat_us` apart.
    #[test]
    fn timeouts_clear_and_unanswered_plis_keep_their_distance() {
        struct Seen {
            last_pli: Option<u64>,
            idr_since: bool,
        }
        impl Seen {
            fn poll(&mut self, q: &mut PliRequester, t: u64, repeat_us: u64) {
                if q.poll_pli() {
                    if let (Some(l), false) = (self.last_pli, self.idr_since) {
                        assert!(t >= l + repeat_us, "{l} then {t}");
                    }
                    self.last_pli = Some(t);
                    self.idr_since = false;
                }
            }
        }
        for seed in 1..20u64 {
            let mut x = seed;
            let mut rnd = move || {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 33) % 1000
            };
            let cfg = PliConfig {
                recovery: Recovery::Pli,
                rtcp_interval_us: 20_000,
                repeat_us: 300_000,
            };
            let mut q = PliRequester::new(cfg);
            let mut seen = Seen {
                last_pli: None,
                idr_since: false,
            };
            let mut t = 0u64;
            while t < 60_000_000 {
                let next = t + 1_000 + rnd() * 40;
                while let Some(d) = q.poll_timeout().filter(|&d| d <= next) {
                    let d = d.max(t);
                    q.handle_timeout(d);
                    assert!(q.poll_timeout().is_none_or(|e| e > d), "seed {seed} at {d}");
                    seen.poll(&mut q, d, cfg.repeat_us);
                    t = d;
                }
                t = next;
                let ev = match rnd() {
                    0..=19 => FrameEvent::Lost,
                    20..=39 => FrameEvent::Complete { idr: true },
                    _ => FrameEvent::Complete { idr: false },
                };
                seen.idr_since |= ev == FrameEvent::Complete { idr: true };
                q.on_frame(t, ev);
                seen.poll(&mut q, t, cfg.repeat_us);
            }
            assert!(q.stats().sent > 10, "seed {seed}: {:?}", q.stats());
        }
    }

    #[test]
    fn other_rtcp_is_not_a_pli() {
        let p = Pli {
            sender_ssrc: 1,
            media_ssrc: 2,
        }
        .encode();
        let mut fir = p.clone();
        fir[0] = 0x84; // FMT=4: FIR (RFC 5104)
        assert!(Pli::decode(&fir).is_err());
        let mut rtpfb = p.clone();
        rtpfb[1] = 205;
        assert!(Pli::decode(&rtpfb).is_err());
        let mut long = p.clone();
        long[3] = 3;
        assert!(Pli::decode(&long).unwrap_err().contains("length 3"));
        assert!(Pli::decode(&p[..11]).is_err());
    }
}
