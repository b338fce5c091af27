//! RTP over QUIC ([RoQ]): the pure cores, driven by time given as microseconds since an
//! arbitrary origin (`now_us`), with no I/O and no clock, testable in virtual time.
//!
//! - [`rtp`]: the RTP fixed header (RFC 3550 §5.1), RTCP/RTP demultiplexing (RFC 5761 §4);
//! - [`h264`]: H.264 access units ↔ RTP payloads (RFC 6184: single NAL unit and FU-A) and the
//!   receiver's frame assembly by RTP timestamp;
//! - [`pli`]: the RTCP Picture Loss Indication (RFC 4585 §6.3.1) and the receiver's decision to
//!   send one when the prediction chain breaks;
//! - [`flow`]: the RTP-over-QUIC flow identifier, a QUIC variable-length integer prefixed to
//!   each datagram (draft-ietf-avtcore-rtp-over-quic, RFC 9000 §16);
//! - [`ccfb`]: RTCP congestion control feedback (RFC 8888) and the receiver that fills it;
//! - [`scream`]: SCReAM (RFC 8298): network congestion window, RTP queue and media rate;
//! - [`gcc`]: Google Congestion Control (draft-ietf-rmcat-gcc-02), beyond the paper;
//! - [`trivial`]: the paper's trivial controller (five levels, 256–1280 kbit/s, by the growth
//!   of the RTP queue).

pub mod ccfb;
pub mod flow;
pub mod gcc;
pub mod h264;
pub mod pli;
pub mod rtp;
pub mod scream;
pub mod trivial;
