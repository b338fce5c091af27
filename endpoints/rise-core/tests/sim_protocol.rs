//! The protocol end to end in virtual time: a Host and a Guest over the simulated path.

mod common;

use common::*;
use rise_core::sim::START_US;
use rise_core::wire::{self, Message};
use rise_core::{Event, FrameType, KeyCause, Role};

#[test]
fn every_video_datagram_is_acked_on_a_clean_path() {
    let s = run(
        cfg(Role::Host, 1),
        cfg(Role::Guest, 2),
        clean_path(10_000),
        3 * SEC,
    );
    // (video sender, its outgoing link, video receiver, the receiver's outgoing link)
    for (name, tx, tx_link, rx, rx_link) in [
        ("host→guest", &s.host, &s.down, &s.guest, &s.up),
        ("guest→host", &s.guest, &s.up, &s.host, &s.down),
    ] {
        let (t, r) = (tx.counters(), rx.counters());
        assert!(t.video_datagrams_sent > 500, "{name}: {t:?}");
        assert_eq!(t.video_datagrams_retransmitted, 0, "{name}");
        assert_eq!(r.datagrams_malformed, 0);
        // every video datagram sent was received or is still on the wire
        let video_on_wire = count_kind(tx_link.in_flight(), wire::TAG_VIDEO);
        assert_eq!(
            t.video_datagrams_sent,
            r.video_datagrams_received + video_on_wire
        );
        // every received video datagram produced exactly one ACK ...
        assert_eq!(r.acks_sent, r.video_datagrams_received, "{name}");
        // ... which reached the sender or is queued / on the wire
        let ack = rx.channel_stats()[2].1;
        let acks_queued = ack.enqueued - ack.sent;
        let acks_on_wire = count_kind(rx_link.in_flight(), wire::TAG_ACK);
        assert_eq!(ack.enqueued, r.acks_sent);
        assert_eq!(t.acks_received + acks_on_wire + acks_queued, r.acks_sent);
        // so the sender's unacked set is exactly what is queued or in flight
        let video_queued = tx.channel_stats()[1].1.enqueued - tx.channel_stats()[1].1.sent;
        assert_eq!(
            tx.unacked_video() as u64,
            video_queued + video_on_wire + acks_on_wire + acks_queued,
            "{name}"
        );
    }
}

fn count_kind<'a>(it: impl Iterator<Item = &'a [u8]>, tag: u8) -> u64 {
    it.filter(|b| b.first() == Some(&tag)).count() as u64
}

#[test]
fn fragments_are_max_size_except_the_last() {
    let c = rise_core::Config {
        max_datagram_bytes: 1000,
        ..cfg(Role::Host, 5)
    };
    let payload_max = 1000 - wire::VIDEO_HEADER_BYTES;
    let mut ep = rise_core::Endpoint::new(c, START_US);
    let mut now = START_US;
    let mut checked = 0;
    for round in 0..20 {
        if round == 10 {
            ep.set_max_datagram_size(700);
        }
        let max = ep.max_datagram_size();
        let pmax = max - wire::VIDEO_HEADER_BYTES;
        now = ep.poll_timeout().max(now);
        ep.handle_timeout(now);
        let mut frame: Option<(u32, u32, u16)> = None;
        while let Some(e) = ep.poll_event() {
            if let Event::FrameSent {
                frame_id,
                size_bytes,
                frag_cnt,
                ..
            } = e
            {
                assert_eq!(frag_cnt as usize, (size_bytes as usize).div_ceil(pmax));
                frame = Some((frame_id, size_bytes, frag_cnt));
            }
        }
        let mut payload_sum = 0;
        let mut frags = 0;
        while let Some(t) = ep.poll_transmit(now, 1500) {
            assert!(t.bytes.len() <= max);
            if let Ok(Message::Video {
                header,
                payload_len,
            }) = wire::decode(&t.bytes)
            {
                let (id, _, cnt) = frame.expect("a frame was encoded");
                assert_eq!(header.frame_id, id);
                assert_eq!(header.frag_cnt, cnt);
                assert_eq!(header.frag_id as usize, frags);
                assert_eq!(header.send_ts_us, now, "stamped at egress");
                if header.frag_id + 1 < cnt {
                    assert_eq!(t.bytes.len(), max, "non-last fragment is max-size");
                }
                payload_sum += payload_len;
                frags += 1;
            }
        }
        if let Some((_, size, cnt)) = frame {
            assert_eq!(frags, cnt as usize);
            assert_eq!(payload_sum, size as usize);
            checked += 1;
        }
    }
    assert!(checked >= 10);
    assert!(payload_max > 0);
    // the first frame is a key frame of 9 × mean: many fragments
    let c = ep.counters();
    assert_eq!(c.key_frames, 1);
}

