//! The endpoint shell every protocol binary shares: exit codes, the common flags, one role
//! vocabulary, the congestion-controller choice, argument parsing onto the [`Console`], the
//! binary's `main`, the end-of-run close and signals.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Result};
use clap::{Args, Parser, ValueEnum};
use quinn::congestion::{BbrConfig, CubicConfig, NewRenoConfig};
use quinn::TransportConfig;

use crate::console::Console;
use crate::env::Env;

/// Exit codes of the endpoints' contract (endpoints/README.md).
pub mod exit {
    /// Ran its duration (or the peer closed normally).
    pub const OK: u8 = 0;
    /// Anything else.
    pub const ERROR: u8 = 1;
    pub const BAD_ARGS: u8 = 2;
    /// Idle timeout or a connection error mid-run.
    pub const PEER_LOST: u8 = 3;
    /// No connection within the time limit.
    pub const NO_CONNECTION: u8 = 4;
}

/// A binary's `main`: runs `run(argv, Env::real())` on a current-thread tokio runtime and
/// exits with its code (1 if the runtime cannot start).
pub fn main<F, Fut>(run: F) -> std::process::ExitCode
where
    F: FnOnce(Vec<String>, Env) -> Fut,
    Fut: Future<Output = u8>,
{
    let argv: Vec<String> = std::env::args().collect();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let name = argv.first().map_or("endpoint", String::as_str);
            Console::process().err(format_args!("{name}: starting the runtime: {e}"));
            return std::process::ExitCode::from(exit::ERROR);
        }
    };
    std::process::ExitCode::from(rt.block_on(async move { run(argv, Env::real()).await }))
}

/// Parses `argv` (argv[0] the program's name) as clap would in `main`: help and version go to
/// the console's stdout with code 0, errors to its stderr with code 2.
pub fn parse<A: Parser>(argv: Vec<String>, console: &Console) -> std::result::Result<A, u8> {
    A::try_parse_from(argv).map_err(|e| {
        let text = e.render().to_string();
        if e.use_stderr() {
            console.err(text);
        } else {
            console.out(text);
        }
        u8::try_from(e.exit_code()).unwrap_or(exit::BAD_ARGS)
    })
}

/// A protocol's whole program over `argv` in `env`: parse (as [`parse`]), `check` the
/// arguments (an error is a bad argument, code 2; its value goes to `run`), then `run` the
/// session; an error from it is printed as `{name}: {error}`, code 1.
pub async fn run_program<A, C, F, Fut>(
    name: &str,
    argv: Vec<String>,
    env: Env,
    check: impl FnOnce(&A) -> Result<C>,
    run: F,
) -> u8
where
    A: Parser,
    F: FnOnce(A, C, Env) -> Fut,
    Fut: Future<Output = Result<u8>>,
{
    let console = env.console.clone();
    let args: A = match parse(argv, &console) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let checked = match check(&args) {
        Ok(c) => c,
        Err(e) => return bad_args(name, &console, &e),
    };
    finish(name, &console, run(args, checked, env).await)
}

/// The exit code of a session's result: an error is printed as `{name}: {error}`, code 1.
pub fn finish(name: &str, console: &Console, r: Result<u8>) -> u8 {
    r.unwrap_or_else(|e| {
        console.err(format_args!("{name}: {e:#}"));
        exit::ERROR
    })
}

/// A bad argument found after parsing: printed as `{name}: {error}`, code 2.
pub fn bad_args(name: &str, console: &Console, e: &anyhow::Error) -> u8 {
    console.err(format_args!("{name}: {e:#}"));
    exit::BAD_ARGS
}

/// The two sides of every protocol: the one that listens (and makes the certificate) and the
/// one that connects. Each protocol's `--role` takes `listen|connect` and its own names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Listen,
    Connect,
}

/// quinn's congestion controllers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Cc {
    Cubic,
    Newreno,
    Bbr,
}

impl Cc {
    pub fn as_str(self) -> &'static str {
        match self {
            Cc::Cubic => "cubic",
            Cc::Newreno => "newreno",
            Cc::Bbr => "bbr",
        }
    }

    /// Sets this controller on `t`.
    pub fn apply(self, t: &mut TransportConfig) {
        match self {
            Cc::Cubic => t.congestion_controller_factory(Arc::new(CubicConfig::default())),
            Cc::Newreno => t.congestion_controller_factory(Arc::new(NewRenoConfig::default())),
            Cc::Bbr => t.congestion_controller_factory(Arc::new(BbrConfig::default())),
        };
    }
}

/// The flags every QUIC pair endpoint takes (flattened into each protocol's command line).
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Listener: UDP address to listen on.
    #[arg(long)]
    pub bind: Option<SocketAddr>,
    /// Listener: where to write the self-signed certificate (DER) once listening.
    #[arg(long)]
    pub cert_out: Option<PathBuf>,
    /// Connector: the listener's address.
    #[arg(long)]
    pub connect: Option<SocketAddr>,
    /// Connector: the listener's certificate (DER), the only one trusted; waited for up to
    /// --connect-timeout-s if it does not exist yet.
    #[arg(long)]
    pub cert: Option<PathBuf>,
    /// Where the logs go (created).
    #[arg(long)]
    pub log_dir: PathBuf,
    #[arg(long, value_enum, default_value_t = Cc::Cubic)]
    pub cc: Cc,
    /// TLS key log (SSLKEYLOGFILE format).
    #[arg(long)]
    pub keylog: Option<PathBuf>,
    /// One qlog trace (JSON-SEQ, quinn's qlog) per QUIC connection into this folder
    /// (created): `<program>-<role>-<n>.sqlog`, n from 1 in the order of the connections.
    #[arg(long)]
    pub qlog_dir: Option<PathBuf>,
    /// How long the listener waits for a peer and the connector for the certificate file
    /// and the handshake; exit 4 after it.
    #[arg(long, default_value_t = 15.0)]
    pub connect_timeout_s: f64,
}

