//! The receiver's PLI (RFC 4585 §6.3.1) in virtual time: a sender encodes a frame every 40 ms
//! (25 fps) with an IDR every 50 frames (x264's key-int-max here) and an IDR at the next frame
//! after a PLI reaches it (force-key-unit); the path delays each frame and each PLI by 50 ms one
//! way and drops the frames a test names. The receiver learns of a dropped frame as the
//! assembler does: it is reported lost when the next frame arrives whole.

use roq_core::pli::{FrameEvent, PliConfig, PliRequester, Recovery};

const FRAME_US: u64 = 40_000;
const KEY_INT: u64 = 50;
const DELAY_US: u64 = 50_000;
const T_RR_US: u64 = 20_000; // the receiver's RFC 8888 report interval
const REPEAT_US: u64 = 1_000_000;

struct Run {
    plis_at: Vec<u64>,
    /// frames the sender made IDR because of a PLI
    forced: Vec<u64>,
    /// (frame, decodable) for each frame that arrived whole
    shown: Vec<(u64, bool)>,
    req: PliRequester,
}

fn cfg(recovery: Recovery) -> PliConfig {
    PliConfig {
        recovery,
        rtcp_interval_us: T_RR_US,
        repeat_us: REPEAT_US,
    }
}

/// Runs `frames` frames; `lose(frame, is_idr)` says whether the path loses that frame.
fn run(frames: u64, recovery: Recovery, lose: impl Fn(u64, bool) -> bool) -> Run {
    let mut req = PliRequester::new(cfg(recovery));
    let mut plis_in_flight: Vec<u64> = Vec::new(); // arrival times at the sender
    let mut force_next = false;
    let (mut plis_at, mut forced, mut shown) = (Vec::new(), Vec::new(), Vec::new());
    // (arrival, frame, idr, dropped): a dropped frame keeps its place in the order
    let mut on_the_way: Vec<(u64, u64, bool, bool)> = Vec::new();
    let mut lost_waiting = 0u64; // dropped frames not yet reported lost
    let step = 1_000u64; // the receiver's timer granularity: 1 ms
    let end = frames * FRAME_US + 2 * DELAY_US;
    let mut t = 0u64;
    while t <= end {
        // the sender: PLIs that arrived, then the frame captured now
        if plis_in_flight.iter().any(|&a| a <= t) {
            plis_in_flight.retain(|&a| a > t);
            force_next = true;
        }
        // the receiver's timer
        if req.poll_timeout().is_some_and(|d| d <= t) {
            req.handle_timeout(t);
        }
        if t.is_multiple_of(FRAME_US) && t / FRAME_US < frames {
            let f = t / FRAME_US;
            let idr = f.is_multiple_of(KEY_INT) || force_next;
            if force_next && !f.is_multiple_of(KEY_INT) {
                forced.push(f);
            }
            force_next = false;
            on_the_way.push((t + DELAY_US, f, idr, lose(f, idr)));
        }
        let n_due = on_the_way.iter().take_while(|x| x.0 <= t).count();
        for (_, f, idr, dropped) in on_the_way.drain(..n_due).collect::<Vec<_>>() {
            if dropped {
                lost_waiting += 1;
                continue;
            }
            for _ in 0..std::mem::take(&mut lost_waiting) {
                req.on_frame(t, FrameEvent::Lost);
            }
            req.on_frame(t, FrameEvent::Complete { idr });
            shown.push((f, req.intact()));
        }
        if req.poll_pli() {
            plis_at.push(t);
            plis_in_flight.push(t + DELAY_US);
        }
        t += step;
    }
    Run {
        plis_at,
        forced,
        shown,
        req,
    }
}

fn undecodable(r: &Run) -> Vec<u64> {
    r.shown
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(f, _)| *f)
        .collect()
}

#[test]
fn no_loss_no_pli() {
    let r = run(250, Recovery::Pli, |_, _| false);
    assert_eq!(r.plis_at, Vec::<u64>::new());
    assert_eq!(r.req.stats().breaks, 0);
    assert_eq!(r.shown.len(), 250);
    assert!(undecodable(&r).is_empty());
}

#[test]
fn a_lost_idr_gives_exactly_one_pli_and_the_next_frame_sent_after_it_is_an_idr() {
    // frame 50 is a periodic IDR; the path loses it
    let r = run(250, Recovery::Pli, |f, _| f == 50);
    // frame 51 arrives at 51 × 40 + 50 ms = 2.09 s: frame 50 is reported lost, the PLI leaves
    assert_eq!(r.plis_at, vec![2_090_000]);
    // it reaches the sender at 2.14 s; the frame captured next (2.16 s, frame 54) is an IDR
    assert_eq!(r.forced, vec![54]);
    // frames 51-53 arrive whole but cannot be decoded; from 54 on every frame decodes
    assert_eq!(undecodable(&r), vec![51, 52, 53]);
    let s = r.req.stats();
    assert_eq!((s.sent, s.breaks, s.undecodable_frames), (1, 1, 3));
    assert_eq!(s.broken_us, 54 * FRAME_US + DELAY_US - 2_090_000);
}

