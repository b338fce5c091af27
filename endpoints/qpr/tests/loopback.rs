//! Runs the real `qpr` binary as server and player over loopback at Q0 and Q100 and checks
//! the contract: exit codes, the logs, the split per Q level, the ABR's first segment, every
//! reliable object complete, the end-of-data counts of the unreliable ones; and the exit
//! codes for bad input and a missing server.

use std::collections::BTreeMap;
use std::time::Duration;

use proctest::{csv_table, free_port, spawn, wait, Table};

const BIN: &str = env!("CARGO_BIN_EXE_qpr");

fn scratch(name: &str) -> proctest::Scratch {
    proctest::scratch("qs-qpr", name)
}

/// A 3 s session at `q` over `transport` and `--unreliable-path path`, with `extra` flags
/// on both sides; content at 2 % of Table 2 (≤ 0.35 MB per segment), so loopback's socket
/// buffers hold a whole segment.
fn session(q: &str, transport: &str, path: &str, extra: &[&str]) -> (Table, Table, String, String) {
    let dir = scratch(&format!("{transport}{q}{path}{}", extra.join("")));
    let bind = format!("127.0.0.1:{}", free_port());
    let cert = dir.join("cert.der");
    let (sl, pl) = (dir.join("server"), dir.join("player"));
    let common = [
        "--scale",
        "0.02",
        "--seed",
        "5",
        "--transport",
        transport,
        "--unreliable-path",
        path,
    ]; // fmt: skip
    let common: Vec<&str> = common.iter().chain(extra).copied().collect();
    let mut sa = vec![
        "--role",
        "server",
        "--bind",
        &bind,
        "--cert-out",
        cert.to_str().unwrap(),
        "--log-dir",
        sl.to_str().unwrap(),
        "--initial-window-bytes",
        "12000",
    ]; // fmt: skip
    sa.extend(&common);
    let server = spawn(BIN, &sa);
    let mut pa = vec![
        "--role",
        "player",
        "--connect",
        &bind,
        "--cert",
        cert.to_str().unwrap(),
        "--log-dir",
        pl.to_str().unwrap(),
        "--duration-s",
        "3",
        "--q-pct",
        q,
    ]; // fmt: skip
    pa.extend(&common);
    let player = spawn(BIN, &pa);
    let (pc, perr) = wait(player, Duration::from_secs(30));
    let (sc, serr) = wait(server, Duration::from_secs(30));
    assert_eq!(pc, 0, "player stderr: {perr}");
    assert_eq!(sc, 0, "server stderr: {serr}");
    let out = (
        csv_table(&pl.join("segments.csv")),
        csv_table(&pl.join("objects.csv")),
        std::fs::read_to_string(pl.join("summary.json")).unwrap(),
        std::fs::read_to_string(sl.join("summary.json")).unwrap(),
    );
    let _ = std::fs::remove_dir_all(&dir);
    out
}

fn num(r: &BTreeMap<String, String>, k: &str) -> f64 {
    r[k].parse().unwrap_or_else(|_| panic!("{k} = {:?}", r[k]))
}

#[test]
fn q0_and_q100_sessions_follow_the_split_and_log_every_object() {
    for (q, reliable) in [("0", "1"), ("100", "0")] {
        let (segs, objs, player, server) = session(q, "quic", "shared", &[]);
        assert!(player.contains("\"exit_reason\": \"duration\""), "{player}");
        assert!(
            server.contains("\"exit_reason\": \"peer_closed\""),
            "{server}"
        );
        // 3 s with a one-segment buffer on loopback: segments 0..=3 at least arrive
        assert!(segs.len() >= 3, "q{q}: {} segments", segs.len());
        assert_eq!(objs.len(), 4 * segs.len());
        // the first segment at the lowest quality; then the throughput of loopback buys more
        assert_eq!(segs[0]["qualities"], "0 0 0 0");
        assert!(segs[1..].iter().any(|s| s["qualities"] != "0 0 0 0"));
        for s in &segs {
            assert_eq!(s["reliable"], [reliable; 4].join(" "), "q{q}");
            assert!(num(s, "throughput_mbps") > 0.0);
            let mut rank: Vec<&str> = s["ranking"].split(' ').collect();
            rank.sort_unstable();
            assert_eq!(rank, ["0", "1", "2", "3"]);
        }
        for o in &objs {
            assert_eq!(o["reliable"], reliable);
            let (size, got) = (num(o, "size_bytes"), num(o, "received_bytes"));
            assert!(got <= size);
            if reliable == "1" {
                assert_eq!(got, size);
                assert_eq!(o["datagrams_expected"], "-1");
            } else {
                // the end-of-data announced ceil(size / payload per datagram) datagrams
                let exp = num(o, "datagrams_expected");
                // (quinn starts at 1200-byte packets; path MTU discovery may grow them to ~1450)
                assert!(
                    exp >= (size / 1500.0).ceil() && exp <= (size / 1100.0).ceil(),
                    "{o:?}"
                );
                assert!(num(o, "datagrams_received") <= exp);
                assert_eq!(o["complete"] == "1", got == size);
            }
        }
        let want = if reliable == "1" {
            "\"datagrams_sent\": 0"
        } else {
            "\"reliable_requests\": 0"
        };
        assert!(server.contains(want), "{server}");
        assert!(
            server.contains("\"initial_window_bytes\": 12000"),
            "{server}"
        );
    }
}

/// A number field of a summary.json text.
fn field(summary: &str, key: &str) -> Option<f64> {
    let at = summary.find(&format!("\"{key}\": "))? + key.len() + 4;
    let rest = &summary[at..];
    let end = rest.find([',', '\n', '}']).unwrap_or(rest.len());
    rest[..end].trim().parse().ok()
}