impl CommonArgs {
    /// The flags `role` needs are there (`role_name`: the protocol's name for it).
    pub fn require(&self, role: Role, role_name: &str) -> Result<()> {
        let missing = match role {
            Role::Listen if self.bind.is_none() => Some("--bind"),
            Role::Listen if self.cert_out.is_none() => Some("--cert-out"),
            Role::Connect if self.connect.is_none() => Some("--connect"),
            Role::Connect if self.cert.is_none() => Some("--cert"),
            _ => None,
        };
        if let Some(flag) = missing {
            return Err(anyhow!("{flag} is required for --role {role_name}"));
        }
        if !(self.connect_timeout_s.is_finite() && self.connect_timeout_s > 0.0) {
            return Err(anyhow!(
                "--connect-timeout-s {}: allowed a finite number > 0",
                self.connect_timeout_s
            ));
        }
        Ok(())
    }
}

/// Closes nothing itself: gives a close already made a moment to reach the peer.
pub async fn wait_closed(endpoint: &quinn::Endpoint) {
    let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
}

/// SIGTERM or SIGINT to this process. Where signals cannot be watched (a runtime without
/// I/O), it never fires.
pub struct Stop {
    term: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl Stop {
    pub fn new() -> Self {
        use tokio::signal::unix::{signal, SignalKind};
        Stop {
            term: signal(SignalKind::terminate()).ok(),
            int: signal(SignalKind::interrupt()).ok(),
        }
    }

    /// The signals a session on `net` answers: the process's own on the kernel's network;
    /// none on an injected one, whose process (the sim) holds other sessions too and whose
    /// runtime may have no I/O driver (tokio panics registering a signal there).
    pub fn for_net(net: &crate::net::Net) -> Self {
        if net.is_kernel() {
            Stop::new()
        } else {
            Stop {
                term: None,
                int: None,
            }
        }
    }

    /// The name of the signal that came.
    pub async fn wait(&mut self) -> &'static str {
        async fn one(s: &mut Option<tokio::signal::unix::Signal>) {
            match s {
                Some(s) => {
                    if s.recv().await.is_none() {
                        std::future::pending::<()>().await;
                    }
                }
                None => std::future::pending::<()>().await,
            }
        }
        tokio::select! {
            biased;
            _ = one(&mut self.term) => "SIGTERM",
            _ = one(&mut self.int) => "SIGINT",
        }
    }
}

impl Default for Stop {
    fn default() -> Self {
        Stop::new()
    }
}

/// Application close code of a session that ran its whole duration.
pub const CLOSE_DONE: quinn::VarInt = quinn::VarInt::from_u32(0);

/// How a sending session ended, as (exit code, reason): its result `r` and whether its
/// connection was lost.
pub fn sender_end<T>(r: &Result<T>, conn: &quinn::Connection) -> (u8, &'static str) {
    match (r, conn.close_reason()) {
        (Ok(_), None) => (exit::OK, "duration"),
        (_, Some(_)) => (exit::PEER_LOST, "peer_lost"),
        (Err(_), None) => (exit::ERROR, "error"),
    }
}

/// How a receiving session ended, as (exit code, reason), from its connection's close.
pub fn receiver_end(close: Option<&quinn::ConnectionError>) -> (u8, &'static str) {
    use quinn::ConnectionError;
    match close {
        Some(ConnectionError::ApplicationClosed(c)) if c.error_code == CLOSE_DONE => {
            (exit::OK, "peer_closed")
        }
        Some(ConnectionError::LocallyClosed) => (exit::OK, "duration"),
        _ => (exit::PEER_LOST, "peer_lost"),
    }
}

/// Closes `conn` with [`CLOSE_DONE`] after `limit`: a receiver's own end should the sender's
/// close be lost or stuck behind a full queue. Abort the handle to cancel it.
pub fn close_after(conn: &quinn::Connection, limit: Duration) -> tokio::task::JoinHandle<()> {
    let c = conn.clone();
    tokio::spawn(async move {
        tokio::time::sleep(limit).await;
        c.close(CLOSE_DONE, b"duration");
    })
}

/// After a sender's summary is written: its session's error ends the program (exit 1) when
/// the connection was not lost (`code` [`exit::ERROR`]); otherwise it is only reported.
pub fn sender_error<T>(r: Result<T>, code: u8, who: &str, console: &Console) -> Result<()> {
    if let Err(e) = r {
        if code == exit::ERROR {
            return Err(e);
        }
        console.err(format_args!("{who}: {e:#}"));
    }
    Ok(())
}
