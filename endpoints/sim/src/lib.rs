//! priolab-sim: one run of the sim site in one process. Every process of the run is an async
//! task (the protocol's library entry point, found by argv[0] in [`registry`]) started at its
//! virtual start time; the network between them is [`simnet`] over linkem's own link core;
//! time is tokio's paused clock. See README.md.

pub mod alloc_tuning;
pub mod apps;
pub mod cost;
pub mod dgram_run;
pub mod env;
pub mod registry;
pub mod report;
pub mod run;
pub mod spec;
pub mod tls;
