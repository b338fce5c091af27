//! Runs the real `dtp` binary as sender and receiver over loopback and checks the contract:
//! exit codes, the logs, every block released once and, with room to spare, delivered
//! complete before its deadline under every scheme; a deadline too short for any block makes
//! the dropping schemes reset streams while QUIC delivers everything late; bad input and a
//! missing sender give their exit codes.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use proctest::{free_port, spawn, wait, Table};

const BIN: &str = env!("CARGO_BIN_EXE_dtp");

fn table(p: &Path) -> Table {
    proctest::csv_table(p)
}

fn num(r: &BTreeMap<String, String>, k: &str) -> u64 {
    r[k].parse()
        .unwrap_or_else(|e| panic!("{k}={:?}: {e}", r[k]))
}

struct Run {
    dir: proctest::Scratch,
    sent: Table,
    received: Table,
}

fn run(name: &str, extra: &[&str]) -> Run {
    let dir = proctest::scratch("qs-dtp", name);
    let bind = format!("127.0.0.1:{}", free_port());
    let cert = dir.join("cert.der");
    let (sl, rl) = (dir.join("snd"), dir.join("rcv"));
    let common = [
        "--duration-s",
        "1.5",
        "--drain-s",
        "0.5",
        "--interval-ms",
        "50",
        "--block-bytes",
        "20000,10000,5000",
    ]; // fmt: skip
    let mut sa = vec![
        "--role",
        "sender",
        "--bind",
        &bind,
        "--cert-out",
        cert.to_str().unwrap(),
        "--log-dir",
        sl.to_str().unwrap(),
    ]; // fmt: skip
    sa.extend(common);
    sa.extend(extra);
    let sender = spawn(BIN, &sa);
    let mut ra = vec![
        "--role",
        "receiver",
        "--connect",
        &bind,
        "--cert",
        cert.to_str().unwrap(),
        "--log-dir",
        rl.to_str().unwrap(),
    ]; // fmt: skip
    ra.extend(common);
    let receiver = spawn(BIN, &ra);
    let (sc, se) = wait(sender, Duration::from_secs(20));
    let (rc, re) = wait(receiver, Duration::from_secs(20));
    assert_eq!(sc, 0, "sender: {se}");
    assert_eq!(rc, 0, "receiver: {re}");
    for f in ["path_stats.csv", "summary.json"] {
        assert!(sl.join(f).is_file(), "{f}");
    }
    assert!(table(&sl.join("path_stats.csv")).len() > 10);
    Run {
        dir,
        sent: table(&sl.join("blocks_sent.csv")),
        received: table(&rl.join("blocks_received.csv")),
    }
}

fn ids(t: &Table) -> Vec<u64> {
    t.iter().map(|r| num(r, "block_id")).collect()
}

#[test]
fn every_scheme_delivers_every_block_on_time_with_room_to_spare() {
    for (scheme, alpha) in [
        ("quic", "0.5"),
        ("quic-fifo", "0.5"),
        ("fcfs", "0.5"),
        ("ads", "0"),
        ("ads", "0.5"),
        ("ads", "1"),
    ] {
        let r = run(
            &format!("{scheme}{alpha}"),
            &["--scheme", scheme, "--alpha", alpha],
        );
        let mut sent = ids(&r.sent);
        sent.sort();
        assert_eq!(
            sent,
            (0..90).collect::<Vec<_>>(),
            "{scheme}: 30 rounds of 3 blocks"
        );
        assert!(r.sent.iter().all(|b| b["outcome"] == "sent"), "{scheme}");
        let mut got = ids(&r.received);
        got.sort();
        assert_eq!(got, sent, "{scheme}: every block once");
        for b in &r.received {
            assert_eq!(b["status"], "complete");
            assert_eq!(num(b, "received_bytes"), num(b, "payload_bytes"));
            let prio = num(b, "priority");
            assert_eq!(
                num(b, "payload_bytes"),
                [20000, 10000, 5000][prio as usize - 1]
            );
            let late =
                num(b, "end_us") as i64 - (num(b, "created_us") + num(b, "deadline_us")) as i64;
            assert!(
                late < 0,
                "{scheme}: block {} late by {late} us",
                b["block_id"]
            );
        }
    }
}

