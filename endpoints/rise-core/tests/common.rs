//! Helpers shared by the virtual-time tests.
#![allow(dead_code)]

use rise_core::sim::{LinkConfig, PathConfig, Sim, START_US};
use rise_core::{Config, Event, FrameType, Role};

pub const SEC: u64 = 1_000_000;

/// A small, fast configuration: 2 Mbit/s video at 30 fps, tracking 60 Hz.
pub fn cfg(role: Role, seed: u64) -> Config {
    Config {
        role,
        video_bitrate_bps: 2_000_000,
        fps: 30,
        seed,
        ..Config::default()
    }
}

pub fn link(rate_bps: u64, delay_us: u64, loss: f64, seed: u64) -> LinkConfig {
    LinkConfig {
        rate_bps,
        delay_us,
        queue_bytes: 1 << 20,
        loss,
        overhead_bytes: 40,
        seed,
    }
}

pub fn path(up: LinkConfig, down: LinkConfig) -> PathConfig {
    PathConfig {
        up,
        down,
        nic_bytes: 1500,
    }
}

pub fn clean_path(delay_us: u64) -> PathConfig {
    path(
        link(20_000_000, delay_us, 0.0, 11),
        link(20_000_000, delay_us, 0.0, 12),
    )
}

pub fn run(host: Config, guest: Config, p: PathConfig, dur_us: u64) -> Sim {
    let mut s = Sim::new(host, guest, p);
    s.run_until(START_US + dur_us);
    s
}

/// (frame_id, frame_type, display time) of displayed frames.
pub fn displayed(events: &[(u64, Event)]) -> Vec<(u32, FrameType, u64)> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::FrameDisplayed {
                frame_id,
                frame_type,
                display_time_us,
                ..
            } => Some((*frame_id, *frame_type, *display_time_us)),
            _ => None,
        })
        .collect()
}

/// (frame_id, why it is a key frame) of encoded frames.
pub fn key_causes(events: &[(u64, Event)]) -> Vec<(u32, Option<rise_core::KeyCause>)> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::FrameSent {
                frame_id,
                key_cause,
                ..
            } => Some((*frame_id, *key_cause)),
            _ => None,
        })
        .collect()
}

/// (frame_id, frame_type, size, frag_cnt, encode time) of encoded frames.
pub fn sent_frames(events: &[(u64, Event)]) -> Vec<(u32, FrameType, u32, u16, u64)> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::FrameSent {
                frame_id,
                frame_type,
                size_bytes,
                frag_cnt,
                encode_time_us,
                ..
            } => Some((
                *frame_id,
                *frame_type,
                *size_bytes,
                *frag_cnt,
                *encode_time_us,
            )),
            _ => None,
        })
        .collect()
}

pub fn mtps_ms(events: &[(u64, Event)]) -> Vec<f64> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::FrameDisplayed { mtp_ms, .. } => *mtp_ms,
            _ => None,
        })
        .collect()
}

/// One-way tracking delays (recv − gen), ms; valid in the sim where both clocks are one.
pub fn tracking_delays_ms(events: &[(u64, Event)]) -> Vec<f64> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::TrackingReceived {
                recv_time_us,
                gen_time_us,
                ..
            } => Some((recv_time_us - gen_time_us) as f64 / 1000.0),
            _ => None,
        })
        .collect()
}

pub fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}
