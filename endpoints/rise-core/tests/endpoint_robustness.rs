//! Malformed input never panics, is counted and reported; odd driving does not break the core.

use proptest::prelude::*;
use rise_core::sim::START_US;
use rise_core::wire::{self, Ack, Message, Tracking, VideoHeader};
use rise_core::{Config, DecodeError, Endpoint, Event, FrameType};

fn drain(ep: &mut Endpoint) -> Vec<Event> {
    std::iter::from_fn(|| ep.poll_event()).collect()
}

#[test]
fn malformed_datagrams_are_counted_and_reported() {
    let mut ep = Endpoint::new(Config::default(), START_US);
    ep.handle_datagram(START_US + 5, &[]);
    ep.handle_datagram(START_US + 6, &[42, 1, 2]);
    ep.handle_datagram(START_US + 7, &[wire::TAG_ACK, 0, 0]);
    assert_eq!(ep.counters().datagrams_malformed, 3);
    let m: Vec<_> = drain(&mut ep)
        .into_iter()
        .filter_map(|e| match e {
            Event::Malformed {
                recv_time_us,
                len_bytes,
                error,
            } => Some((recv_time_us, len_bytes, error)),
            _ => None,
        })
        .collect();
    assert_eq!(m.len(), 3);
    assert_eq!(m[0], (START_US + 5, 0, DecodeError::Empty));
    assert_eq!(m[1].2, DecodeError::UnknownTag(42));
    assert!(matches!(m[2].2, DecodeError::Truncated { .. }));
}

#[test]
fn inconsistent_fragments_are_malformed_and_not_acked() {
    let mut ep = Endpoint::new(Config::default(), START_US);
    let h = VideoHeader {
        frame_id: 3,
        frame_type: FrameType::Delta,
        frag_id: 0,
        frag_cnt: 4,
        send_ts_us: START_US,
        tracking_sample_id: None,
    };
    ep.handle_datagram(START_US, &wire::encode_video(&h, 10));
    let bad = VideoHeader { frag_cnt: 5, ..h };
    ep.handle_datagram(START_US, &wire::encode_video(&bad, 10));
    let c = ep.counters();
    assert_eq!((c.acks_sent, c.datagrams_malformed), (1, 1));
}

#[test]
fn acks_for_unknown_datagrams_and_time_going_back_are_harmless() {
    let mut ep = Endpoint::new(Config::default(), START_US);
    ep.handle_timeout(START_US);
    let a = Ack {
        frame_id: 99,
        frag_id: 7,
        send_ts_us: START_US + 1_000_000_000,
    };
    ep.handle_datagram(START_US + 10, &wire::encode_ack(&a));
    assert_eq!(
        ep.rtt_us(),
        None,
        "a send_ts from the future is no RTT sample"
    );
    ep.handle_timeout(START_US - 5);
    ep.poll_transmit(START_US - 100, 1200);
    assert!(ep.poll_timeout() > START_US);
}

#[test]
fn late_handle_timeout_skips_missed_ticks_instead_of_bursting() {
    let mut ep = Endpoint::new(Config::default(), START_US);
    ep.handle_timeout(START_US);
    ep.handle_timeout(START_US + 1_000_000);
    let c = ep.counters();
    assert_eq!(c.frames_encoded, 2);
    assert_eq!(c.tracking_sent, 2);
    assert_eq!(c.late_ticks_skipped, (60 - 1) + (30 - 1));
    assert_eq!(ep.poll_timeout(), START_US + 1_000_000 + 16_666);
}

#[test]
fn tracking_feeds_the_frame_header_and_mtp_maps_back() {
    // A renders from B's sample; B maps the sample id back to its own generation time.
    let small = Config {
        video_bitrate_bps: 2_000_000,
        ..Config::default()
    };
    let mut a = Endpoint::new(small.clone(), START_US);
    let mut b = Endpoint::new(small, START_US);
    b.handle_timeout(START_US);
    let t = b.poll_transmit(START_US, 1500).unwrap();
    assert_eq!(t.kind, rise_core::Kind::Tracking);
    a.handle_datagram(START_US + 2000, &t.bytes);
    a.handle_timeout(START_US + 2000);
    let mut frames = Vec::new();
    while let Some(t) = a.poll_transmit(START_US + 2000, 1500) {
        if let Ok(Message::Video { header, .. }) = wire::decode(&t.bytes) {
            assert_eq!(header.tracking_sample_id, Some(0));
            frames.push(t.bytes);
        }
    }
    for f in &frames {
        b.handle_datagram(START_US + 9000, f);
    }
    let shown = drain(&mut b)
        .into_iter()
        .find_map(|e| match e {
            Event::FrameDisplayed {
                tracking_sample_id,
                tracking_gen_time_us,
                mtp_ms,
                ..
            } => Some((tracking_sample_id, tracking_gen_time_us, mtp_ms)),
            _ => None,
        })
        .expect("frame displayed");
    assert_eq!(shown, (0, Some(START_US), Some(9.0)));
    // tracking wire round trip sanity
    let tr = Tracking {
        sample_id: 1,
        gen_time_us: 2,
        yaw_rad: 0.0,
        pitch_rad: 0.0,
        roll_rad: 0.0,
    };
    assert!(matches!(
        wire::decode(&wire::encode_tracking(&tr)),
        Ok(Message::Tracking(_))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn arbitrary_datagrams_never_panic_the_endpoint(
        dgrams in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..80), 1..40),
        tags in proptest::collection::vec(1u8..4, 1..40),
    ) {
        let mut ep = Endpoint::new(Config::default(), START_US);
        let mut now = START_US;
        let mut bad = 0u64;
        for (i, mut d) in dgrams.into_iter().enumerate() {
            // steer half of them to a valid tag so the deeper decoders are exercised
            if i % 2 == 0 && !d.is_empty() {
                d[0] = tags[i % tags.len()];
            }
            if wire::decode(&d).is_err() {
                bad += 1;
            }
            now += 1000;
            ep.handle_datagram(now, &d);
            ep.handle_timeout(now);
            while ep.poll_transmit(now, 1200).is_some() {}
        }
        let c = ep.counters();
        prop_assert!(c.datagrams_malformed >= bad);
    }
}
