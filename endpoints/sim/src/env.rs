//! What a process gets from the sim instead of the real world: quicsetup's `Env` with the run's
//! virtual clock, its node's sockets on simnet, its console (stdout/stderr files) and a seed.
//! The programs are the real endpoints' libraries, so this is the only adapter.

use std::sync::Arc;

use simnet::NodeNet;

pub use quicsetup::{Clock, Console, Env, Net};

/// The environment of one process: `seed` is the run's, made distinct per process by its
/// name (two processes of one program never share a random stream).
pub fn make(clock: Clock, net: NodeNet, console: Console, seed: u64, name: &str) -> Env {
    Env {
        clock,
        net: Net::Injected(Arc::new(net)),
        console,
        rng_seed: Some(seed ^ fnv1a(name.as_bytes())),
    }
}

/// FNV-1a, 64 bit: a fixed hash (std's hasher is randomised per process).
fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}
