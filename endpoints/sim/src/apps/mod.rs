//! Programs built into the sim (test programs; the protocols come from their own crates).

pub mod dgram;