#[test]
fn rtt_estimate_converges_to_the_path_rtt() {
    let p = path(
        link(20_000_000, 10_000, 0.0, 1),
        link(20_000_000, 15_000, 0.0, 2),
    );
    let s = run(cfg(Role::Host, 1), cfg(Role::Guest, 2), p, 3 * SEC);
    // propagation 25 ms + serialisation of a 1240-byte datagram (≈0.5 ms) and a 55-byte ACK
    let expect_us = 25_000.0 + 500.0;
    for ep in [&s.host, &s.guest] {
        let rtt = ep.rtt_us().expect("an RTT sample") as f64;
        assert!((rtt - expect_us).abs() < 1_500.0, "rtt {rtt} µs");
    }
}

#[test]
fn retransmissions_happen_on_loss_and_not_without() {
    let clean = run(
        cfg(Role::Host, 1),
        cfg(Role::Guest, 2),
        clean_path(10_000),
        3 * SEC,
    );
    assert_eq!(clean.host.counters().video_datagrams_retransmitted, 0);
    assert_eq!(clean.guest.counters().video_datagrams_retransmitted, 0);

    let lossy = path(
        link(20_000_000, 10_000, 0.0, 1),
        link(20_000_000, 10_000, 0.03, 2),
    );
    let s = run(cfg(Role::Host, 1), cfg(Role::Guest, 2), lossy, 3 * SEC);
    let h = s.host.counters();
    assert!(h.video_datagrams_retransmitted > 0, "{h:?}");
    // guest→host is clean, but ACKs of the guest's video are lost on the way back: every
    // retransmission of the guest is spurious and arrives as a duplicate at the host
    let gr = s.guest.counters().video_datagrams_retransmitted;
    let hc = s.host.counters();
    assert!(gr > 0);
    assert_eq!(gr, hc.duplicate_video_datagrams + hc.late_video_datagrams);
    // retransmissions repair most losses: the guest displays nearly every frame
    let g = s.guest.counters();
    assert!(
        g.frames_displayed as f64 >= 0.9 * h.frames_encoded as f64,
        "{g:?} {h:?}"
    );
    let retx = s.host.channel_stats()[1].1.retransmitted;
    assert_eq!(retx, h.video_datagrams_retransmitted);
}

#[test]
fn a_lost_first_transmission_is_repaired_by_retransmission() {
    let mut s =
        rise_core::sim::Sim::new(cfg(Role::Host, 1), cfg(Role::Guest, 2), clean_path(10_000));
    let mut dropped = false;
    s.down.set_filter(move |_, b| {
        if let Ok(Message::Video { header, .. }) = wire::decode(b) {
            if header.frame_id == 10 && header.frag_id == 0 && !dropped {
                dropped = true;
                return true;
            }
        }
        false
    });
    s.run_until(START_US + 2 * SEC);
    let d = displayed(&s.guest_events);
    let ids: Vec<u32> = d.iter().map(|x| x.0).collect();
    let n = ids.len() as u32;
    assert_eq!(
        ids,
        (0..n).collect::<Vec<_>>(),
        "every frame displayed in order"
    );
    assert_eq!(s.host.counters().video_datagrams_retransmitted, 1);
    assert_eq!(s.host.counters().key_frames, 1);
}

