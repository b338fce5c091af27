//! What an endpoint session gets from the world it runs in: its clock, its network, its
//! console and, for reproducible runs, a seed for quinn's randomness.

use std::sync::{Arc, Mutex};

use quinn::{ClientConfig, ConnectionId, ConnectionIdGenerator};

use crate::clock::Clock;
use crate::console::Console;
use crate::net::Net;

#[derive(Clone, Debug)]
pub struct Env {
    pub clock: Clock,
    pub net: Net,
    pub console: Console,
    /// When set, quinn's randomness (packet-number skips, connection IDs, ...) is seeded
    /// from it (and the endpoint's name), so two runs with one seed are identical, the
    /// connection IDs in qlog traces included. The TLS handshake's sizes do not depend on
    /// randomness in any case ([`crate::tls`]).
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

    /// quinn's endpoint configuration: the default, with the RNG, the connection IDs and
    /// the stateless-reset key seeded from [`Env::rng_seed`] and `who` (so the two endpoints
    /// of one run draw different numbers).
    pub fn endpoint_config(&self, who: &str) -> quinn::EndpointConfig {
        let Some(seed) = self.rng_seed else {
            return quinn::EndpointConfig::default();
        };
        let bytes = seed_bytes(seed, who);
        let reset = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &seed_bytes(seed ^ 3, who));
        let mut c = quinn::EndpointConfig::new(Arc::new(reset));
        c.rng_seed(Some(bytes));
        let cids = SeededCids::new(&bytes);
        c.cid_generator(move || Box::new(cids.clone()));
        c
    }

    /// With a seed, the seed of the endpoint `who`'s TLS randomness ([`crate::seeded_tls`]).
    pub fn tls_seed(&self, who: &str) -> Option<u64> {
        let b = seed_bytes(self.rng_seed? ^ 2, who);
        Some(u64::from_le_bytes(b[..8].try_into().expect("8 bytes")))
    }

    /// With a seed, `client`'s first destination connection ID (quinn draws 20 random bytes
    /// from the OS) comes from the seed and `who` too.
    pub fn seed_client(&self, client: &mut ClientConfig, who: &str) {
        if let Some(seed) = self.rng_seed {
            let cids = SeededCids::new(&seed_bytes(seed ^ 1, who));
            client.initial_dst_cid_provider(Arc::new(move || cids.next_cid(CLIENT_DCID_BYTES)));
        }
    }
}

/// The length of quinn's connection IDs (its default generator's) and of a client's first
/// destination connection ID (its default provider's, the longest QUIC allows): kept, so a
/// seeded run's packets have the sizes of an unseeded one's.
const CID_BYTES: usize = 8;
const CLIENT_DCID_BYTES: usize = 20;

/// Connection IDs drawn from a seed instead of the OS (quinn's default generator reads the
/// thread's OS-seeded RNG): a splitmix64 sequence every generator made from one endpoint's
/// configuration shares, so no two of its IDs repeat. Only for reproducible runs: these IDs
/// are predictable, which a real deployment's must not be (RFC 9000 §5.1).
#[derive(Clone)]
struct SeededCids(Arc<Mutex<u64>>);

impl SeededCids {
    fn new(seed: &[u8; 32]) -> Self {
        let mut first = [0u8; 8];
        first.copy_from_slice(&seed[..8]);
        SeededCids(Arc::new(Mutex::new(u64::from_le_bytes(first))))
    }

    fn next_cid(&self, len: usize) -> ConnectionId {
        let mut bytes = [0u8; 24];
        let mut x = self.0.lock().expect("cid state");
        for chunk in bytes.chunks_mut(8) {
            *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            chunk.copy_from_slice(&mix(*x).to_le_bytes());
        }
        ConnectionId::new(&bytes[..len])
    }
}

impl ConnectionIdGenerator for SeededCids {
    fn generate_cid(&mut self) -> ConnectionId {
        self.next_cid(CID_BYTES)
    }

    fn cid_len(&self) -> usize {
        CID_BYTES
    }

    fn cid_lifetime(&self) -> Option<std::time::Duration> {
        None
    }
}

/// splitmix64's output function.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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
        chunk.copy_from_slice(&mix(x).to_le_bytes());
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

    #[test]
    fn seeded_connection_ids_repeat_per_seed_and_never_within_one_endpoint() {
        let mut a = SeededCids::new(&seed_bytes(1, "rise host"));
        let mut b = SeededCids::new(&seed_bytes(1, "rise host"));
        let ids: Vec<ConnectionId> = (0..100).map(|_| a.generate_cid()).collect();
        assert_eq!(ids, (0..100).map(|_| b.generate_cid()).collect::<Vec<_>>());
        assert!(ids.iter().all(|c| c.len() == CID_BYTES));
        let distinct: std::collections::BTreeSet<Vec<u8>> =
            ids.iter().map(|c| c.to_vec()).collect();
        assert_eq!(distinct.len(), ids.len());
        // a clone draws from the same sequence
        let mut c = a.clone();
        assert_ne!(c.generate_cid(), a.generate_cid());
        assert_eq!(a.next_cid(CLIENT_DCID_BYTES).len(), CLIENT_DCID_BYTES);
    }
}
