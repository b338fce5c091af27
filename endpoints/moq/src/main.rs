//! `moq`: a Media-over-QUIC style live-video publisher and subscriber (seeds/004). The command
//! line and the logs are the harness's contract, see endpoints/README.md.

mod cli;
mod publish;
mod subscribe;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use clap::Parser;
use quicsetup::summary::{quoted, write_summary};
use quinn::{ConnectionError, VarInt};

use cli::{Args, RoleArg};

const EXIT_ERROR: u8 = 1;
const EXIT_BAD_ARGS: u8 = 2;
const EXIT_PEER_LOST: u8 = 3;
const EXIT_NO_CONNECTION: u8 = 4;

/// The subscriber ends by itself this long after duration + drain (from its connection).
const SUBSCRIBER_SLACK_S: f64 = 2.0;

/// Application close code of a publisher that streamed its whole duration.
const CLOSE_DONE: VarInt = VarInt::from_u32(0);

fn main() -> ExitCode {
    let args = Args::parse(); // clap exits with 2 on bad arguments
    if let Err(e) = args.validate() {
        eprintln!("moq: {e:#}");
        return ExitCode::from(EXIT_BAD_ARGS);
    }
    if let Some(t) = &args.frame_trace {
        // Bad input is reported before any network state exists.
        if let Err(e) = moq::trace::read_clip(t) {
            eprintln!("moq: {e:#}");
            return ExitCode::from(EXIT_BAD_ARGS);
        }
    }
    quicsetup::shell::run_to_exit("moq", run(&args))
}

async fn run(args: &Args) -> Result<u8> {
    std::fs::create_dir_all(&args.log_dir)
        .with_context(|| format!("creating {}", args.log_dir.display()))?;
    let setup = args.setup()?;
    let connected = match args.role {
        RoleArg::Publisher => {
            let bind = args.bind.ok_or_else(|| anyhow!("--bind is required"))?;
            let cert_out = args
                .cert_out
                .as_deref()
                .ok_or_else(|| anyhow!("--cert-out"))?;
            quicsetup::accept_one(&setup, bind, cert_out).await?
        }
        RoleArg::Subscriber => {
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
            eprintln!("moq: no connection: {why}");
            write_summary(&args.log_dir, &[("exit_reason", quoted("no_connection"))])?;
            return Ok(EXIT_NO_CONNECTION);
        }
    };
    let scheme = quoted(args.scheme().name());
    let code = match args.role {
        RoleArg::Publisher => {
            let r = publish::run(args, &conn, &args.log_dir).await;
            let lost = conn.close_reason();
            let (code, reason) = match (&r, lost) {
                (Ok(_), None) => (0, "duration"),
                (_, Some(_)) => (EXIT_PEER_LOST, "peer_lost"),
                (Err(_), None) => (EXIT_ERROR, "error"),
            };
            conn.close(CLOSE_DONE, b"done");
            let o = r.as_ref().ok();
            let s = conn.stats();
            write_summary(
                &args.log_dir,
                &[
                    ("role", quoted("publisher")),
                    ("exit_reason", quoted(reason)),
                    ("scheme", scheme),
                    ("frames_sent", o.map_or(0, |o| o.frames).to_string()),
                    ("frame_bytes_sent", o.map_or(0, |o| o.bytes).to_string()),
                    (
                        "streams_opened",
                        o.map_or(0, |o| o.streams_opened).to_string(),
                    ),
                    (
                        "streams_reset",
                        o.map_or(0, |o| o.streams_reset).to_string(),
                    ),
                    (
                        "max_write_wait_us",
                        o.map_or(0, |o| o.max_write_wait_us).to_string(),
                    ),
                    ("lost_packets", s.path.lost_packets.to_string()),
                    ("sent_packets", s.path.sent_packets.to_string()),
                    ("udp_bytes_sent", s.udp_tx.bytes.to_string()),
                ],
            )?;
            if let Err(e) = r {
                if code == EXIT_ERROR {
                    return Err(e);
                }
                eprintln!("moq publisher: {e:#}");
            }
            code
        }
        RoleArg::Subscriber => {
            // The publisher closes at duration + drain after its start; should its close be
            // lost or stuck behind a full bottleneck queue, end by ourselves a little later.
            let limit =
                Duration::from_secs_f64(args.duration_s + args.drain_s + SUBSCRIBER_SLACK_S);
            let c = conn.clone();
            let timer = tokio::spawn(async move {
                tokio::time::sleep(limit).await;
                c.close(CLOSE_DONE, b"duration");
            });
            let o = subscribe::run(&conn, &args.log_dir).await?;
            timer.abort();
            let (code, reason) = match &o.close {
                Some(ConnectionError::ApplicationClosed(c)) if c.error_code == CLOSE_DONE => {
                    (0, "peer_closed")
                }
                Some(ConnectionError::LocallyClosed) => (0, "duration"),
                _ => (EXIT_PEER_LOST, "peer_lost"),
            };
            if code != 0 {
                eprintln!("moq subscriber: connection ended: {:?}", o.close);
            }
            write_summary(
                &args.log_dir,
                &[
                    ("role", quoted("subscriber")),
                    ("exit_reason", quoted(reason)),
                    ("frames_received", o.frames.to_string()),
                    ("streams", o.streams.to_string()),
                    ("streams_reset", o.streams_reset.to_string()),
                    ("streams_broken", o.streams_broken.to_string()),
                ],
            )?;
            code
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
    Ok(code)
}
