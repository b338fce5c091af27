//! simnet: an in-memory UDP network for quinn, in tokio's virtual time.
//!
//! One [`SimNet`] holds the nodes (an IP address each, on side "a" or "b" of the link) and
//! both directions of the link as linkem's own pure core ([`linkem::Direction`], built from
//! the same `linkem.json` the userspace emulator reads). Every bound address gets a
//! [`quinn::AsyncUdpSocket`]; a datagram sent to another side enters the direction
//! (`a_to_b`: from side "a", the uplink) with the bytes of the Ethernet frame the real path
//! carries, and the driver ([`driver`], run by the runtime whenever it is idle) moves it out
//! at the model's exit time into the destination socket's receive queue, optionally bounded like a kernel receive
//! buffer ([`rcvbuf`]). Stats lines are the ones real linkem writes ([`linkem::stats`]).
//! Optionally every node's frames go to a pcap file of its own ([`capture`], [`pcap`]).
//!
//! A [`NodeNet`] is quicsetup's injected network (`quicsetup::SocketFactory`), so a program
//! written against quicsetup runs on simnet unchanged.
//!
//! Time is tokio's paused clock on a current-thread runtime from [`runtime::build`]; see
//! [`runtime`] for how the link gets ns precision although tokio's timers tick in ms.

pub mod capture;
pub mod clock;
pub mod driver;
mod injected;
pub mod net;
mod packet_log;
pub mod pcap;
pub mod quinn_runtime;
pub mod rcvbuf;
pub mod runtime;
pub mod socket;
pub mod stats;

pub use capture::CaptureSpec;
pub use net::{
    LinkReport, NodeNet, NodeSpec, ReaderStall, Side, SimNet, SimNetConfig, SocketReport,
};
pub use quinn_runtime::SimQuinnRuntime;
pub use runtime::{build, SimRuntime};
pub use stats::StatsOut;

/// Bytes the real path adds to a UDP payload on the link: UDP 8 + IPv4 20 + Ethernet 14
/// (linkem counts and rate-limits whole Ethernet frames).
pub const FRAME_OVERHEAD_BYTES: u64 = 8 + 20 + 14;
