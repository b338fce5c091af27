//! `qpr`: the segment server and the headless player of [QPR] over quinn. The command
//! line and the logs are the harness's contract, see endpoints/README.md.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::ValueEnum;
use quicsetup::shell::{exit, wait_closed, CLOSE_DONE};
use quicsetup::summary::{quoted, write_summary};
use quicsetup::Env;
use quinn::{Connection, ConnectionError, Endpoint};
use tokio::time::Instant;

use crate::cli::{Args, RoleArg, TransportArg};
use crate::{h2tcp, player, server};

const EXIT_PEER_LOST: u8 = exit::PEER_LOST;
const EXIT_NO_CONNECTION: u8 = exit::NO_CONNECTION;

/// Runs `qpr` with `argv` (argv[0] the program's name) in `env`; returns the exit code.
pub async fn run_argv(argv: Vec<String>, env: Env) -> u8 {
    quicsetup::shell::run_program("qpr", argv, env, Args::validate, run).await
}

/// summary.json's names for [`path_values`], in its order.
const PATH_KEYS: [&str; 6] = [
    "lost_packets",
    "sent_packets",
    "congestion_events",
    "udp_bytes_sent",
    "udp_bytes_received",
    "cwnd_bytes_at_end",
];
/// The same figures of the datagram connection (a second-connection unreliable path).
const DGRAM_PATH_KEYS: [&str; 6] = [
    "unreliable_conn_lost_packets",
    "unreliable_conn_sent_packets",
    "unreliable_conn_congestion_events",
    "unreliable_conn_udp_bytes_sent",
    "unreliable_conn_udp_bytes_received",
    "unreliable_conn_cwnd_bytes_at_end",
];

/// A connection's path figures at the end, in [`PATH_KEYS`]' order.
fn path_values(conn: &quinn::Connection) -> [String; 6] {
    let s = conn.stats();
    [
        s.path.lost_packets.to_string(),
        s.path.sent_packets.to_string(),
        s.path.congestion_events.to_string(),
        s.udp_tx.bytes.to_string(),
        s.udp_rx.bytes.to_string(),
        s.path.cwnd.to_string(),
    ]
}

fn path_fields(conn: &quinn::Connection) -> Vec<(&'static str, String)> {
    PATH_KEYS.into_iter().zip(path_values(conn)).collect()
}

/// The path figures of the datagram connection, prefixed `unreliable_conn_`; nothing on the
/// shared path.
fn dgram_path_fields(
    conn: &quinn::Connection,
    dgram: &quinn::Connection,
) -> Vec<(&'static str, String)> {
    if dgram.stable_id() == conn.stable_id() {
        return vec![];
    }
    DGRAM_PATH_KEYS
        .into_iter()
        .zip(path_values(dgram))
        .collect()
}

fn path_name(args: &Args) -> String {
    let v = args
        .unreliable_path
        .to_possible_value()
        .expect("no skipped variants");
    quoted(&v.get_name().replace('-', "_"))
}