#[test]
fn a_deadline_too_short_makes_dropping_schemes_reset_streams() {
    // 1 ms for 20 kB rounds through two processes: most blocks miss; drops show up as
    // resets at the receiver, QUIC drops nothing and delivers every block complete.
    let common = ["--deadline-ms", "0.3", "--chunk-bytes", "1000"];
    let q = run("short-quic", &[&["--scheme", "quic"][..], &common].concat());
    assert!(q.sent.iter().all(|b| b["outcome"] == "sent"));
    assert!(q.received.iter().all(|b| b["status"] == "complete"));
    let d = run("short-ads", &[&["--scheme", "ads"][..], &common].concat());
    let dropped = d.sent.iter().filter(|b| b["outcome"] == "dropped").count();
    assert!(dropped > 0, "no block dropped");
    for b in d.sent.iter().filter(|b| b["outcome"] == "dropped") {
        assert!(num(b, "sent_bytes") < num(b, "payload_bytes") + 36);
    }
    // A dropped block never completes at the receiver.
    let dropped_ids: Vec<u64> = d
        .sent
        .iter()
        .filter(|b| b["outcome"] == "dropped")
        .map(|b| num(b, "block_id"))
        .collect();
    for b in &d.received {
        if dropped_ids.contains(&num(b, "block_id")) {
            assert_ne!(
                b["status"], "complete",
                "block {} dropped yet complete",
                b["block_id"]
            );
        }
    }
}

#[test]
fn redundancy_sends_parity_the_receiver_takes() {
    // Loopback loses nothing, so nothing is rebuilt here (tests of `assembly` and `fec` do
    // that); this checks the wiring: groups start, their parity goes out as datagrams, and
    // the receiver accepts every symbol without a broken block. `always`, not `on`: when a
    // group starts under `on` depends on loopback's RTT and the machine's load (a 0.3 ms
    // deadline gave none on a busy CI machine); `fec`'s unit tests cover the < 2 RTT rule.
    let r = run(
        "fec",
        &[
            "--scheme",
            "ads",
            "--deadline-ms",
            "200",
            "--redundancy",
            "always",
        ],
    );
    let groups = table(&r.dir.join("snd").join("fec_groups.csv"));
    assert!(!groups.is_empty(), "no redundancy group");
    for g in &groups {
        let (start, end) = (num(g, "start"), num(g, "end"));
        let (m, s) = (num(g, "m"), num(g, "symbol_bytes"));
        assert!(end > start && m == (end - start).div_ceil(s) && num(g, "n") >= 1);
    }
    let snd = std::fs::read_to_string(r.dir.join("snd").join("summary.json")).unwrap();
    let rcv = std::fs::read_to_string(r.dir.join("rcv").join("summary.json")).unwrap();
    assert!(
        snd.contains(&format!("\"fec_groups\": {}", groups.len())),
        "{snd}"
    );
    assert!(!snd.contains("\"parity_bytes\": 0,"), "{snd}");
    assert!(!rcv.contains("\"parity_received\": 0,"), "{rcv}");
    assert!(rcv.contains("\"streams_broken\": 0"), "{rcv}");
    assert!(r.received.iter().all(|b| b["status"] != "broken"));
}

#[test]
fn bad_arguments_and_a_missing_sender() {
    let dir = proctest::scratch("qs-dtp", "bad");
    let log = dir.join("l");
    let (c, e) = wait(
        spawn(
            BIN,
            &[
                "--role",
                "sender",
                "--bind",
                "127.0.0.1:0",
                "--cert-out",
                "x",
                "--log-dir",
                log.to_str().unwrap(),
                "--alpha",
                "1.5",
            ],
        ), // fmt: skip
        Duration::from_secs(5),
    );
    assert_eq!(c, 2, "{e}");
    assert!(e.contains("--alpha 1.5"), "{e}");
    let (c, e) = wait(
        spawn(
            BIN,
            &[
                "--role",
                "receiver",
                "--connect",
                "127.0.0.1:9",
                "--cert",
                dir.join("none.der").to_str().unwrap(),
                "--log-dir",
                log.to_str().unwrap(),
                "--connect-timeout-s",
                "0.5",
            ],
        ), // fmt: skip
        Duration::from_secs(5),
    );
    assert_eq!(c, 4, "{e}");
}
