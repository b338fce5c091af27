//! The `qpr` endpoint ([`run_argv`]: the whole program; the binary runs it in the real
//! world, the sim site in virtual time, QUIC only) and its pure core ([QPR]; no I/O, no
//! clock): the scene and its
//! segment sizes ([`scene`]), the viewport priority model ([`viewport`]), the throughput ABR
//! with the priority ranking ([`abr`]), the reliable/unreliable split per Q level
//! ([`split`]), the player buffer with freeze detection ([`playout`]) and the messages on
//! the wire ([`wire`]).

mod app;
mod cli;
mod h2tcp;
mod player;
mod server;

pub use app::run_argv;

pub mod abr;
pub mod fec;
pub mod playout;
pub mod scene;
pub mod split;
pub mod unreliable;
pub mod viewport;
pub mod wire;

/// Number of point-cloud objects in the scene ([QPR Table 2]).
pub const OBJECTS: usize = 4;
/// Quality levels per object ([QPR Table 2]).
pub const QUALITIES: usize = 5;
