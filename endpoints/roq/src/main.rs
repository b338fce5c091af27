//! `roq`: RTP over QUIC (seeds/003). The command line and the logs are the harness's
//! contract, see endpoints/README.md ("roq").

mod cc;
mod cli;
mod media;
mod net;
mod receiver;
mod sender;

use std::collections::VecDeque;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use quicsetup::summary::{quoted, write_summary};
use quinn::VarInt;
use tokio::net::UdpSocket;

use cli::{Args, Role, Transport};
use net::Net;

const EXIT_BAD_ARGS: u8 = 2;
const EXIT_PEER_LOST: u8 = 3;
const EXIT_NO_CONNECTION: u8 = 4;
const CLOSE_DONE: VarInt = VarInt::from_u32(0);

fn main() -> ExitCode {
    let args = Args::parse(); // clap exits with 2 on bad arguments
    if let Err(e) = args.validate() {
        eprintln!("roq: {e:#}");
        return ExitCode::from(EXIT_BAD_ARGS);
    }
    quicsetup::shell::run_to_exit("roq", run(&args))
}

async fn run(args: &Args) -> Result<u8> {
    std::fs::create_dir_all(&args.log_dir)
        .with_context(|| format!("creating {}", args.log_dir.display()))?;
    let taps = Arc::new(Mutex::new(VecDeque::new()));
    let (net, endpoint) = match args.transport {
        Transport::Quic => {
            let setup = args.setup(taps.clone())?;
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
                    eprintln!("roq: no connection: {why}");
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
            let sock = UdpSocket::bind(bind)
                .await
                .with_context(|| format!("binding {bind}"))?;
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
            let r = sender::run(args, net, taps).await;
            let (code, reason) = match &r {
                Ok(_) => (0, "duration"),
                Err(e) => {
                    eprintln!("roq sender: {e:#}");
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
            let started = std::time::Instant::now();
            let o = receiver::run(args, net).await?;
            // the sender's close (or BYE) may be lost at the end: an idle timeout after the
            // whole duration is the end of the stream, not a lost peer
            let after_duration = started.elapsed().as_secs_f64() >= args.duration_s;
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
                    ("competing_bytes_received", o.competing_bytes.to_string()),
                ],
            )?;
            if ok {
                0
            } else {
                eprintln!("roq receiver: ended: {}", o.end);
                EXIT_PEER_LOST
            }
        }
    };
    if let Some(ep) = endpoint {
        let _ = tokio::time::timeout(Duration::from_secs(1), ep.wait_idle()).await;
    }
    Ok(code)
}
