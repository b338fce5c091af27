//! `sim-dgram`: a quinn server/client pair exchanging QUIC datagrams at a fixed rate, to test
//! the sim (binary, network, determinism) without a protocol crate.
//!
//! ```text
//! sim-dgram --role listen  --bind 0.0.0.0:4433 --cert-out DIR/cert.der --log FILE
//! sim-dgram --role connect --connect 10.0.1.1:4433 --cert DIR/cert.der --log FILE
//!           [--rate-mbps 10] [--size-bytes 1100] [--duration-s 10]
//! ```
//!
//! Each datagram carries its sequence number and send time. Both sides log one CSV row per
//! 100 ms: `time_us,datagrams,bytes,delay_us_sum,max_seq` (the receiver's one-way delays; 0
//! on the sender). The client sends for the duration, then closes; the server exits when the
//! client has closed. Exit codes: 0 done, 2 bad arguments, 3 peer lost, 4 no connection
//! within --timeout-s, 1 anything else.

use crate::env::{Clock, Env};
use crate::tls;
use bytes::Bytes;
use clap::{Parser, ValueEnum};
use quinn::{ConnectionError, Endpoint, TransportConfig};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::{sleep_until, timeout, Instant};

const ALPN: &[u8] = b"sim-dgram";
const WINDOW: Duration = Duration::from_millis(100);
const HEADER_BYTES: usize = 16;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Role {
    Listen,
    Connect,
}

#[derive(Parser, Debug)]
#[command(
    name = "sim-dgram",
    about = "QUIC datagrams at a fixed rate (a sim test program)"
)]
struct Args {
    #[arg(long, value_enum)]
    role: Role,
    #[arg(long, default_value = "0.0.0.0:4433")]
    bind: SocketAddr,
    #[arg(long)]
    connect: Option<SocketAddr>,
    #[arg(long)]
    cert_out: Option<PathBuf>,
    #[arg(long)]
    cert: Option<PathBuf>,
    #[arg(long, default_value_t = 10.0)]
    rate_mbps: f64,
    /// Datagram size (at most what the connection allows at its start, 1,162 bytes at
    /// quinn's initial MTU of 1,200).
    #[arg(long, default_value_t = 1100, value_parser = clap::value_parser!(u64).range(16..=1400))]
    size_bytes: u64,
    #[arg(long, default_value_t = 10.0)]
    duration_s: f64,
    #[arg(long)]
    log: PathBuf,
    /// How long to wait for the peer (connection, certificate file).
    #[arg(long, default_value_t = 10.0)]
    timeout_s: f64,
}

/// Run `sim-dgram` with `argv` (argv[0] is the program's name); the exit code.
pub async fn run_argv(argv: Vec<String>, env: Env) -> u8 {
    let args = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            env.console.err(e.to_string().trim_end());
            return code;
        }
    };
    let r = match args.role {
        Role::Listen => listen(&args, &env).await,
        Role::Connect => connect(&args, &env).await,
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            env.console.err(format_args!("sim-dgram: {e}"));
            1
        }
    }
}

fn transport() -> Arc<TransportConfig> {
    let mut t = TransportConfig::default();
    t.enable_segmentation_offload(false);
    Arc::new(t)
}

fn endpoint(
    env: &Env,
    bind: SocketAddr,
    server: Option<quinn::ServerConfig>,
    who: &str,
) -> io::Result<Endpoint> {
    let config = env.endpoint_config(who);
    env.net
        .endpoint(bind, config, server, who, &env.console)
        .map_err(|e| io::Error::other(format!("{e:#}")))
}

fn required<'a, T>(v: &'a Option<T>, flag: &str) -> io::Result<&'a T> {
    v.as_ref().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{flag} is required with this role"),
        )
    })
}

async fn listen(args: &Args, env: &Env) -> io::Result<u8> {
    let cert_out = required(&args.cert_out, "--cert-out")?;
    let (cert, key) = tls::self_signed()?;
    let mut sc = tls::server(cert.clone(), key, ALPN)?;
    sc.transport_config(transport());
    let ep = endpoint(env, args.bind, Some(sc), "sim-dgram listen")?;
    write_atomically(cert_out, &cert)?;
    env.console
        .err(format_args!("sim-dgram: listening on {}", ep.local_addr()?));
    let limit = Duration::from_secs_f64(args.timeout_s);
    let Ok(Some(incoming)) = timeout(limit, ep.accept()).await else {
        env.console.err("sim-dgram: no peer in time");
        return Ok(4);
    };
    let conn = match timeout(limit, incoming).await {
        Ok(Ok(c)) => c,
        _ => return Ok(4),
    };
    let mut log = WindowLog::create(&args.log, env.clock)?;
    let code = loop {
        tokio::select! {
            d = conn.read_datagram() => match d {
                Ok(d) if d.len() >= HEADER_BYTES => {
                    let seq = u64::from_be_bytes(d[..8].try_into().expect("8 bytes"));
                    let sent_us = u64::from_be_bytes(d[8..16].try_into().expect("8 bytes"));
                    let delay_us = (env.clock.unix_ns() / 1000).saturating_sub(sent_us);
                    log.add(d.len() as u64, delay_us, seq)?;
                }
                Ok(_) => {}
                Err(ConnectionError::ApplicationClosed(_)) => break 0,
                Err(e) => {
                    env.console.err(format_args!("sim-dgram: peer lost: {e}"));
                    break 3;
                }
            },
            _ = sleep_until(log.window_end) => log.roll()?,
        }
    };
    log.finish()?;
    env.console
        .out(format_args!("received {} datagrams", log.total));
    ep.wait_idle().await;
    Ok(code)
}

