//! linkem's pure core: config, and per direction queue → rate server → delay line → loss.
//! No I/O and no clock: time comes in as u64 ns, randomness from the config seed.

pub mod config;
pub mod delay;
pub mod direction;
pub mod loss;
pub mod packet_log;
pub mod queue;
pub mod rate;
pub mod stats;

pub use config::{parse_config, Config, ConfigError};
pub use direction::{Counters, Direction, DropCause, Event};