#[test]
fn the_next_idr_variant_sends_none_and_waits_for_the_periodic_idr() {
    let r = run(250, Recovery::NextIdr, |f, _| f == 50);
    assert_eq!(r.plis_at, Vec::<u64>::new());
    assert!(r.forced.is_empty());
    // nothing decodes until the next periodic IDR, frame 100
    assert_eq!(undecodable(&r), (51..100).collect::<Vec<_>>());
    let s = r.req.stats();
    assert_eq!((s.sent, s.breaks, s.undecodable_frames), (0, 1, 49));
}

#[test]
fn a_lost_delta_frame_also_asks_for_an_idr() {
    let r = run(250, Recovery::Pli, |f, _| f == 70);
    assert_eq!(r.plis_at, vec![71 * FRAME_US + DELAY_US]);
    assert_eq!(r.forced, vec![74]);
    assert_eq!(undecodable(&r), vec![71, 72, 73]);
}

#[test]
fn the_first_idr_lost_at_the_start_gives_one_pli() {
    // the stream's first frame is its IDR; the receiver's first whole frame is a delta frame
    let r = run(100, Recovery::Pli, |f, _| f == 0);
    assert_eq!(r.plis_at, vec![FRAME_US + DELAY_US]);
    assert_eq!(r.forced, vec![4]);
    assert_eq!(undecodable(&r), vec![1, 2, 3]);
}

#[test]
fn an_unanswered_pli_is_repeated_once_per_repeat_interval() {
    // every IDR sent from 2 s to 5.1 s is lost, the ones a PLI asks for included
    let r = run(250, Recovery::Pli, |f, idr| {
        idr && (2_000_000..5_100_000).contains(&(f * FRAME_US))
    });
    let first = 51 * FRAME_US + DELAY_US; // frame 50 (IDR) lost, seen at frame 51
    assert_eq!(
        r.plis_at,
        vec![
            first,
            first + REPEAT_US,
            first + 2 * REPEAT_US,
            first + 3 * REPEAT_US
        ]
    );
    // each PLI forces the IDR captured 70 ms later; the first three are lost (and the
    // periodic ones, frames 100 and 125), the fourth (frame 129, 5.16 s) arrives and from then
    // on every frame decodes
    assert_eq!(r.forced, vec![54, 79, 104, 129]);
    assert_eq!(r.req.stats().sent, 4);
    assert_eq!(r.shown.iter().filter(|(f, ok)| *f >= 129 && !ok).count(), 0);
    assert!(undecodable(&r).iter().all(|&f| (51..129).contains(&f)));
}

/// RFC 4585 §3.5.2: after an early feedback packet, allow_early is false and the next regular
/// report is skipped (tn = tp + 2·T_rr): a second loss before then waits for that report.
#[test]
fn after_an_early_pli_the_next_one_waits_for_the_regular_report() {
    let t_rr = 1_000_000;
    let mut q = PliRequester::new(PliConfig {
        recovery: Recovery::Pli,
        rtcp_interval_us: t_rr,
        repeat_us: 100_000,
    });
    q.on_frame(0, FrameEvent::Complete { idr: true }); // tp = 0, tn = 1 s
    q.on_frame(100_000, FrameEvent::Lost);
    assert!(q.poll_pli(), "early: at once");
    assert!(!q.poll_pli(), "one PLI per loss");
    q.on_frame(300_000, FrameEvent::Complete { idr: true });
    q.on_frame(400_000, FrameEvent::Lost);
    assert!(!q.poll_pli(), "allow_early is false");
    // the early packet skipped the report due at 1 s: the next one is at tp + 2·T_rr = 2 s
    assert_eq!(q.poll_timeout(), Some(2 * t_rr));
    q.handle_timeout(1_999_999);
    assert!(!q.poll_pli());
    q.handle_timeout(2 * t_rr);
    assert!(q.poll_pli(), "with the regular report");
    assert_eq!(q.stats().sent, 2);
    // a regular report went out at 2 s: early feedback is allowed again
    q.on_frame(2_100_000, FrameEvent::Complete { idr: true });
    q.on_frame(2_200_000, FrameEvent::Lost);
    assert!(q.poll_pli());
    assert_eq!(q.stats().sent, 3);
}

/// Many losses and undecodable frames while one PLI is outstanding ask for nothing more.
#[test]
fn losses_while_a_pli_is_outstanding_send_no_more() {
    let mut q = PliRequester::new(cfg(Recovery::Pli));
    q.on_frame(0, FrameEvent::Complete { idr: true });
    let mut sent = 0;
    for k in 1..=20u64 {
        let ev = if k % 3 == 0 {
            FrameEvent::Lost
        } else {
            FrameEvent::Complete { idr: false }
        };
        q.on_frame(k * FRAME_US, if k == 1 { FrameEvent::Lost } else { ev });
        sent += u64::from(q.poll_pli());
    }
    // 20 frames = 0.8 s < REPEAT_US
    assert_eq!(sent, 1);
    assert_eq!(q.stats().undecodable_frames, 13);
}
