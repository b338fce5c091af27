//! `moq`: a Media-over-QUIC style live-video publisher and subscriber ([MoQ]). The command
//! line and the logs are the harness's contract, see endpoints/README.md.

use std::time::Duration;

use anyhow::{Context, Result};
use quicsetup::shell::{
    close_after, exit, receiver_end, sender_end, sender_error, wait_closed, CLOSE_DONE,
};
use quicsetup::summary::{quoted, write_summary};
use quicsetup::Env;

use crate::cli::{Args, RoleArg};
use crate::{publish, subscribe};

/// The subscriber ends by itself this long after duration + drain (from its connection).
const SUBSCRIBER_SLACK_S: f64 = 2.0;

/// Runs `moq` with `argv` (argv[0] the program's name) in `env`; returns the exit code.
pub async fn run_argv(argv: Vec<String>, env: Env) -> u8 {
    let check = |a: &Args| {
        a.validate()?;
        if let Some(t) = &a.frame_trace {
            // Bad input is reported before any network state exists.
            crate::trace::read_clip(t)?;
        }
        Ok(())
    };
    quicsetup::shell::run_program("moq", argv, env, check, run).await
}

async fn run(args: Args, _: (), env: Env) -> Result<u8> {
    let (args, env) = (&args, &env);
    let log_dir = &args.common.log_dir;
    std::fs::create_dir_all(log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let setup = args.setup(env)?;
    let opened = quicsetup::open_or_note(&setup, args.role.shell(), &args.common, "moq").await?;
    let Some((endpoint, conn)) = opened else {
        return Ok(exit::NO_CONNECTION);
    };
    let scheme = quoted(args.scheme().name());
    let code = match args.role {
        RoleArg::Publisher => {
            let r = publish::run(args, &conn, log_dir, env.clock).await;
            let (code, reason) = sender_end(&r, &conn);
            conn.close(CLOSE_DONE, b"done");
            let o = r.as_ref().ok();
            let s = conn.stats();
            write_summary(
                log_dir,
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
            sender_error(r, code, "moq publisher", &env.console)?;
            code
        }
        RoleArg::Subscriber => {
            // The publisher closes at duration + drain after its start; should its close be
            // lost or stuck behind a full bottleneck queue, end by ourselves a little later.
            let limit =
                Duration::from_secs_f64(args.duration_s + args.drain_s + SUBSCRIBER_SLACK_S);
            let timer = close_after(&conn, limit);
            let o = subscribe::run(&conn, log_dir, env.clock, &env.console).await?;
            timer.abort();
            let (code, reason) = receiver_end(o.close.as_ref());
            if code != 0 {
                env.console.err(format_args!(
                    "moq subscriber: connection ended: {:?}",
                    o.close
                ));
            }
            write_summary(
                log_dir,
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
    wait_closed(&endpoint).await;
    Ok(code)
}
