//! `roq::run_argv` as the sim site runs it: sender and receiver in virtual time over the sim
//! site's network (simnet: a lossless link, 10 ms one way). Over QUIC (SCReAM with RTCP feedback, NewReno) and over plain UDP every frame is
//! decoded (the loopback tests' check); the codecs take no virtual time, so a picture's
//! decode time is the instant its frame completed at the receiver; and two runs with one
//! seed write byte-identical logs.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use proctest::{assert_same_files, csv_table, scratch, virtual_pair, VirtualRun};
use support::{check, source};

mod support;

/// argv of one side, 2 s of the synthetic source; logs in `dir/s` (sender), `dir/r`.
fn argv(dir: &Path, role: &str, extra: &[&str]) -> Vec<String> {
    let common = ["roq", "--role", role, "--duration-s", "2"];
    let mut v: Vec<String> = common.map(String::from).to_vec();
    v.extend(["--width", "320", "--height", "176"].map(String::from));
    let logs = dir.join(if role == "sender" { "s" } else { "r" });
    v.extend(["--log-dir".into(), logs.display().to_string()]);
    if role == "sender" {
        v.extend(["--source".into(), dir.join("src.yuv").display().to_string()]);
    }
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// QUIC: the sender listens on 10.0.0.2 (virtual_pair's first program), the receiver
/// connects from 10.0.0.1. Codes: (sender, receiver).
fn run_quic(dir: &Path, seed: u64) -> VirtualRun {
    source(dir);
    let cert = dir.join("cert.der").display().to_string();
    let rate = ["--rate", "scream", "--feedback", "rtcp", "--cc", "newreno"];
    let listen = ["--bind", "0.0.0.0:4450", "--cert-out", &cert];
    let connect = ["--connect", "10.0.0.2:4450", "--cert", &cert];
    let s = argv(dir, "sender", &[&rate[..], &listen].concat());
    let r = argv(dir, "receiver", &[&rate[..], &connect].concat());
    virtual_pair(roq::run_argv, s, r, Duration::from_millis(10), seed)
}

/// UDP: the receiver binds on 10.0.0.2 (virtual_pair's first program), the sender sends to
/// it from 10.0.0.1. Codes: (receiver, sender).
fn run_udp(dir: &Path, seed: u64) -> VirtualRun {
    source(dir);
    let r = argv(
        dir,
        "receiver",
        &["--transport", "udp", "--bind", "0.0.0.0:4450"],
    );
    let s = argv(
        dir,
        "sender",
        &["--transport", "udp", "--connect", "10.0.0.2:4450"],
    );
    virtual_pair(roq::run_argv, r, s, Duration::from_millis(10), seed)
}

/// Every decoded picture's `decoded_us` is the time its frame completed at the receiver
/// (decoding took no virtual time), one one-way delay or more after its capture.
fn assert_decoding_takes_no_virtual_time(dir: &Path) {
    let at = |file: &str, val: &str| -> HashMap<String, u64> {
        csv_table(&dir.join(file))
            .iter()
            .map(|r| (r["rtp_ts"].clone(), r[val].parse().unwrap()))
            .collect()
    };
    let captured = at("s/frames_sent.csv", "capture_us");
    let completed = at("r/frames_received.csv", "time_us");
    let decoded = csv_table(&dir.join("r/decoded_frames.csv"));
    assert_eq!(decoded.len(), 50);
    for r in &decoded {
        let (ts, decoded_us) = (&r["rtp_ts"], r["decoded_us"].parse::<u64>().unwrap());
        assert_eq!(Some(&decoded_us), completed.get(ts), "rtp_ts {ts}");
        let latency_us = decoded_us - captured[ts];
        assert!(
            (10_000..200_000).contains(&latency_us),
            "rtp_ts {ts}: {latency_us} µs"
        );
    }
}

#[test]
fn quic_scream_runs_in_virtual_time_and_decoding_takes_none() {
    let d = scratch("roq-virtual", "quic");
    let run = run_quic(&d, 5);
    assert_eq!(run.codes, (0, 0), "{run:?}");
    assert!((2.0..5.0).contains(&run.virtual_s), "{run:?}");
    check(&d, &d.join("src.yuv"));
    assert_decoding_takes_no_virtual_time(&d);
}

#[test]
fn udp_runs_over_the_injected_network() {
    let d = scratch("roq-virtual", "udp");
    let run = run_udp(&d, 5);
    assert_eq!(run.codes, (0, 0), "{run:?}");
    check(&d, &d.join("src.yuv"));
    let summary = std::fs::read_to_string(d.join("s/summary.json")).unwrap();
    assert!(summary.contains("\"transport\": \"udp\""), "{summary}");
    assert_decoding_takes_no_virtual_time(&d);
}

#[test]
fn two_runs_with_one_seed_write_identical_logs() {
    for (name, run) in [
        ("quic", run_quic as fn(&Path, u64) -> VirtualRun),
        ("udp", run_udp),
    ] {
        let a = scratch("roq-virtual", &format!("same-{name}-a"));
        let b = scratch("roq-virtual", &format!("same-{name}-b"));
        let (ra, rb) = (run(&a, 7), run(&b, 7));
        assert_eq!((ra.codes, rb.codes), ((0, 0), (0, 0)), "{ra:?} {rb:?}");
        assert_same_files(&a, &b);
    }
}

#[test]
fn the_session_future_can_be_spawned() {
    // Send, so the sim may tokio::spawn each process's run_argv (a runtime is not needed
    // to make the future, only to run it)
    proctest::assert_send(&roq::run_argv(vec![], quicsetup::Env::real()));
}