#[test]
fn a_lost_delta_frame_blocks_decoding_until_the_next_key_frame() {
    let host = rise_core::Config {
        max_retx: 0,
        ..cfg(Role::Host, 1)
    };
    let mut s = rise_core::sim::Sim::new(host, cfg(Role::Guest, 2), clean_path(10_000));
    s.down.set_filter(|_, b| {
        matches!(wire::decode(b), Ok(Message::Video { header, .. }) if header.frame_id == 10)
    });
    s.run_until(START_US + 3 * SEC);
    let d = displayed(&s.guest_events);
    let ids: Vec<u32> = d.iter().map(|x| x.0).collect();
    assert_eq!(&ids[..10], &(0..10).collect::<Vec<_>>()[..]);
    // nothing after the lost frame until a key frame
    let (k, kt, _) = d[10];
    assert_eq!(kt, FrameType::Key, "after the gap: {:?}", &d[10..12]);
    assert!(k > 11);
    let sent = sent_frames(&s.host_events);
    assert_eq!(sent[k as usize].1, FrameType::Key);
    // the key frame is forced by the deadline: about 1 s after frame 10 was encoded
    let t10 = sent[10].4;
    let tk = sent[k as usize].4;
    assert!(tk - t10 >= SEC && tk - t10 < SEC + 200_000, "{}", tk - t10);
    assert!(s.host.counters().deadline_expirations >= 1);
    // frame 10's only copy was sent and lost (max_retx 0): the budget is spent
    let causes = key_causes(&s.host_events);
    assert_eq!(causes[0], (0, Some(KeyCause::Start)));
    assert_eq!(causes[k as usize], (k, Some(KeyCause::DeadlineLost)));
    assert!(causes[1..k as usize].iter().all(|c| c.1.is_none()));
    assert_eq!(s.guest.counters().frames_skipped, (k - 10) as u64);
    // and decoding resumes after it
    assert!(ids.windows(2).skip(10).all(|w| w[1] == w[0] + 1));
}

#[test]
fn mtp_on_a_clean_fast_path_is_delay_plus_sampling() {
    let d_us = 7_000u64;
    let p = path(
        link(1_000_000_000, d_us, 0.0, 1),
        link(1_000_000_000, d_us, 0.0, 2),
    );
    let s = run(cfg(Role::Host, 1), cfg(Role::Guest, 2), p, 3 * SEC);
    let m = mtps_ms(&s.guest_events);
    assert!(m.len() > 80, "{} frames with MTP", m.len());
    // the sample is at least one path delay old at encode time and at most one tracking
    // period more; the frame takes another path delay plus serialisation of a few datagrams
    let lo = 2.0 * d_us as f64 / 1000.0;
    let hi = lo + 1000.0 / 60.0 + 1.0;
    for x in &m {
        assert!(*x >= lo && *x <= hi, "mtp {x} ms not in [{lo}, {hi}]");
    }
    assert_eq!(s.guest.counters().freezes, 0);
    // frames before the first tracking sample arrived carry no sample (−1)
    let sent = s.host_events.iter().find_map(|(_, e)| match e {
        Event::FrameSent {
            tracking_sample_id, ..
        } => Some(*tracking_sample_id),
        _ => None,
    });
    assert_eq!(sent, Some(-1));
}

