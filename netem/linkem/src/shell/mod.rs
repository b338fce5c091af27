//! The thin I/O shell around the core: AF_PACKET sockets, one forwarding thread per
//! direction, the packet log writer and the clock.

pub mod args;
pub mod clock;
pub mod forward;
pub mod pace;
pub mod packet_log;
pub mod socket;
