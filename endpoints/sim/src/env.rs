//! What a process gets from the sim instead of the real world: its node's sockets, the
//! virtual clock, its console (stdout/stderr files), a seed, its working directory.
//!
//! This is the sim's own small stand-in for `quicsetup::Env` (clock, net, console,
//! rng_seed); when that lands, [`Env`] becomes it and [`make`] builds it, and nothing else in
//! the sim changes.

pub use crate::clock::Clock;
use simnet::NodeNet;
use std::fs::File;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A process's stdout and stderr (files).
#[derive(Clone, Debug)]
pub struct Console {
    out: Arc<Mutex<File>>,
    err: Arc<Mutex<File>>,
}

impl Console {
    pub fn create(stdout: &Path, stderr: &Path) -> io::Result<Self> {
        let open = |p: &Path| {
            if let Some(d) = p.parent() {
                std::fs::create_dir_all(d)?;
            }
            File::create(p).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))
        };
        Ok(Console {
            out: Arc::new(Mutex::new(open(stdout)?)),
            err: Arc::new(Mutex::new(open(stderr)?)),
        })
    }

    /// A line on stdout (a failed write is ignored, as a closed terminal would be).
    pub fn out(&self, line: &str) {
        let _ = writeln!(self.out.lock().expect("console lock"), "{line}");
    }

    /// A line on stderr.
    pub fn err(&self, line: &str) {
        let _ = writeln!(self.err.lock().expect("console lock"), "{line}");
    }
}

#[derive(Clone)]
pub struct Env {
    pub clock: Clock,
    pub net: NodeNet,
    pub console: Console,
    /// Seeds quinn's endpoint RNG (and anything else random in the process).
    pub rng_seed: Option<u64>,
    pub cwd: PathBuf,
}

impl Env {
    /// Bind a UDP socket on this process's node.
    pub fn bind(&self, addr: SocketAddr) -> io::Result<Arc<dyn quinn::AsyncUdpSocket>> {
        Ok(self.net.bind(addr)?)
    }
}

/// The environment of one process: `seed` is the run's, made distinct per process by its
/// name (two endpoints never share a random stream).
pub fn make(
    clock: Clock,
    net: NodeNet,
    console: Console,
    seed: u64,
    name: &str,
    cwd: PathBuf,
) -> Env {
    Env {
        clock,
        net,
        console,
        rng_seed: Some(seed ^ fnv1a(name.as_bytes())),
        cwd,
    }
}

/// FNV-1a, 64 bit: a fixed hash (std's hasher is randomised per process).
fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}
