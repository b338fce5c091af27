//! Which network an endpoint's QUIC socket is on: the kernel's UDP (the binaries), or sockets
//! handed out by the embedding program (the sim site's in-memory network).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use quinn::{Endpoint, EndpointConfig, ServerConfig, TokioRuntime};

use crate::console::Console;
use crate::udpbuf;

/// Hands out a socket for a bind address. `addr` is what the endpoint was told: a listener's
/// `--bind` (possibly `0.0.0.0`), or `0.0.0.0:0` / `[::]:0` for a connector; the factory
/// resolves it to the node's own address and a free port as the kernel would.
pub trait SocketFactory: Send + Sync {
    fn bind(&self, addr: SocketAddr) -> std::io::Result<Arc<dyn quinn::AsyncUdpSocket>>;

    /// The quinn runtime the endpoint runs on (quinn's tokio runtime unless the factory
    /// brings one that reads tokio's clock more cheaply).
    fn runtime(&self) -> Arc<dyn quinn::Runtime> {
        Arc::new(TokioRuntime)
    }
}

#[derive(Clone)]
pub enum Net {
    /// The kernel's UDP through [`udpbuf`] (its large buffers, logged), on tokio.
    Kernel,
    /// Sockets from the factory, driven by quinn's tokio runtime (so by tokio's clock).
    Injected(Arc<dyn SocketFactory>),
}

impl std::fmt::Debug for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Net::Kernel => "Net::Kernel",
            Net::Injected(_) => "Net::Injected",
        })
    }
}

impl Net {
    /// A quinn endpoint bound to `bind`; with [`Net::Kernel`] the socket buffers are logged on
    /// `console` as `{who}: UDP socket buffers: ...`.
    pub fn endpoint(
        &self,
        bind: SocketAddr,
        config: EndpointConfig,
        server: Option<ServerConfig>,
        who: &str,
        console: &Console,
    ) -> Result<Endpoint> {
        match self {
            Net::Kernel => {
                let (sock, buffers) = udpbuf::bind_udp(bind, udpbuf::SOCKET_BUFFER_BYTES)?;
                console.err(format_args!("{who}: {}", buffers.describe()));
                Endpoint::new(config, server, sock, Arc::new(TokioRuntime))
            }
            Net::Injected(factory) => {
                let sock = factory
                    .bind(bind)
                    .with_context(|| format!("binding {bind}"))?;
                Endpoint::new_with_abstract_socket(config, server, sock, factory.runtime())
            }
        }
        .with_context(|| format!("starting the QUIC endpoint on {bind}"))
    }

    pub fn is_kernel(&self) -> bool {
        matches!(self, Net::Kernel)
    }
}