async fn connect(args: &Args, env: &Env) -> io::Result<u8> {
    let to = *required(&args.connect, "--connect")?;
    let cert_path = required(&args.cert, "--cert")?;
    let limit = Duration::from_secs_f64(args.timeout_s);
    let Some(cert) = wait_for_file(cert_path, &env.clock, env.clock.now() + limit).await? else {
        env.console.err(format_args!(
            "sim-dgram: no {} in time",
            cert_path.display()
        ));
        return Ok(4);
    };
    let mut cc = tls::client(cert.into(), ALPN)?;
    cc.transport_config(transport());
    let ep = endpoint(
        env,
        "0.0.0.0:0".parse().expect("an address"),
        None,
        "sim-dgram connect",
    )?;
    let connecting = ep
        .connect_with(cc, to, tls::SERVER_NAME)
        .map_err(|e| io::Error::other(e.to_string()))?;
    let conn = match timeout(limit, connecting).await {
        Ok(Ok(c)) => c,
        _ => return Ok(4),
    };
    let mut log = WindowLog::create(&args.log, env.clock)?;
    let gap = Duration::from_secs_f64(args.size_bytes as f64 * 8.0 / (args.rate_mbps * 1e6));
    let start = env.clock.now();
    let end = start + Duration::from_secs_f64(args.duration_s);
    let mut next = start;
    let mut seq = 0u64;
    let size = (args.size_bytes as usize).min(conn.max_datagram_size().unwrap_or(0));
    if size < HEADER_BYTES {
        env.console
            .err("sim-dgram: the peer does not take datagrams this large");
        return Ok(1);
    }
    let mut payload = vec![0u8; size];
    // Stop at the end even when behind (congestion control held datagrams back).
    while next < end && env.clock.now() < end {
        if next > env.clock.now() {
            sleep_until(next.min(log.window_end)).await;
            if env.clock.now() >= log.window_end {
                log.roll()?;
            }
            continue;
        }
        payload[..8].copy_from_slice(&seq.to_be_bytes());
        payload[8..16].copy_from_slice(&(env.clock.unix_ns() / 1000).to_be_bytes());
        if let Err(e) = conn
            .send_datagram_wait(Bytes::copy_from_slice(&payload))
            .await
        {
            env.console.err(format_args!("sim-dgram: peer lost: {e}"));
            log.finish()?;
            return Ok(3);
        }
        log.add(payload.len() as u64, 0, seq)?;
        seq += 1;
        next += gap;
    }
    log.finish()?;
    env.console.out(format_args!("sent {seq} datagrams"));
    conn.close(0u32.into(), b"done");
    ep.wait_idle().await;
    Ok(0)
}

/// The file's bytes once it exists (polled every 10 ms of virtual time), or None at `deadline`.
async fn wait_for_file(
    path: &Path,
    clock: &Clock,
    deadline: Instant,
) -> io::Result<Option<Vec<u8>>> {
    loop {
        match std::fs::read(path) {
            Ok(b) => return Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        if clock.now() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// The Unix time (µs) of the instant `at`, not later than now.
fn unix_us_at(clock: &Clock, at: Instant) -> u64 {
    clock.unix_us() - clock.now().saturating_duration_since(at).as_micros() as u64
}

/// One CSV row per 100 ms window.
struct WindowLog {
    out: BufWriter<File>,
    clock: Clock,
    window_end: Instant,
    datagrams: u64,
    bytes: u64,
    delay_us_sum: u64,
    max_seq: Option<u64>,
    total: u64,
}

impl WindowLog {
    fn create(path: &Path, clock: Clock) -> io::Result<Self> {
        let f = File::create(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let mut out = BufWriter::new(f);
        writeln!(out, "time_us,datagrams,bytes,delay_us_sum,max_seq")?;
        Ok(WindowLog {
            out,
            clock,
            window_end: clock.now() + WINDOW,
            datagrams: 0,
            bytes: 0,
            delay_us_sum: 0,
            max_seq: None,
            total: 0,
        })
    }

    fn add(&mut self, bytes: u64, delay_us: u64, seq: u64) -> io::Result<()> {
        if self.clock.now() >= self.window_end {
            self.roll()?;
        }
        self.datagrams += 1;
        self.total += 1;
        self.bytes += bytes;
        self.delay_us_sum += delay_us;
        self.max_seq = Some(self.max_seq.map_or(seq, |m| m.max(seq)));
        Ok(())
    }

    /// Write the row of the window that ended (and of any empty ones since).
    fn roll(&mut self) -> io::Result<()> {
        while self.clock.now() >= self.window_end {
            self.row(self.window_end)?;
            self.window_end += WINDOW;
        }
        Ok(())
    }

    fn row(&mut self, at: Instant) -> io::Result<()> {
        let max_seq = self.max_seq.map_or(-1, |m| m as i64);
        writeln!(
            self.out,
            "{},{},{},{},{max_seq}",
            unix_us_at(&self.clock, at),
            self.datagrams,
            self.bytes,
            self.delay_us_sum
        )?;
        (self.datagrams, self.bytes, self.delay_us_sum) = (0, 0, 0);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.row(self.clock.now())?;
        self.out.flush()
    }
}
