//! What an endpoint session gets from the world it runs in: its clock, its network, its
//! console and, for reproducible runs, a seed for quinn's randomness.

use crate::clock::Clock;
use crate::console::Console;
use crate::net::Net;

#[derive(Clone, Debug)]
pub struct Env {
    pub clock: Clock,
    pub net: Net,
    pub console: Console,
    /// When set, quinn's endpoint randomness (connection IDs, packet-number skips, ...) is
    /// seeded from it (and the endpoint's name), so two runs with one seed are identical.
    /// The TLS handshake's sizes do not depend on randomness in any case ([`crate::tls`]).
    pub rng_seed: Option<u64>,
}

impl Env {
    /// The binaries' world: real clock, kernel UDP, this process's stdout/stderr, no seed.
    pub fn real() -> Self {
        Env {
            clock: Clock::real(),
            net: Net::Kernel,
            console: Console::process(),
            rng_seed: None,
        }
    }

    /// quinn's endpoint configuration: the default, with the RNG seeded from
    /// [`Env::rng_seed`] and `who` (so the two endpoints of one run draw different numbers).
    pub fn endpoint_config(&self, who: &str) -> quinn::EndpointConfig {
        let mut c = quinn::EndpointConfig::default();
        if let Some(seed) = self.rng_seed {
            c.rng_seed(Some(seed_bytes(seed, who)));
        }
        c
    }
}

/// 32 bytes from `seed` and `who` (FNV-1a of `who` mixed in, then splitmix64).
fn seed_bytes(seed: u64, who: &str) -> [u8; 32] {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in who.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut x = seed ^ h;
    let mut out = [0u8; 32];
    for chunk in out.chunks_mut(8) {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        chunk.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_differ_by_seed_and_by_endpoint() {
        let a = seed_bytes(1, "rise host");
        assert_eq!(a, seed_bytes(1, "rise host"));
        assert_ne!(a, seed_bytes(2, "rise host"));
        assert_ne!(a, seed_bytes(1, "rise guest"));
    }
}