async fn run(args: Args, _: (), env: Env) -> Result<u8> {
    let (args, env) = (&args, &env);
    let log_dir = &args.common.log_dir;
    std::fs::create_dir_all(log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    if args.transport == TransportArg::H2 {
        if !env.net.is_kernel() {
            // TCP is the kernel's: there is no injected TCP (the sim site has QUIC only).
            env.console
                .err("qpr: --transport h2 needs the kernel's TCP, not available here");
            return Ok(exit::BAD_ARGS);
        }
        return run_h2(args, env).await;
    }
    let setup = args.setup(env)?;
    let deadline = env.clock.now() + setup.limit;
    let connected = match args.role {
        RoleArg::Server => connect_server(args, &setup, deadline).await?,
        RoleArg::Player => connect_player(args, &setup, deadline).await?,
    };
    let (endpoint, conn, dgram) = match connected {
        Ok(c) => c,
        Err(quicsetup::ConnectTimeout(why)) => {
            env.console.err(format_args!("qpr: no connection: {why}"));
            write_summary(log_dir, &[("exit_reason", quoted("no_connection"))])?;
            return Ok(EXIT_NO_CONNECTION);
        }
    };
    let code = match args.role {
        RoleArg::Server => {
            let counts = Arc::new(server::Counts::default());
            let content = (args.scene(), args.fec());
            let why = server::run(&conn, &dgram, content, counts.clone(), &env.console).await;
            let (code, reason) = match &why {
                ConnectionError::ApplicationClosed(c) if c.error_code == CLOSE_DONE => {
                    (0, "peer_closed")
                }
                _ => (EXIT_PEER_LOST, "peer_lost"),
            };
            if code != 0 {
                env.console
                    .err(format_args!("qpr server: connection ended: {why}"));
            }
            let c = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed).to_string();
            let mut f = vec![
                ("role", quoted("server")),
                ("transport", quoted("quic")),
                ("unreliable_path", path_name(args)),
                ("exit_reason", quoted(reason)),
                (
                    "initial_window_bytes",
                    args.initial_window_bytes.to_string(),
                ),
                ("reliable_requests", c(&counts.reliable_requests)),
                ("reliable_bytes", c(&counts.reliable_bytes)),
                ("unreliable_requests", c(&counts.unreliable_requests)),
                ("datagrams_sent", c(&counts.datagrams_sent)),
                ("unreliable_bytes", c(&counts.unreliable_bytes)),
                ("fec_repair_pct", args.fec_repair_pct.to_string()),
                ("fec_block", args.fec_block.to_string()),
                ("repair_datagrams", c(&counts.repair_datagrams)),
                ("repair_bytes", c(&counts.repair_bytes)),
            ];
            f.extend(path_fields(&conn));
            f.extend(dgram_path_fields(&conn, &dgram));
            write_summary(log_dir, &f)?;
            code
        }
        RoleArg::Player => {
            let grace = Duration::from_secs_f64(args.eod_grace_ms / 1e3);
            let o = match player::Fetcher::quic(&conn, &dgram, (grace, args.fec()), env.clock).await
            {
                Ok(f) => player::run(args, f, env.clock).await,
                Err(e) => Err(e),
            };
            let lost = conn.close_reason().or_else(|| dgram.close_reason());
            dgram.close(CLOSE_DONE, b"done");
            conn.close(CLOSE_DONE, b"done");
            let o = match o {
                Ok(o) => o,
                Err(e) if lost.is_some() => {
                    env.console.err(format_args!("qpr player: {e:#}"));
                    write_summary(
                        log_dir,
                        &[
                            ("role", quoted("player")),
                            ("exit_reason", quoted("peer_lost")),
                        ],
                    )?;
                    return Ok(EXIT_PEER_LOST);
                }
                Err(e) => return Err(e),
            };
            let (code, reason) = match lost {
                None => (0, "duration"),
                Some(_) => (EXIT_PEER_LOST, "peer_lost"),
            };
            if code != 0 {
                env.console
                    .err(format_args!("qpr player: connection ended: {}", o.ended));
            }
            let mut f = vec![
                ("role", quoted("player")),
                ("transport", quoted("quic")),
                ("unreliable_path", path_name(args)),
                ("exit_reason", quoted(reason)),
            ];
            f.extend(player_fields(args, &o));
            f.extend(path_fields(&conn));
            f.extend(dgram_path_fields(&conn, &dgram));
            write_summary(log_dir, &f)?;
            code
        }
    };
    wait_closed(&endpoint).await;
    Ok(code)
}

/// The endpoint, the first connection and the connection the datagrams go on.
type Conns = std::result::Result<(Endpoint, Connection, Connection), quicsetup::ConnectTimeout>;

/// Server: the first connection, then on a second-connection unreliable path the player's
/// second connection from the same address, under the datagram transport.
async fn connect_server(args: &Args, setup: &quicsetup::Setup, deadline: Instant) -> Result<Conns> {
    let bind = args
        .common
        .bind
        .ok_or_else(|| anyhow!("--bind is required"))?;
    let cert_out = args
        .common
        .cert_out
        .as_deref()
        .ok_or_else(|| anyhow!("--cert-out"))?;
    let (ep, conn, sc) = match quicsetup::accept_first(setup, bind, cert_out).await? {
        Ok(c) => c,
        Err(e) => return Ok(Err(e)),
    };
    let Some(transport) = args.datagram_transport()? else {
        return Ok(Ok((ep, conn.clone(), conn)));
    };
    let dgram = match quicsetup::accept_next(&ep, &sc, &transport, deadline, setup).await? {
        Ok(d) => d,
        Err(e) => return Ok(Err(e)),
    };
    if dgram.remote_address() != conn.remote_address() {
        bail!(
            "the datagram connection came from {}, the first from {}",
            dgram.remote_address(),
            conn.remote_address()
        );
    }
    Ok(Ok((ep, conn, dgram)))
}

