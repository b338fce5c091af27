//! TLS whose randomness comes from a seed: for reproducible runs only (an [`crate::Env`] with
//! `rng_seed`, i.e. the sim site), never for a real deployment, whose keys must be secret.
//!
//! The sim is deterministic per seed, and with a packet capture (`capture:`) or a TLS key log
//! what it writes includes the handshake's random bytes and everything they key: ring's
//! default provider draws its randoms and the X25519 ephemeral key from the OS, and rcgen the
//! certificate's key, so two runs of one seed had the same packet sizes and times but
//! different bytes. Here the three come from the seed (and the endpoint's name): the
//! provider's `secure_random` (TLS randoms, session tickets), the key exchange (X25519 with
//! a private key drawn from the same stream, computed by `x25519-dalek`) and the
//! certificate's Ed25519 key (its 32-byte seed). Ciphers, signatures and verification are
//! ring's, as in [`rustls::crypto::ring::default_provider`].

use std::sync::Mutex;

use rustls::crypto::{
    ActiveKeyExchange, CryptoProvider, GetRandomFailed, SecureRandom, SharedSecret,
    SupportedKxGroup,
};
use rustls::{Error, NamedGroup, PeerMisbehaved};

/// A splitmix64 stream (not a cryptographic generator: reproducible on purpose).
#[derive(Debug)]
struct Stream(Mutex<u64>);

impl Stream {
    fn fill(&self, buf: &mut [u8]) {
        let mut x = self.0.lock().expect("seeded stream");
        for chunk in buf.chunks_mut(8) {
            *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = *x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            let b = (z ^ (z >> 31)).to_le_bytes();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
    }
}

impl SecureRandom for Stream {
    fn fill(&self, buf: &mut [u8]) -> Result<(), GetRandomFailed> {
        Stream::fill(self, buf);
        Ok(())
    }
}

/// X25519 (RFC 7748) with ephemeral keys from a [`Stream`].
#[derive(Debug)]
struct SeededX25519(&'static Stream);

struct Exchange {
    private: [u8; 32],
    public: [u8; 32],
}

impl SupportedKxGroup for SeededX25519 {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let mut private = [0u8; 32];
        self.0.fill(&mut private);
        let public = x25519_dalek::x25519(private, x25519_dalek::X25519_BASEPOINT_BYTES);
        Ok(Box::new(Exchange { private, public }))
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

impl ActiveKeyExchange for Exchange {
    fn complete(self: Box<Self>, peer_pub_key: &[u8]) -> Result<SharedSecret, Error> {
        let peer: [u8; 32] = peer_pub_key
            .try_into()
            .map_err(|_| Error::from(PeerMisbehaved::InvalidKeyShare))?;
        let shared = x25519_dalek::x25519(self.private, peer);
        if shared == [0u8; 32] {
            // a low-order point (RFC 7748 §6.1), as ring refuses it
            return Err(PeerMisbehaved::InvalidKeyShare.into());
        }
        Ok(SharedSecret::from(&shared[..]))
    }

    fn pub_key(&self) -> &[u8] {
        &self.public
    }

    fn group(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

fn stream(seed: u64) -> &'static Stream {
    // a provider holds its randomness as `&'static`: one small stream per endpoint set-up,
    // left for the process's life (a sim run makes a few)
    Box::leak(Box::new(Stream(Mutex::new(seed))))
}

/// ring's default provider with its randomness and key exchange from `seed`.
pub fn provider(seed: u64) -> CryptoProvider {
    let s = stream(seed);
    let kx: &'static SeededX25519 = Box::leak(Box::new(SeededX25519(stream(seed ^ 0x5eed))));
    CryptoProvider {
        kx_groups: vec![kx],
        secure_random: s,
        ..rustls::crypto::ring::default_provider()
    }
}

/// The PKCS#8 (RFC 8410, version 1) document of the Ed25519 key whose 32-byte private seed
/// comes from `seed`.
pub fn ed25519_pkcs8(seed: u64) -> Vec<u8> {
    const PREFIX: [u8; 16] = [
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    let mut key = [0u8; 32];
    Stream(Mutex::new(seed)).fill(&mut key);
    [&PREFIX[..], &key[..]].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_seed_one_stream() {
        let (a, b) = (Stream(Mutex::new(7)), Stream(Mutex::new(7)));
        let (mut x, mut y) = ([0u8; 37], [0u8; 37]);
        a.fill(&mut x);
        b.fill(&mut y);
        assert_eq!(x, y);
        Stream(Mutex::new(8)).fill(&mut y);
        assert_ne!(x, y);
    }

    #[test]
    fn the_key_exchange_agrees_and_repeats_per_seed() {
        let (a, b) = (SeededX25519(stream(1)), SeededX25519(stream(2)));
        let (ka, kb) = (a.start().unwrap(), b.start().unwrap());
        let (pa, pb) = (ka.pub_key().to_vec(), kb.pub_key().to_vec());
        let sa = ka.complete(&pb).unwrap();
        let sb = kb.complete(&pa).unwrap();
        assert_eq!(sa.secret_bytes(), sb.secret_bytes());
        assert_eq!(SeededX25519(stream(1)).start().unwrap().pub_key(), &pa[..]);
        // a low-order peer key is refused
        let k = SeededX25519(stream(3)).start().unwrap();
        assert!(k.complete(&[0u8; 32]).is_err());
    }

    #[test]
    fn the_certificate_key_is_a_pkcs8_ed25519_key_ring_reads() {
        let der = ed25519_pkcs8(9);
        assert_eq!(der.len(), 48);
        assert!(ring::signature::Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der).is_ok());
        assert_eq!(der, ed25519_pkcs8(9));
        assert_ne!(der, ed25519_pkcs8(10));
    }
}
