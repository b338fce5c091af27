//! `dtp`: deadline-aware block delivery over QUIC ([DTP]). The command line and the logs
//! are the harness's contract, see endpoints/README.md.

use std::time::Duration;

use anyhow::{Context, Result};
use quicsetup::shell::{
    close_after, exit, receiver_end, sender_end, sender_error, wait_closed, CLOSE_DONE,
};
use quicsetup::summary::{quoted, write_summary};
use quicsetup::Env;

use crate::cli::{self, Args, RoleArg};
use crate::{recv, send};

/// The receiver ends by itself this long after duration + drain (from its connection).
const RECEIVER_SLACK_S: f64 = 2.0;

/// Runs `dtp` with `argv` (argv[0] the program's name) in `env`; returns the exit code.
pub async fn run_argv(argv: Vec<String>, env: Env) -> u8 {
    quicsetup::shell::run_program("dtp", argv, env, Args::validate, run).await
}

async fn run(args: Args, _: (), env: Env) -> Result<u8> {
    let (args, env) = (&args, &env);
    let log_dir = &args.common.log_dir;
    std::fs::create_dir_all(log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let setup = args.setup(env)?;
    let opened = quicsetup::open_or_note(&setup, args.role.shell(), &args.common, "dtp").await?;
    let Some((endpoint, conn)) = opened else {
        return Ok(exit::NO_CONNECTION);
    };
    let code = match args.role {
        RoleArg::Sender => {
            let r = send::run(args, &conn, log_dir, env.clock).await;
            let (code, reason) = sender_end(&r, &conn);
            conn.close(CLOSE_DONE, b"done");
            let o = r.as_ref().ok();
            let s = conn.stats();
            let n = |f: fn(&send::Outcome) -> u64| o.map_or(0, f).to_string();
            write_summary(
                log_dir,
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
                    ("parity_skipped", n(|o| o.parity_skipped)),
                    ("lost_packets", s.path.lost_packets.to_string()),
                    ("sent_packets", s.path.sent_packets.to_string()),
                    ("udp_bytes_sent", s.udp_tx.bytes.to_string()),
                ],
            )?;
            sender_error(r, code, "dtp sender", &env.console)?;
            code
        }
        RoleArg::Receiver => {
            // The sender closes at duration + drain after its start; should its close be
            // lost or stuck behind a full queue, end by ourselves a little later.
            let limit = Duration::from_secs_f64(args.duration_s + args.drain_s + RECEIVER_SLACK_S);
            let timer = close_after(&conn, limit);
            let o = recv::run(&conn, log_dir, env.clock, env.console.clone()).await?;
            timer.abort();
            let (code, reason) = receiver_end(o.close.as_ref());
            if code != 0 {
                env.console.err(format_args!(
                    "dtp receiver: connection ended: {:?}",
                    o.close
                ));
            }
            let s = conn.stats();
            write_summary(
                log_dir,
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
    wait_closed(&endpoint).await;
    Ok(code)
}