#[test]
fn a_second_connection_carries_the_datagrams_under_its_own_window() {
    for path in ["fixed-window-connection", "loss-blind-connection"] {
        let (segs, objs, player, server) = session("50", "quic", path, &[]);
        let name = path.replace('-', "_");
        assert!(
            server.contains(&format!("\"unreliable_path\": \"{name}\"")),
            "{server}"
        );
        assert!(player.contains("\"exit_reason\": \"duration\""), "{player}");
        assert!(
            server.contains("\"exit_reason\": \"peer_closed\""),
            "{server}"
        );
        assert!(segs.len() >= 3, "{path}: {} segments", segs.len());
        for o in &objs {
            if o["reliable"] == "1" {
                assert_eq!(o["received_bytes"], o["size_bytes"]);
            } else {
                assert!(num(o, "datagrams_expected") >= 1.0);
            }
        }
        // The unreliable bytes went on the second connection: it sent at least their
        // payload, the first at least the reliable objects'.
        let unrel = field(&server, "unreliable_bytes").unwrap();
        let rel = field(&server, "reliable_bytes").unwrap();
        assert!(unrel > 0.0 && rel > 0.0, "{server}");
        let sent2 = field(&server, "unreliable_conn_udp_bytes_sent").expect("second connection");
        let sent1 = field(&server, "udp_bytes_sent").unwrap();
        assert!(sent2 >= unrel && sent2 < unrel * 1.2 + 1e5, "{server}");
        assert!(sent1 >= rel && sent1 < rel * 1.2 + 1e5, "{server}");
        let cwnd2 = field(&server, "unreliable_conn_cwnd_bytes_at_end").unwrap();
        if path == "fixed-window-connection" {
            assert_eq!(cwnd2, 12000.0, "{server}");
        }
    }
}

#[test]
fn fec_sends_repair_datagrams_per_block_and_the_player_counts_objects_whole() {
    // blocks of 8 source datagrams, 25 %: 2 repairs per full block
    let fec = ["--fec-repair-pct", "25", "--fec-block", "8"];
    let (segs, objs, player, server) = session("100", "quic", "shared", &fec);
    assert!(player.contains("\"exit_reason\": \"duration\""), "{player}");
    assert!(segs.len() >= 3, "{} segments", segs.len());
    assert_eq!(field(&server, "fec_repair_pct"), Some(25.0), "{server}");
    let unrel = field(&server, "unreliable_bytes").unwrap();
    let repair = field(&server, "repair_bytes").unwrap();
    // 25 % of the sources, more where a short last block rounds its repairs up
    assert!(repair >= 0.25 * unrel && repair <= 0.45 * unrel, "{server}");
    let sent = field(&server, "datagrams_sent").unwrap();
    let repairs = field(&server, "repair_datagrams").unwrap();
    assert!(repairs >= 0.2 * (sent - repairs), "{server}");
    for o in &objs {
        let (size, exp) = (num(o, "size_bytes"), num(o, "datagrams_expected"));
        // sources (≥ size / 1500 bytes) plus a quarter more, rounded up per block
        assert!(exp >= 1.25 * (size / 1500.0).ceil(), "{o:?}");
        assert!(num(o, "datagrams_received") <= exp);
        // whole means every source byte is in hand, received or rebuilt
        assert_eq!(
            o["complete"] == "1",
            num(o, "received_bytes") == size,
            "{o:?}"
        );
    }
    assert!(objs.iter().any(|o| o["complete"] == "1"));
    assert!(field(&player, "objects_recovered").is_some(), "{player}");
}

#[test]
fn the_http2_baseline_fetches_every_object_reliably() {
    let (segs, objs, player, server) = session("0", "h2", "shared", &[]);
    assert!(player.contains("\"transport\": \"h2\""), "{player}");
    assert!(player.contains("\"exit_reason\": \"duration\""), "{player}");
    assert!(
        server.contains("\"exit_reason\": \"peer_closed\""),
        "{server}"
    );
    assert!(segs.len() >= 3, "{} segments", segs.len());
    assert_eq!(objs.len(), 4 * segs.len());
    assert!(segs[1..].iter().any(|s| s["qualities"] != "0 0 0 0"));
    for o in &objs {
        assert_eq!(o["reliable"], "1");
        assert_eq!(o["received_bytes"], o["size_bytes"]);
    }
}

#[test]
fn bad_arguments_and_a_missing_server_give_their_exit_codes() {
    let dir = scratch("bad");
    let log = dir.join("log");
    let cert = dir.join("never.der");
    let bind = format!("127.0.0.1:{}", free_port());
    let base = [
        "--role",
        "player",
        "--connect",
        &bind,
        "--cert",
        cert.to_str().unwrap(),
        "--log-dir",
        log.to_str().unwrap(),
    ]; // fmt: skip
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        wait(spawn(BIN, &a), Duration::from_secs(20))
    };
    let (c, err) = with(&["--q-pct", "60"]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("--q-pct 60"), "{err}");
    let (c, err) = with(&["--transport", "h2", "--q-pct", "50"]);
    assert_eq!(c, 2, "{err}");
    let (c, err) = with(&["--scale", "0"]);
    assert_eq!(c, 2, "{err}");
    let (c, err) = with(&["--unreliable-path", "sideways"]);
    assert_eq!(c, 2, "{err}");
    let (c, err) = with(&["--fec-block", "200", "--fec-repair-pct", "50"]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("at most 256"), "{err}");
    let (c, err) = with(&["--connect-timeout-s", "0.3"]);
    assert_eq!(c, 4, "{err}");
    let s = std::fs::read_to_string(log.join("summary.json")).unwrap();
    assert!(s.contains("no_connection"), "{s}");
    let _ = std::fs::remove_dir_all(&dir);
}
