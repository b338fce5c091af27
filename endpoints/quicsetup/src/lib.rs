//! One QUIC connection between two priolab endpoints (quinn 0.11): the server makes a
//! self-signed certificate, listens, writes the certificate (DER) atomically once listening
//! and accepts one client; the client waits for that file and trusts exactly that
//! certificate. Both give up after a time limit ([`ConnectTimeout`], the endpoints' exit 4).
//! Both bind their socket through the session's [`Env`]: the kernel's UDP through [`udpbuf`]
//! (large kernel buffers, logged) or an injected socket ([`net`]), and read time only from
//! its [`Clock`]. Every connection gets a transport of its own ([`Transport`]), and with
//! `--qlog-dir` a qlog trace of its own ([`qlog`]). [`shell`] is what every endpoint binary
//! shares around its session.

pub mod clock;
pub mod console;
pub mod csv;
pub mod env;
pub mod net;
pub mod qlog;
pub mod seeded_tls;
pub mod shell;
pub mod summary;
pub mod tls;
pub mod udpbuf;

pub use clock::Clock;
pub use console::Console;
pub use env::Env;
pub use net::{Net, SocketFactory};
pub use qlog::{Qlog, Transport};

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use quinn::{
    ClientConfig, Connecting, Connection, Endpoint, IdleTimeout, ServerConfig, TransportConfig,
    VarInt,
};
use rustls::pki_types::CertificateDer;
use tokio::time::{timeout, Instant};

use shell::Role;

use tls::KeyLogFile;

/// What every priolab endpoint's transport starts from: no segmentation offload (DESIGN.md:
/// per-packet link emulation), flow-control windows of `window_bytes` (stream, connection,
/// send), the idle timeout and a keep-alive at a quarter of it (at least 100 ms).
pub fn base_transport(window_bytes: u32, idle: Duration) -> Result<TransportConfig> {
    let mut t = TransportConfig::default();
    t.enable_segmentation_offload(false);
    let w = VarInt::from_u32(window_bytes);
    t.stream_receive_window(w);
    t.receive_window(w);
    t.send_window(u64::from(window_bytes));
    t.max_idle_timeout(Some(
        IdleTimeout::try_from(idle).context("the idle timeout is out of range")?,
    ));
    t.keep_alive_interval(Some((idle / 4).max(Duration::from_millis(100))));
    Ok(t)
}

/// Why no connection came about in time.
#[derive(Debug)]
pub struct ConnectTimeout(pub String);

pub type Connected = std::result::Result<(Endpoint, Connection), ConnectTimeout>;

/// What both sides share: the transport (made afresh per connection), the ALPN, the key log,
/// the time limit, the name the messages on the console start with (and the qlog files'),
/// the world the session runs in, and where the connections' qlog traces go.
#[derive(Clone)]
pub struct Setup {
    pub transport: Transport,
    pub alpn: &'static [u8],
    pub keylog: Option<PathBuf>,
    pub limit: Duration,
    pub who: String,
    pub env: Env,
    pub qlog: Qlog,
}

impl Setup {
    /// The next connection's transport, made by `transport`, with its qlog trace if any.
    pub fn connection_transport(&self, transport: &Transport) -> Result<Arc<TransportConfig>> {
        let mut t = transport.make()?;
        self.qlog.attach(&mut t, &self.who, &self.env.clock)?;
        Ok(Arc::new(t))
    }

    fn endpoint(&self, bind: SocketAddr, server: Option<ServerConfig>) -> Result<Endpoint> {
        let config = self.env.endpoint_config(&self.who);
        self.env
            .net
            .endpoint(bind, config, server, &self.who, &self.env.console)
    }

    fn keylog(&self) -> Result<Option<Arc<KeyLogFile>>> {
        self.keylog
            .as_deref()
            .map(|p| KeyLogFile::create(p).map(Arc::new))
            .transpose()
    }
}