/// Player: the first connection, then on a second-connection unreliable path a second one
/// from the same socket (same 5-tuple) once the first is up, so the server sees it second.
async fn connect_player(args: &Args, setup: &quicsetup::Setup, deadline: Instant) -> Result<Conns> {
    let addr = args
        .common
        .connect
        .ok_or_else(|| anyhow!("--connect is required"))?;
    let cert = args
        .common
        .cert
        .as_deref()
        .ok_or_else(|| anyhow!("--cert"))?;
    let (ep, conn, client) = match quicsetup::connect_first(setup, addr, cert).await? {
        Ok(c) => c,
        Err(e) => return Ok(Err(e)),
    };
    if !args.unreliable_path.path().second_connection() {
        return Ok(Ok((ep, conn.clone(), conn)));
    }
    let connecting = quicsetup::connect_next(setup, &ep, &client, &setup.transport, addr)
        .with_context(|| format!("connecting the datagram connection to {addr}"))?;
    match tokio::time::timeout_at(deadline, connecting).await {
        Err(_) => Ok(Err(quicsetup::ConnectTimeout(format!(
            "no datagram connection to {addr} by the time limit"
        )))),
        Ok(Err(e)) => Ok(Err(quicsetup::ConnectTimeout(format!(
            "the datagram connection to {addr}: {e}"
        )))),
        Ok(Ok(d)) => Ok(Ok((ep, conn, d))),
    }
}

fn player_fields(args: &Args, o: &player::Outcome) -> Vec<(&'static str, String)> {
    vec![
        ("q_pct", args.q_pct.to_string()),
        ("segments", o.segments.to_string()),
        ("freezes", o.freezes.to_string()),
        ("freeze_total_s", format!("{:.3}", o.freeze_total_s)),
        ("startup_s", format!("{:.3}", o.startup_s)),
        ("played_s", format!("{:.3}", o.played_s)),
        ("objects_incomplete", o.objects_incomplete.to_string()),
        ("datagrams_received", o.datagrams_received.to_string()),
        ("objects_recovered", o.objects_recovered.to_string()),
    ]
}

/// The HTTP/2-over-TCP baseline (h2tcp.rs).
async fn run_h2(args: &Args, env: &Env) -> Result<u8> {
    let limit = Duration::from_secs_f64(args.common.connect_timeout_s);
    let log_dir = &args.common.log_dir;
    let no_connection = |why: &str| -> Result<u8> {
        env.console.err(format_args!("qpr: no connection: {why}"));
        write_summary(log_dir, &[("exit_reason", quoted("no_connection"))])?;
        Ok(EXIT_NO_CONNECTION)
    };
    match args.role {
        RoleArg::Server => {
            let bind = args
                .common
                .bind
                .ok_or_else(|| anyhow!("--bind is required"))?;
            let marker = args
                .common
                .cert_out
                .as_deref()
                .ok_or_else(|| anyhow!("--cert-out"))?;
            let r0 = h2tcp::tcp_retrans_segs();
            let Some(error) = h2tcp::serve(bind, marker, args.scene(), limit, &env.console).await?
            else {
                return no_connection(&format!("no peer within {limit:?}"));
            };
            let retrans = match (r0, h2tcp::tcp_retrans_segs()) {
                (Some(a), Some(b)) => (b - a).to_string(),
                _ => "null".into(),
            };
            // The session's validity is the player's exit code; the server records how the
            // connection ended (an error here is usually the player's exit racing its GOAWAY).
            if let Some(e) = &error {
                env.console
                    .err(format_args!("qpr server: the connection ended: {e}"));
            }
            write_summary(
                log_dir,
                &[
                    ("role", quoted("server")),
                    ("transport", quoted("h2")),
                    ("exit_reason", quoted("peer_closed")),
                    (
                        "connection_error",
                        error.as_deref().map_or("null".into(), quoted),
                    ),
                    // TCP segments this host retransmitted during the run (/proc/net/snmp)
                    ("lost_packets", retrans),
                ],
            )?;
            Ok(0)
        }
        RoleArg::Player => {
            let addr = args
                .common
                .connect
                .ok_or_else(|| anyhow!("--connect is required"))?;
            let marker = args
                .common
                .cert
                .as_deref()
                .ok_or_else(|| anyhow!("--cert"))?;
            let Some(client) = h2tcp::Client::connect(addr, marker, limit, env.clock).await? else {
                return no_connection(&format!("no HTTP/2 server at {addr} within {limit:?}"));
            };
            let o = player::run(args, player::Fetcher::H2(client), env.clock).await?;
            let (code, reason) = if o.ended == "duration" {
                (0, "duration")
            } else {
                (EXIT_PEER_LOST, "peer_lost")
            };
            let mut f = vec![
                ("role", quoted("player")),
                ("transport", quoted("h2")),
                ("exit_reason", quoted(reason)),
            ];
            f.extend(player_fields(args, &o));
            write_summary(log_dir, &f)?;
            Ok(code)
        }
    }
}
