//! `dtp`: deadline-aware block delivery over QUIC (seeds/001). The command line and the logs
//! are the harness's contract, see endpoints/README.md.

mod cli;
mod recv;
mod send;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use clap::Parser;
use quinn::{ConnectionError, VarInt};

use cli::{Args, RoleArg};
use quicsetup::summary::{quoted, write_summary};

const EXIT_ERROR: u8 = 1;
const EXIT_BAD_ARGS: u8 = 2;
const EXIT_PEER_LOST: u8 = 3;
const EXIT_NO_CONNECTION: u8 = 4;

/// The receiver ends by itself this long after duration + drain (from its connection).
const RECEIVER_SLACK_S: f64 = 2.0;

/// Application close code of a sender that ran its whole duration.
const CLOSE_DONE: VarInt = VarInt::from_u32(0);

fn main() -> ExitCode {
    let args = Args::parse(); // clap exits with 2 on bad arguments
    if let Err(e) = args.validate() {
        eprintln!("dtp: {e:#}");
        return ExitCode::from(EXIT_BAD_ARGS);
    }
    quicsetup::shell::run_to_exit("dtp", run(&args))
}

async fn run(args: &Args) -> Result<u8> {
    std::fs::create_dir_all(&args.log_dir)
        .with_context(|| format!("creating {}", args.log_dir.display()))?;
    let setup = args.setup()?;
    let connected = match args.role {
        RoleArg::Sender => {
            let bind = args.bind.ok_or_else(|| anyhow!("--bind is required"))?;
            let cert_out = args
                .cert_out
                .as_deref()
                .ok_or_else(|| anyhow!("--cert-out"))?;
            quicsetup::accept_one(&setup, bind, cert_out).await?
        }
        RoleArg::Receiver => {
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
            eprintln!("dtp: no connection: {why}");
            write_summary(&args.log_dir, &[("exit_reason", quoted("no_connection"))])?;
            return Ok(EXIT_NO_CONNECTION);
        }
    };
    let code = match args.role {
        RoleArg::Sender => {
            let r = send::run(args, &conn, &args.log_dir).await;
            let lost = conn.close_reason();
            let (code, reason) = match (&r, lost) {
                (Ok(_), None) => (0, "duration"),
                (_, Some(_)) => (EXIT_PEER_LOST, "peer_lost"),
                (Err(_), None) => (EXIT_ERROR, "error"),
            };
            conn.close(CLOSE_DONE, b"done");
            let o = r.as_ref().ok();
            let s = conn.stats();
            let n = |f: fn(&send::Outcome) -> u64| o.map_or(0, f).to_string();
            write_summary(
                &args.log_dir,
                &[
                    ("role", quoted("sender")),
                    ("exit_reason", quoted(reason)),
                    ("scheme", quoted(args.scheme_name())),
                    ("alpha", format!("{}", args.alpha)),
                    ("blocks_released", n(|o| o.released)),
                    ("blocks_sent", n(|o| o.completed)),
                    ("blocks_dropped", n(|o| o.dropped)),
                    ("blocks_pending", n(|o| o.pending)),
                    ("block_bytes_written", n(|o| o.block_bytes_written)),
                    ("streams_reset", n(|o| o.streams_reset)),
                    (
                        "redundancy",
                        quoted(match args.redundancy {
                            cli::Redundancy::Off => "off",
                            cli::Redundancy::On => "on",
                            cli::Redundancy::Always => "always",
                        }),
                    ),
                    ("fec_groups", n(|o| o.fec_groups)),
                    ("parity_bytes", n(|o| o.parity_bytes)),
                    ("lost_packets", s.path.lost_packets.to_string()),
                    ("sent_packets", s.path.sent_packets.to_string()),
                    ("udp_bytes_sent", s.udp_tx.bytes.to_string()),
                ],
            )?;
            if let Err(e) = r {
                if code == EXIT_ERROR {
                    return Err(e);
                }
                eprintln!("dtp sender: {e:#}");
            }
            code
        }
        RoleArg::Receiver => {
            // The sender closes at duration + drain after its start; should its close be
            // lost or stuck behind a full queue, end by ourselves a little later.
            let limit = Duration::from_secs_f64(args.duration_s + args.drain_s + RECEIVER_SLACK_S);
            let c = conn.clone();
            let timer = tokio::spawn(async move {
                tokio::time::sleep(limit).await;
                c.close(CLOSE_DONE, b"duration");
            });
            let o = recv::run(&conn, &args.log_dir).await?;
            timer.abort();
            let (code, reason) = match &o.close {
                Some(ConnectionError::ApplicationClosed(c)) if c.error_code == CLOSE_DONE => {
                    (0, "peer_closed")
                }
                Some(ConnectionError::LocallyClosed) => (0, "duration"),
                _ => (EXIT_PEER_LOST, "peer_lost"),
            };
            if code != 0 {
                eprintln!("dtp receiver: connection ended: {:?}", o.close);
            }
            let s = conn.stats();
            write_summary(
                &args.log_dir,
                &[
                    ("role", quoted("receiver")),
                    ("exit_reason", quoted(reason)),
                    ("blocks_complete", o.complete.to_string()),
                    ("blocks_recovered", o.recovered.to_string()),
                    ("parity_received", o.parity_received.to_string()),
                    ("streams_reset", o.reset.to_string()),
                    ("streams_broken", o.broken.to_string()),
                    ("udp_bytes_received", s.udp_rx.bytes.to_string()),
                ],
            )?;
            code
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
    Ok(code)
}