/// Server: listen on `bind`, write the certificate to `cert_out`, accept one client.
pub async fn accept_one(setup: &Setup, bind: SocketAddr, cert_out: &Path) -> Result<Connected> {
    Ok(accept_first(setup, bind, cert_out)
        .await?
        .map(|(ep, conn, _)| (ep, conn)))
}

/// As [`accept_one`], and also the endpoint's server configuration (its certificate), with
/// which [`accept_next`] can accept a further connection under another transport.
pub async fn accept_first(
    setup: &Setup,
    bind: SocketAddr,
    cert_out: &Path,
) -> Result<std::result::Result<(Endpoint, Connection, ServerConfig), ConnectTimeout>> {
    let seed = setup.env.tls_seed(&setup.who);
    let (cert, key) = tls::self_signed(seed)?;
    let crypto = tls::server_crypto(cert.clone(), key, setup.keylog()?, setup.alpn, seed)?;
    let sc = quinn::ServerConfig::with_crypto(crypto);
    let ep = setup
        .endpoint(bind, Some(sc.clone()))
        .with_context(|| format!("listening on {bind}"))?;
    tls::write_cert_atomically(cert_out, &cert)?;
    let console = &setup.env.console;
    console.err(format_args!(
        "{}: listening on {}",
        setup.who,
        ep.local_addr()?
    ));
    let deadline = setup.env.clock.now() + setup.limit;
    Ok(accept_next(&ep, &sc, &setup.transport, deadline, setup)
        .await?
        .map(|conn| (ep, conn, sc)))
}

/// Server: the next client on `ep` by `deadline`, under `server` with a transport `transport`
/// makes for it; a failed handshake is logged and waited past.
pub async fn accept_next(
    ep: &Endpoint,
    server: &ServerConfig,
    transport: &Transport,
    deadline: Instant,
    setup: &Setup,
) -> Result<std::result::Result<Connection, ConnectTimeout>> {
    let (who, limit, console) = (&setup.who, setup.limit, &setup.env.console);
    loop {
        let incoming = match tokio::time::timeout_at(deadline, ep.accept()).await {
            Err(_) => return Ok(Err(ConnectTimeout(format!("no peer within {limit:?}")))),
            Ok(None) => return Err(anyhow!("endpoint closed while accepting")),
            Ok(Some(i)) => i,
        };
        let mut config = server.clone();
        config.transport_config(setup.connection_transport(transport)?);
        let connecting = match incoming.accept_with(Arc::new(config)) {
            Ok(c) => c,
            Err(e) => {
                console.err(format_args!(
                    "{who}: refused an incoming connection ({e}); still waiting"
                ));
                continue;
            }
        };
        match tokio::time::timeout_at(deadline, connecting).await {
            Err(_) => {
                return Ok(Err(ConnectTimeout(format!(
                    "handshake not done within {limit:?}"
                ))))
            }
            Ok(Ok(conn)) => {
                console.err(format_args!(
                    "{who}: peer {} connected",
                    conn.remote_address()
                ));
                return Ok(Ok(conn));
            }
            Ok(Err(e)) => console.err(format_args!(
                "{who}: a handshake failed ({e}); still waiting"
            )),
        }
    }
}

