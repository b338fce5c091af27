//! `roq`: RTP over QUIC ([RoQ]). The command line and the logs are the harness's
//! contract, see endpoints/README.md ("roq").

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use quicsetup::shell::{exit, wait_closed, CLOSE_DONE};
use quicsetup::summary::{quoted, write_summary};
use quicsetup::Env;

use crate::cli::{Args, LossRecovery, Role, Transport};
use crate::media::CodecTime;
use crate::net::{Net, UdpSock};
use crate::{media, receiver, sender};

const EXIT_PEER_LOST: u8 = exit::PEER_LOST;
const EXIT_NO_CONNECTION: u8 = exit::NO_CONNECTION;

/// Runs `roq` with `argv` (argv[0] the program's name) in `env`; returns the exit code. On
/// the kernel's network the codecs run live beside the session; on an injected one (the
/// sim's, under a paused tokio clock) they take no virtual time (endpoints/README.md, "roq
/// and virtual time").
pub async fn run_argv(argv: Vec<String>, env: Env) -> u8 {
    quicsetup::shell::run_program("roq", argv, env, Args::validate, run).await
}

async fn run(args: Args, _: (), env: Env) -> Result<u8> {
    let (args, env) = (&args, &env);
    let codec_time = CodecTime::of(env);
    std::fs::create_dir_all(&args.log_dir)
        .with_context(|| format!("creating {}", args.log_dir.display()))?;
    let taps = Arc::new(Mutex::new(VecDeque::new()));
    let (net, endpoint) = match args.transport {
        Transport::Quic => {
            let setup = args.setup(taps.clone(), env)?;
            let connected = match args.role {
                Role::Sender => {
                    let (bind, cert) = (args.bind.unwrap(), args.cert_out.as_deref().unwrap());
                    quicsetup::accept_one(&setup, bind, cert).await?
                }
                Role::Receiver => {
                    let (addr, cert) = (args.connect.unwrap(), args.cert.as_deref().unwrap());
                    quicsetup::connect(&setup, addr, cert).await?
                }
            };
            match connected {
                Ok((ep, conn)) => (Net::Quic(conn), Some(ep)),
                Err(quicsetup::ConnectTimeout(why)) => {
                    env.console.err(format_args!("roq: no connection: {why}"));
                    write_summary(&args.log_dir, &[("exit_reason", quoted("no_connection"))])?;
                    return Ok(EXIT_NO_CONNECTION);
                }
            }
        }
        Transport::Udp => {
            let bind = match args.role {
                Role::Receiver => args.bind.unwrap(),
                Role::Sender => "0.0.0.0:0".parse()?,
            };
            let sock = UdpSock::bind(&env.net, bind).await?;
            (
                Net::Udp {
                    sock,
                    peer: args.connect,
                },
                None,
            )
        }
    };
    let conn = match &net {
        Net::Quic(c) => Some(c.clone()),
        Net::Udp { .. } => None,
    };
    let transport = quoted(net.name());
    let code = match args.role {
        Role::Sender => {
            let r = sender::run(args, net, taps, env.clock, codec_time).await;
            let (code, reason) = match &r {
                Ok(_) => (0, "duration"),
                Err(e) => {
                    env.console.err(format_args!("roq sender: {e:#}"));
                    (EXIT_PEER_LOST, "error")
                }
            };
            let o = r.unwrap_or_default();
            let mut f = vec![
                ("role", quoted("sender")),
                ("gstreamer", quoted(&media::gst_version())),
                ("transport", transport),
                ("exit_reason", quoted(reason)),
                ("frames_sent", o.frames.to_string()),
                ("key_frames_sent", o.key_frames.to_string()),
                ("rtp_packets_sent", o.rtp_packets.to_string()),
                ("rtp_bytes_sent", o.rtp_bytes.to_string()),
                ("feedback_reports", o.feedback_reports.to_string()),
                ("rtp_queue_discarded", o.queue_discarded.to_string()),
                ("pli_received", o.pli_received.to_string()),
                ("key_frames_forced", o.key_frames_forced.to_string()),
                ("competing_bytes", o.competing_bytes.to_string()),
            ];
            if let Some(c) = &conn {
                // let the last datagrams leave before closing (assumption: 200 ms)
                tokio::time::sleep(Duration::from_millis(200)).await;
                let s = c.stats();
                f.push(("quic_lost_packets", s.path.lost_packets.to_string()));
                f.push(("quic_sent_packets", s.path.sent_packets.to_string()));
                f.push(("udp_bytes_sent", s.udp_tx.bytes.to_string()));
                c.close(CLOSE_DONE, b"done");
            }
            write_summary(&args.log_dir, &f)?;
            code
        }
        Role::Receiver => {
            let started = env.clock.now();
            let o = receiver::run(args, net, (env.clock, codec_time), &env.console).await?;
            // the sender's close (or BYE) may be lost at the end: an idle timeout after the
            // whole duration is the end of the stream, not a lost peer
            let after_duration = (env.clock.now() - started).as_secs_f64() >= args.duration_s;
            let ok = matches!(o.end.as_str(), "bye")
                || o.end.contains("closed by peer")
                || o.end == "time limit"
                || (o.end.contains("timed out") && after_duration);
            if let Some(c) = &conn {
                c.close(CLOSE_DONE, b"done");
            }
            write_summary(
                &args.log_dir,
                &[
                    ("role", quoted("receiver")),
                    ("exit_reason", quoted(&o.end)),
                    ("rtp_packets_received", o.packets.to_string()),
                    ("frames_complete", o.frames_complete.to_string()),
                    ("key_frames_complete", o.key_frames_complete.to_string()),
                    ("frames_lost", o.frames_lost.to_string()),
                    ("frames_pushed_to_decoder", o.frames_pushed.to_string()),
                    ("pictures_decoded", o.pictures_decoded.to_string()),
                    ("decoder_errors", o.decoder_bus.errors.to_string()),
                    (
                        "decoder_errors_at_eos",
                        o.decoder_bus.errors_at_eos.to_string(),
                    ),
                    ("decoder_warnings", o.decoder_bus.warnings.to_string()),
                    (
                        "decoder_messages",
                        format!(
                            "[{}]",
                            o.decoder_bus
                                .first_messages
                                .iter()
                                .map(|m| quoted(m))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ),
                    ("feedback_sent", o.feedback_sent.to_string()),
                    (
                        "loss_recovery",
                        quoted(match args.loss_recovery {
                            LossRecovery::Pli => "pli",
                            LossRecovery::NextIdr => "next-idr",
                        }),
                    ),
                    ("pli_sent", o.pli.sent.to_string()),
                    ("chain_breaks", o.pli.breaks.to_string()),
                    ("undecodable_frames", o.pli.undecodable_frames.to_string()),
                    ("chain_broken_ms", (o.pli.broken_us / 1000).to_string()),
                    ("competing_bytes_received", o.competing_bytes.to_string()),
                ],
            )?;
            if ok {
                0
            } else {
                env.console
                    .err(format_args!("roq receiver: ended: {}", o.end));
                EXIT_PEER_LOST
            }
        }
    };
    if let Some(ep) = endpoint {
        wait_closed(&ep).await;
    }
    Ok(code)
}
