//! The RISE streaming protocol (Lin et al., MMAsia 2025; ringmaster semantics, see
//! `shared/[RISE setup]`) as a pure state machine: no I/O, no clock, no threads. Time comes in
//! as µs, randomness from one seed. The `rise` binary drives it over quinn.
//!
//! Modules: [`config`] (parameters), [`wire`] (datagram formats, total decoders), [`frames`]
//! (CBR frame-size model / trace replay), [`tracking`] (head orientation), [`sender`] (ACKs,
//! RTT, retransmission, deadline), [`receiver`] (reassembly, decoding with the reference
//! chain), [`freeze`] (libwebrtc freeze rule), [`endpoint`] (all of it over the priority
//! channels of `priochan`), [`sim`] (a deterministic network path for virtual-time tests).

pub mod config;
pub mod endpoint;
pub mod frames;
pub mod freeze;
pub mod receiver;
pub mod sender;
pub mod sim;
pub mod tracking;
pub mod wire;

pub use config::{
    Config, ConfigError, FifoDrop, FrameType, Role, TrackingRow, TrackingSource, MAX_FRAME_BYTES,
};
pub use endpoint::{ChannelCounters, Counters, Endpoint, Event, Kind, Transmit};
pub use sender::KeyCause;
pub use tracking::Orientation;
pub use wire::DecodeError;
