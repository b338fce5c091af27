//! The `roq` binary over loopback: a synthetic moving I420 source (no file needed), sender
//! and receiver over QUIC (SCReAM with RTCP feedback, and with feedback inferred from QUIC
//! with congestion control off) and over UDP. Every frame sent is decoded, and the decoded
//! luma is close to the source's; with no loss the receiver sends no PLI. A UDP sender answers
//! a PLI from a stand-in receiver with an IDR at its next frame.

use std::time::Duration;

use proctest::{free_port, scratch, spawn, wait};
use support::{check, json_u64, source};

mod support;

const BIN: &str = env!("CARGO_BIN_EXE_roq");

fn common<'a>(dir: &'a str, role: &'a str, src: &'a str) -> Vec<&'a str> {
    let mut v = vec!["--role", role, "--log-dir", dir, "--duration-s", "2"];
    v.extend(["--width", "320", "--height", "176"]);
    if role == "sender" {
        v.extend(["--source", src]);
    }
    v
}

fn run_quic(name: &str, extra: &[&str]) {
    let d = scratch("roq", name);
    let src = source(&d);
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let cert = d.join("cert.der").display().to_string();
    let (sd, rd) = (
        d.join("s").display().to_string(),
        d.join("r").display().to_string(),
    );
    let srcs = src.display().to_string();
    let mut a = common(&sd, "sender", &srcs);
    a.extend(["--bind", &bind, "--cert-out", &cert]);
    a.extend(extra);
    let s = spawn(BIN, &a);
    let mut b = common(&rd, "receiver", &srcs);
    b.extend(["--connect", &bind, "--cert", &cert]);
    b.extend(extra);
    let r = spawn(BIN, &b);
    let (sc, se) = wait(s, Duration::from_secs(30));
    let (rc, re) = wait(r, Duration::from_secs(30));
    assert_eq!((sc, rc), (0, 0), "sender: {se}\nreceiver: {re}");
    check(&d, &src);
}

#[test]
fn quic_scream_rtcp_newreno() {
    run_quic(
        "scream",
        &["--rate", "scream", "--feedback", "rtcp", "--cc", "newreno"],
    );
}

#[test]
fn quic_scream_inferred_feedback_cc_off() {
    run_quic(
        "inferred",
        &["--rate", "scream", "--feedback", "quic", "--cc", "none"],
    );
}

#[test]
fn quic_gcc_rtcp_newreno() {
    run_quic(
        "gcc",
        &["--rate", "gcc", "--feedback", "rtcp", "--cc", "newreno"],
    );
}

#[test]
fn udp_reference() {
    let d = scratch("roq", "udp");
    let src = source(&d);
    let addr = format!("127.0.0.1:{}", free_port());
    let (sd, rd) = (
        d.join("s").display().to_string(),
        d.join("r").display().to_string(),
    );
    let srcs = src.display().to_string();
    let mut b = common(&rd, "receiver", &srcs);
    b.extend(["--transport", "udp", "--bind", &addr]);
    let r = spawn(BIN, &b);
    std::thread::sleep(Duration::from_millis(300));
    let mut a = common(&sd, "sender", &srcs);
    a.extend(["--transport", "udp", "--connect", &addr]);
    let s = spawn(BIN, &a);
    let (sc, se) = wait(s, Duration::from_secs(30));
    let (rc, re) = wait(r, Duration::from_secs(30));
    assert_eq!((sc, rc), (0, 0), "sender: {se}\nreceiver: {re}");
    check(&d, &src);
}

/// A stand-in receiver (a UDP socket here) sends one RTCP PLI once frame 10 has arrived:
/// the sender counts it and its next frame is an IDR marked `forced`, the only one.
#[test]
fn udp_sender_answers_a_pli_with_an_idr() {
    use roq_core::pli::Pli;
    use std::net::UdpSocket;
    use std::time::Instant;

    let d = scratch("roq", "pli");
    let src = source(&d);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let addr = sock.local_addr().unwrap().to_string();
    let sd = d.join("s").display().to_string();
    let srcs = src.display().to_string();
    let mut a = common(&sd, "sender", &srcs);
    // no periodic IDR after the first within the run
    a.extend([
        "--transport",
        "udp",
        "--connect",
        &addr,
        "--key-int-frames",
        "250",
    ]);
    let s = spawn(BIN, &a);
    let (mut sent_at_ts, mut buf) = (None, [0u8; 2048]);
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        if n >= 2 && buf[1] == 203 {
            break; // the sender's BYE
        }
        let ts = u32::from_be_bytes(buf[4..8].try_into().unwrap());
        if sent_at_ts.is_none() && ts >= 10 * 3600 {
            let pli = Pli {
                sender_ssrc: 7,
                media_ssrc: u32::from_be_bytes(buf[8..12].try_into().unwrap()),
            };
            sock.send_to(&pli.encode(), from).unwrap();
            sent_at_ts = Some(ts);
        }
    }
    let (code, err) = wait(s, Duration::from_secs(30));
    assert_eq!(code, 0, "{err}");
    let sum = d.join("s/summary.json");
    assert_eq!(json_u64(&sum, "pli_received"), 1);
    assert_eq!(json_u64(&sum, "key_frames_forced"), 1);
    let frames = std::fs::read_to_string(d.join("s/frames_sent.csv")).unwrap();
    let forced: Vec<(u64, &str)> = frames
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (c[7] == "1").then(|| (c[1].parse().unwrap(), c[6]))
        })
        .collect();
    assert_eq!(forced.len(), 1, "{frames}");
    let (ts, key) = forced[0];
    assert_eq!(key, "1");
    assert!(ts > sent_at_ts.unwrap() as u64, "{ts} {sent_at_ts:?}");
}

#[test]
fn bad_source_is_refused_before_any_network() {
    let d = scratch("roq", "bad");
    let p = d.join("odd.yuv");
    std::fs::write(&p, [0u8; 1000]).unwrap();
    let dir = d.display().to_string();
    let ps = p.display().to_string();
    let mut a = common(&dir, "sender", &ps);
    a.extend(["--bind", "127.0.0.1:1", "--cert-out", "/nonexistent/c"]);
    let (code, err) = wait(spawn(BIN, &a), Duration::from_secs(10));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("not a whole number of 320x176 I420 frames"),
        "{err}"
    );
}