#[test]
fn freezes_appear_under_heavy_loss_and_not_on_a_clean_path() {
    let clean = run(
        cfg(Role::Host, 1),
        cfg(Role::Guest, 2),
        clean_path(10_000),
        5 * SEC,
    );
    assert!(clean.guest.counters().frames_displayed > 140);
    assert_eq!(clean.guest.counters().freezes, 0);
    assert_eq!(clean.host.counters().freezes, 0);

    let lossy = path(
        link(20_000_000, 10_000, 0.2, 1),
        link(20_000_000, 10_000, 0.2, 2),
    );
    let s = run(cfg(Role::Host, 1), cfg(Role::Guest, 2), lossy, 5 * SEC);
    let g = s.guest.counters();
    assert!(g.freezes > 0, "{g:?}");
    assert!(g.freeze_duration_us > 0);
}

#[test]
fn the_deadline_drops_pending_video_and_forces_a_key_frame() {
    // one endpoint with no peer: nothing is ever acked; the transport takes 4 datagrams per
    // frame period, so video piles up in the channel
    let mut ep = rise_core::Endpoint::new(cfg(Role::Host, 3), START_US);
    let mut now = START_US;
    let mut first_send = None;
    let mut key_after_deadline = None;
    let mut cause_after_deadline = None;
    while now < START_US + 2 * SEC {
        now = ep.poll_timeout();
        ep.handle_timeout(now);
        for _ in 0..4 {
            if let Some(t) = ep.poll_transmit(now, 1500) {
                if t.kind == rise_core::Kind::Video {
                    first_send.get_or_insert(now);
                }
            }
        }
        while let Some(e) = ep.poll_event() {
            if let Event::FrameSent {
                frame_type,
                encode_time_us,
                frame_id,
                key_cause,
                ..
            } = e
            {
                if ep.counters().deadline_expirations == 1 && key_after_deadline.is_none() {
                    key_after_deadline = Some((frame_id, frame_type, encode_time_us));
                    cause_after_deadline = Some(key_cause);
                }
                if frame_id > 0 && ep.counters().deadline_expirations == 0 {
                    assert_eq!(frame_type, FrameType::Delta);
                }
            }
        }
    }
    let c = ep.counters();
    assert!(c.deadline_expirations >= 1, "{c:?}");
    let (_, ty, t) = key_after_deadline.expect("a frame after the deadline");
    assert_eq!(ty, FrameType::Key);
    // the oldest datagram was sent once and never acked (no peer), retransmissions left
    assert_eq!(cause_after_deadline, Some(Some(KeyCause::DeadlineUnacked)));
    let age = t - first_send.unwrap();
    assert!(
        age > SEC && age <= SEC + 34_000,
        "deadline hit after {age} µs"
    );
    let video = ep.channel_stats()[1].1;
    assert!(video.purged > 0, "pending video dropped: {video:?}");
    assert!(c.key_frames >= 2);
}

#[test]
fn processing_delay_shifts_mtp_by_its_value() {
    // the streamer's encode + render + decode time: every displayed frame's MTP grows by it
    let with = |delay_us: u64| {
        let c = |role, seed| rise_core::Config {
            processing_delay_us: delay_us,
            ..cfg(role, seed)
        };
        let s = run(
            c(Role::Host, 1),
            c(Role::Guest, 2),
            clean_path(5_000),
            3 * SEC,
        );
        (mtps_ms(&s.guest_events), displayed(&s.guest_events).len())
    };
    let (m0, n0) = with(0);
    let (m40, n40) = with(40_000);
    let shift = quantile(&m40, 0.5) - quantile(&m0, 0.5);
    eprintln!(
        "median MTP {:.2} → {:.2} ms",
        quantile(&m0, 0.5),
        quantile(&m40, 0.5)
    );
    assert!(
        (shift - 40.0).abs() < 2.0,
        "median MTP shifted by {shift} ms, not 40"
    );
    assert!((quantile(&m40, 0.1) - quantile(&m0, 0.1) - 40.0).abs() < 2.0);
    // the same frames are shown (the last 40 ms of frames are still in processing at the end)
    assert!(n40 + 2 >= n0 && n40 <= n0, "{n0} vs {n40}");
}
