//! `qpr`: the segment server and the headless player of seeds/002 over quinn. The command
//! line and the logs are the harness's contract, see endpoints/README.md.

mod cli;
mod h2tcp;
mod player;
mod server;

use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use clap::Parser;
use quicsetup::summary::{quoted, write_summary};
use quinn::{ConnectionError, VarInt};

use cli::{Args, RoleArg, TransportArg};

const EXIT_BAD_ARGS: u8 = 2;
const EXIT_PEER_LOST: u8 = 3;
const EXIT_NO_CONNECTION: u8 = 4;

/// Application close code of a player that played its whole duration.
const CLOSE_DONE: VarInt = VarInt::from_u32(0);

fn main() -> ExitCode {
    let args = Args::parse(); // clap exits with 2 on bad arguments
    if let Err(e) = args.validate() {
        eprintln!("qpr: {e:#}");
        return ExitCode::from(EXIT_BAD_ARGS);
    }
    quicsetup::run_to_exit("qpr", run(&args))
}

fn path_fields(conn: &quinn::Connection) -> Vec<(&'static str, String)> {
    let s = conn.stats();
    vec![
        ("lost_packets", s.path.lost_packets.to_string()),
        ("sent_packets", s.path.sent_packets.to_string()),
        ("congestion_events", s.path.congestion_events.to_string()),
        ("udp_bytes_sent", s.udp_tx.bytes.to_string()),
        ("udp_bytes_received", s.udp_rx.bytes.to_string()),
        ("cwnd_bytes_at_end", s.path.cwnd.to_string()),
    ]
}

async fn run(args: &Args) -> Result<u8> {
    std::fs::create_dir_all(&args.log_dir)
        .with_context(|| format!("creating {}", args.log_dir.display()))?;
    if args.transport == TransportArg::H2 {
        return run_h2(args).await;
    }
    let setup = args.setup()?;
    let connected = match args.role {
        RoleArg::Server => {
            let bind = args.bind.ok_or_else(|| anyhow!("--bind is required"))?;
            let cert_out = args
                .cert_out
                .as_deref()
                .ok_or_else(|| anyhow!("--cert-out"))?;
            quicsetup::accept_one(&setup, bind, cert_out).await?
        }
        RoleArg::Player => {
            let addr = args
                .connect
                .ok_or_else(|| anyhow!("--connect is required"))?;
            let cert = args.cert.as_deref().ok_or_else(|| anyhow!("--cert"))?;
            quicsetup::connect(&setup, addr, cert).await?
        }
    };
    let (endpoint, conn) = match connected {
        Ok(c) => c,
        Err(quicsetup::ConnectTimeout(why)) => {
            eprintln!("qpr: no connection: {why}");
            write_summary(&args.log_dir, &[("exit_reason", quoted("no_connection"))])?;
            return Ok(EXIT_NO_CONNECTION);
        }
    };
    let code = match args.role {
        RoleArg::Server => {
            let counts = Arc::new(server::Counts::default());
            let why = server::run(&conn, args.scene(), counts.clone()).await;
            let (code, reason) = match &why {
                ConnectionError::ApplicationClosed(c) if c.error_code == CLOSE_DONE => {
                    (0, "peer_closed")
                }
                _ => (EXIT_PEER_LOST, "peer_lost"),
            };
            if code != 0 {
                eprintln!("qpr server: connection ended: {why}");
            }
            let c = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed).to_string();
            let mut f = vec![
                ("role", quoted("server")),
                ("transport", quoted("quic")),
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
            ];
            f.extend(path_fields(&conn));
            write_summary(&args.log_dir, &f)?;
            code
        }
        RoleArg::Player => {
            let grace = Duration::from_secs_f64(args.eod_grace_ms / 1e3);
            let o = match player::Fetcher::quic(&conn, grace).await {
                Ok(f) => player::run(args, f).await,
                Err(e) => Err(e),
            };
            let lost = conn.close_reason();
            conn.close(CLOSE_DONE, b"done");
            let o = match o {
                Ok(o) => o,
                Err(e) if lost.is_some() => {
                    eprintln!("qpr player: {e:#}");
                    write_summary(
                        &args.log_dir,
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
                eprintln!("qpr player: connection ended: {}", o.ended);
            }
            let mut f = vec![
                ("role", quoted("player")),
                ("transport", quoted("quic")),
                ("exit_reason", quoted(reason)),
            ];
            f.extend(player_fields(args, &o));
            f.extend(path_fields(&conn));
            write_summary(&args.log_dir, &f)?;
            code
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
    Ok(code)
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
    ]
}

/// The HTTP/2-over-TCP baseline (h2tcp.rs).
async fn run_h2(args: &Args) -> Result<u8> {
    let limit = Duration::from_secs_f64(args.connect_timeout_s);
    let no_connection = |why: &str| -> Result<u8> {
        eprintln!("qpr: no connection: {why}");
        write_summary(&args.log_dir, &[("exit_reason", quoted("no_connection"))])?;
        Ok(EXIT_NO_CONNECTION)
    };
    match args.role {
        RoleArg::Server => {
            let bind = args.bind.ok_or_else(|| anyhow!("--bind is required"))?;
            let marker = args
                .cert_out
                .as_deref()
                .ok_or_else(|| anyhow!("--cert-out"))?;
            let r0 = h2tcp::tcp_retrans_segs();
            let Some(error) = h2tcp::serve(bind, marker, args.scene(), limit).await? else {
                return no_connection(&format!("no peer within {limit:?}"));
            };
            let retrans = match (r0, h2tcp::tcp_retrans_segs()) {
                (Some(a), Some(b)) => (b - a).to_string(),
                _ => "null".into(),
            };
            // The session's validity is the player's exit code; the server records how the
            // connection ended (an error here is usually the player's exit racing its GOAWAY).
            if let Some(e) = &error {
                eprintln!("qpr server: the connection ended: {e}");
            }
            write_summary(
                &args.log_dir,
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
                .connect
                .ok_or_else(|| anyhow!("--connect is required"))?;
            let marker = args.cert.as_deref().ok_or_else(|| anyhow!("--cert"))?;
            let Some(client) = h2tcp::Client::connect(addr, marker, limit).await? else {
                return no_connection(&format!("no HTTP/2 server at {addr} within {limit:?}"));
            };
            let o = player::run(args, player::Fetcher::H2(client)).await?;
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
            write_summary(&args.log_dir, &f)?;
            Ok(code)
        }
    }
}
