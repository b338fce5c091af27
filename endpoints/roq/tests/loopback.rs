//! The `roq` binary over loopback: a synthetic moving I420 source (no file needed), sender
//! and receiver over QUIC (SCReAM with RTCP feedback, and with feedback inferred from QUIC
//! with congestion control off) and over UDP. Every frame sent is decoded, and the decoded
//! luma is close to the source's; with no loss the receiver sends no PLI. A UDP sender answers
//! a PLI from a stand-in receiver with an IDR at its next frame.

use std::path::Path;
use std::time::Duration;

use proctest::{free_port, scratch, spawn, wait};

const BIN: &str = env!("CARGO_BIN_EXE_roq");
const W: usize = 320;
const H: usize = 176;
const FRAMES: usize = 25;

fn source(dir: &Path) -> std::path::PathBuf {
    let mut v = Vec::with_capacity(FRAMES * W * H * 3 / 2);
    for f in 0..FRAMES {
        for y in 0..H {
            for x in 0..W {
                v.push(((x + 3 * f) / 2 % 200 + (y / 8) % 2 * 40) as u8);
            }
        }
        v.extend(std::iter::repeat_n(128u8, W * H / 2));
    }
    let p = dir.join("src.yuv");
    std::fs::write(&p, v).unwrap();
    p
}

fn json_u64(p: &Path, key: &str) -> u64 {
    let s = std::fs::read_to_string(p).unwrap();
    let i = s
        .find(&format!("\"{key}\": "))
        .unwrap_or_else(|| panic!("{key} in {s}"));
    s[i + key.len() + 4..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect::<String>()
        .parse()
        .unwrap()
}

fn check(dir: &Path, src: &Path) {
    let r = dir.join("r");
    let sent = json_u64(&dir.join("s/summary.json"), "frames_sent");
    assert_eq!(sent, FRAMES as u64 * 2, "2 s at 25 fps");
    assert_eq!(json_u64(&r.join("summary.json"), "frames_complete"), sent);
    assert_eq!(json_u64(&r.join("summary.json"), "pictures_decoded"), sent);
    let y = std::fs::read(r.join("decoded.y")).unwrap();
    assert_eq!(y.len(), sent as usize * W * H);
    // frame 30 is source frame 5 (the source loops): close to it
    let s = std::fs::read(src).unwrap();
    let frame = W * H * 3 / 2;
    let (a, b) = (&y[30 * W * H..31 * W * H], &s[5 * frame..5 * frame + W * H]);
    let mad = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.abs_diff(*y) as u64)
        .sum::<u64>()
        / (W * H) as u64;
    assert!(mad < 8, "mean absolute luma difference {mad}");
    // no loss: no PLI, no forced IDR
    assert_eq!(json_u64(&r.join("summary.json"), "pli_sent"), 0);
    assert_eq!(json_u64(&r.join("summary.json"), "chain_breaks"), 0);
    assert_eq!(
        json_u64(&dir.join("s/summary.json"), "key_frames_forced"),
        0
    );
    let log = std::fs::read_to_string(r.join("decoded_frames.csv")).unwrap();
    assert!(
        log.lines().nth(31).unwrap().starts_with("30,108000,"),
        "rtp_ts of frame 30"
    );
}

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
