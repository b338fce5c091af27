//! What a process gets from the sim instead of the real world: its clock, its node's network,
//! its console (stdout/stderr files) and a seed.
//!
//! The types have the interface of `quicsetup`'s (`Env`, `net::Net`, `console::Console`,
//! `clock::Clock`) as far as programs use it, so a program written against those compiles
//! against these. When quicsetup's land, this module becomes re-exports of them plus
//! [`make`] (building `Net::Injected` from a `NodeNet`, which implements its `SocketFactory`
//! in one line), and nothing else in the sim changes.

pub use crate::clock::Clock;
use anyhow::Context;
use quinn::{Endpoint, EndpointConfig, ServerConfig, TokioRuntime};
use simnet::NodeNet;
use std::fmt::Display;
use std::fs::File;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A process's stdout and stderr (files, appended to).
#[derive(Clone, Debug)]
pub struct Console {
    out: Arc<Mutex<File>>,
    err: Arc<Mutex<File>>,
}

impl Console {
    pub fn files(out: &Path, err: &Path) -> io::Result<Self> {
        let open = |p: &Path| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))
        };
        Ok(Console {
            out: Arc::new(Mutex::new(open(out)?)),
            err: Arc::new(Mutex::new(open(err)?)),
        })
    }

    fn line(f: &Mutex<File>, msg: impl Display) {
        let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
        // As println!: a console that cannot be written to does not end the program.
        let _ = writeln!(f, "{msg}");
    }

    /// One line on stdout.
    pub fn out(&self, msg: impl Display) {
        Console::line(&self.out, msg);
    }

    /// One line on stderr.
    pub fn err(&self, msg: impl Display) {
        Console::line(&self.err, msg);
    }
}

/// The process's network: its node's sockets on simnet.
#[derive(Clone)]
pub struct Net(pub NodeNet);

impl Net {
    /// A quinn endpoint bound to `bind` on this node, on quinn's tokio runtime (so on tokio's
    /// virtual clock).
    pub fn endpoint(
        &self,
        bind: SocketAddr,
        config: EndpointConfig,
        server: Option<ServerConfig>,
        _who: &str,
        _console: &Console,
    ) -> anyhow::Result<Endpoint> {
        let sock = self
            .0
            .bind(bind)
            .with_context(|| format!("binding {bind}"))?;
        Endpoint::new_with_abstract_socket(config, server, sock, Arc::new(TokioRuntime))
            .with_context(|| format!("starting the QUIC endpoint on {bind}"))
    }
}

#[derive(Clone)]
pub struct Env {
    pub clock: Clock,
    pub net: Net,
    pub console: Console,
    /// Seeds quinn's endpoint RNG (with the endpoint's name) and the program's own randomness.
    pub rng_seed: Option<u64>,
}

impl Env {
    /// quinn's endpoint configuration, its RNG seeded from [`Env::rng_seed`] and `who`.
    pub fn endpoint_config(&self, who: &str) -> EndpointConfig {
        let mut c = EndpointConfig::default();
        c.rng_seed(self.rng_seed.map(|s| {
            let mut b = [0u8; 32];
            let mut x = s ^ fnv1a(who.as_bytes());
            for chunk in b.chunks_mut(8) {
                x = fnv1a(&x.to_le_bytes());
                chunk.copy_from_slice(&x.to_le_bytes());
            }
            b
        }));
        c
    }
}

/// The environment of one process: `seed` is the run's, made distinct per process by its
/// name (two processes of one program never share a random stream).
pub fn make(clock: Clock, net: NodeNet, console: Console, seed: u64, name: &str) -> Env {
    Env {
        clock,
        net: Net(net),
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
