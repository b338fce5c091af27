//! Helpers for driving the core in virtual time.
#![allow(dead_code)]

use linkem::config::{parse_config, DirectionConfig};
use linkem::{Direction, DropCause, Event};

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

/// A direction config from the JSON of one direction (mtu 1500, seed 7).
pub fn dir_cfg(json: &str) -> DirectionConfig {
    let doc = format!(r#"{{"seed": 7, "a_to_b": {json}, "b_to_a": {json}}}"#);
    parse_config(&doc).expect("valid config").a_to_b
}

pub fn direction(json: &str) -> Direction<u64> {
    Direction::new(&dir_cfg(json), 1500, 7, 0)
}

/// (payload, exit time) of every sent packet, in emission order.
pub fn sent(events: &[Event<u64>]) -> Vec<(u64, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Sent { pkt, at_ns } => Some((pkt.payload, *at_ns)),
            _ => None,
        })
        .collect()
}

/// Payloads of the packets dropped for `cause`, in emission order.
pub fn dropped(events: &[Event<u64>], cause: DropCause) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Dropped { pkt, cause: c, .. } if *c == cause => Some(pkt.payload),
            _ => None,
        })
        .collect()
}