/// Waits for `path` to exist (the server writes it once listening), up to `until`.
async fn wait_for_cert(
    path: &Path,
    until: Instant,
    clock: &Clock,
) -> Result<Option<CertificateDer<'static>>> {
    loop {
        match std::fs::read(path) {
            Ok(der) => return Ok(Some(CertificateDer::from(der))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if clock.now() >= until {
                    return Ok(None);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }
}

/// Client: wait for the server's certificate at `cert_path`, then connect to `addr`.
pub async fn connect(setup: &Setup, addr: SocketAddr, cert_path: &Path) -> Result<Connected> {
    Ok(connect_first(setup, addr, cert_path)
        .await?
        .map(|(ep, conn, _)| (ep, conn)))
}

/// As [`connect`], and also the client configuration (the trust of the server's
/// certificate), with which [`connect_next`] opens a further connection from the endpoint.
pub async fn connect_first(
    setup: &Setup,
    addr: SocketAddr,
    cert_path: &Path,
) -> Result<std::result::Result<(Endpoint, Connection, ClientConfig), ConnectTimeout>> {
    let (limit, clock) = (setup.limit, &setup.env.clock);
    let deadline = clock.now() + limit;
    let Some(cert) = wait_for_cert(cert_path, deadline, clock).await? else {
        return Ok(Err(ConnectTimeout(format!(
            "{} did not appear within {limit:?}",
            cert_path.display()
        ))));
    };
    let seed = setup.env.tls_seed(&setup.who);
    let crypto = tls::client_crypto(cert, setup.keylog()?, setup.alpn, seed)?;
    let mut cc = quinn::ClientConfig::new(crypto);
    setup.env.seed_client(&mut cc, &setup.who);
    let local: SocketAddr = if addr.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    let ep = setup
        .endpoint(local, None)
        .context("opening the client socket")?;
    let connecting = connect_next(setup, &ep, &cc, &setup.transport, addr)?;
    match timeout(deadline.saturating_duration_since(clock.now()), connecting).await {
        Err(_) => Ok(Err(ConnectTimeout(format!(
            "no handshake with {addr} within {limit:?}"
        )))),
        Ok(Err(e)) => Ok(Err(ConnectTimeout(format!("connecting to {addr}: {e}")))),
        Ok(Ok(conn)) => {
            setup
                .env
                .console
                .err(format_args!("{}: connected to {addr}", setup.who));
            Ok(Ok((ep, conn, cc)))
        }
    }
}

/// Client: a connection from `ep` to `addr` under `client`, with a transport `transport`
/// makes for it.
pub fn connect_next(
    setup: &Setup,
    ep: &Endpoint,
    client: &ClientConfig,
    transport: &Transport,
    addr: SocketAddr,
) -> Result<Connecting> {
    let mut cc = client.clone();
    cc.transport_config(setup.connection_transport(transport)?);
    ep.connect_with(cc, addr, tls::SERVER_NAME)
        .with_context(|| format!("connecting to {addr}"))
}

/// The role's side of the connection: the listener accepts one peer on `--bind` and writes
/// its certificate to `--cert-out`; the connector connects to `--connect` trusting `--cert`.
/// The flags must be there ([`shell::CommonArgs::require`]).
pub async fn open(setup: &Setup, role: Role, common: &shell::CommonArgs) -> Result<Connected> {
    let missing = |f: &str| anyhow!("{f} is required");
    match role {
        Role::Listen => {
            let bind = common.bind.ok_or_else(|| missing("--bind"))?;
            let cert_out = common
                .cert_out
                .as_deref()
                .ok_or_else(|| missing("--cert-out"))?;
            accept_one(setup, bind, cert_out).await
        }
        Role::Connect => {
            let addr = common.connect.ok_or_else(|| missing("--connect"))?;
            let cert = common.cert.as_deref().ok_or_else(|| missing("--cert"))?;
            connect(setup, addr, cert).await
        }
    }
}

/// [`open`], and with no connection in time: `{name}: no connection: {why}` on the console,
/// `summary.json` in `log_dir` with `exit_reason` `no_connection`, and `None` (exit 4).
pub async fn open_or_note(
    setup: &Setup,
    role: Role,
    common: &shell::CommonArgs,
    name: &str,
) -> Result<Option<(Endpoint, Connection)>> {
    match open(setup, role, common).await? {
        Ok(c) => Ok(Some(c)),
        Err(ConnectTimeout(why)) => {
            let console = &setup.env.console;
            console.err(format_args!("{name}: no connection: {why}"));
            let reason = summary::quoted("no_connection");
            summary::write_summary(&common.log_dir, &[("exit_reason", reason)])?;
            Ok(None)
        }
    }
}
