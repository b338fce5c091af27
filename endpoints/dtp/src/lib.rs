//! The `dtp` endpoint ([`run_argv`]: the whole program; the binary runs it in the real
//! world, the sim site in virtual time) and its pure core ([DTP], DTP; no I/O, no clock: times are µs
//! given by the caller): the ADS scheduler and its baselines ([`ads`]), the application's
//! block pattern ([`pattern`]), the block header on a stream ([`wire`]), the sender's
//! bandwidth estimate ([`bw`]), adaptive redundancy ([`fec`]: when, how much, Reed-Solomon) the receiver's reassembly with recovery ([`assembly`]) and the scheduler over a model path in virtual time ([`sim`]).

mod app;
mod cli;
mod recv;
mod send;

pub use app::run_argv;

pub mod ads;
pub mod assembly;
pub mod bw;
pub mod fec;
pub mod pattern;
pub mod sim;
pub mod wire;
