//! Runs the real `moq` binary as publisher and subscriber over loopback, once per scheme, and
//! checks the contract: exit codes, the logs, every frame delivered once on the streams the
//! scheme says; and the exit codes for bad input and a missing publisher.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Child;
use std::time::Duration;

use proctest::{wait, Pair, Table};

const BIN: &str = env!("CARGO_BIN_EXE_moq");

fn spawn(args: &[&str]) -> Child {
    proctest::spawn(BIN, args)
}

fn scratch(name: &str) -> proctest::Scratch {
    proctest::scratch("qs-moq", name)
}

fn trace() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/synthetic/gop-x264-720p25-g50-bf2-2.7mbps-20s.csv");
    p.to_str().unwrap().to_string()
}

fn table(p: &Path) -> Table {
    proctest::csv_table(p)
}

fn pair(name: &str) -> Pair {
    Pair::new(BIN, "qs-moq", name)
}

fn stream_once(scheme: &str) -> (Table, Table) {
    let p = pair(scheme);
    let (pl, sl) = (p.log("publisher"), p.log("subscriber"));
    let t = trace();
    let publisher = p.server(
        "publisher",
        &[
            "--frame-trace",
            &t,
            "--scheme",
            scheme,
            "--duration-s",
            "4.5",
            "--drain-s",
            "0.5",
        ],
    );
    let keylog = p.dir.join("keys.log");
    let subscriber = p.client("subscriber", &["--keylog", keylog.to_str().unwrap()]);
    let (sc, serr) = wait(subscriber, Duration::from_secs(30));
    let (pc, perr) = wait(publisher, Duration::from_secs(30));
    assert_eq!(pc, 0, "publisher stderr: {perr}");
    assert_eq!(sc, 0, "subscriber stderr: {serr}");
    let summary = std::fs::read_to_string(pl.join("summary.json")).unwrap();
    assert!(
        summary.contains(&format!("\"scheme\": \"{scheme}\"")),
        "{summary}"
    );
    let summary = std::fs::read_to_string(sl.join("summary.json")).unwrap();
    assert!(
        summary.contains("\"exit_reason\": \"peer_closed\""),
        "{summary}"
    );
    assert!(std::fs::read_to_string(&keylog)
        .unwrap()
        .contains("CLIENT_TRAFFIC_SECRET_0"));
    assert!(table(&pl.join("path_stats.csv")).len() > 30);
    (
        table(&pl.join("frames_sent.csv")),
        table(&sl.join("frames_received.csv")),
    )
}

/// 4.5 s of 25 fps: frames captured before 4.5 s (display 0..=112, the last a P); the B
/// frames 113 and 114 would need the P captured at 4.6 s, so they are not sent. All arrive once.
fn check_complete(sent: &[BTreeMap<String, String>], got: &[BTreeMap<String, String>]) {
    assert_eq!(sent.len(), 113, "frames released");
    let mut ids: Vec<u64> = got.iter().map(|r| r["frame_id"].parse().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..sent.len() as u64).collect::<Vec<_>>());
    for r in got {
        let s = &sent[r["frame_id"].parse::<usize>().unwrap()];
        assert_eq!(r["pict_type"], s["pict_type"]);
        assert_eq!(r["size_bytes"], s["size_bytes"]);
        assert_eq!(r["capture_us"], s["capture_us"]);
        let lat: f64 = r["latency_ms"].parse().unwrap();
        // at least the reorder wait of a B frame, at most a few hundred ms on loopback
        assert!((0.0..500.0).contains(&lat), "latency {lat}");
    }
    // decode order: release times never go back; B frames wait for their future reference
    let rel: Vec<u64> = sent
        .iter()
        .map(|r| r["release_us"].parse().unwrap())
        .collect();
    assert!(rel.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(sent[2]["pict_type"], "B");
    assert_eq!(sent[2]["release_us"], sent[1]["release_us"]);
}

fn streams_by_type(sent: &[BTreeMap<String, String>]) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in sent {
        let v = m.entry(r["pict_type"].clone()).or_default();
        if !v.contains(&r["stream"]) {
            v.push(r["stream"].clone());
        }
    }
    m
}

#[test]
fn fefs_sends_everything_on_one_stream() {
    let (sent, got) = stream_once("fefs");
    check_complete(&sent, &got);
    assert!(sent.iter().all(|r| r["stream"] == "all"));
    assert!(got.iter().all(|r| r["stream"] == "0"));
    // one stream: arrival in send (decode) order
    let ids: Vec<u64> = got.iter().map(|r| r["frame_id"].parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn ft_sends_one_stream_per_frame_type() {
    let (sent, got) = stream_once("ft");
    check_complete(&sent, &got);
    let m = streams_by_type(&sent);
    assert_eq!(m["I"], vec!["I"]);
    assert_eq!(m["P"], vec!["P"]);
    assert_eq!(m["B"], vec!["B"]);
    let streams: std::collections::BTreeSet<&String> = got.iter().map(|r| &r["stream"]).collect();
    assert_eq!(streams.len(), 3);
}

#[test]
fn group_sends_one_stream_per_gop() {
    let (sent, got) = stream_once("group");
    check_complete(&sent, &got);
    for r in &sent {
        assert_eq!(r["stream"], format!("g{}", r["group"]));
    }
    // 4.5 s of 2 s GoPs: groups 0, 1, 2
    let streams: std::collections::BTreeSet<&String> = got.iter().map(|r| &r["stream"]).collect();
    assert_eq!(streams.len(), 3);
}

#[test]
fn bad_trace_exits_2_naming_file_and_line() {
    let dir = scratch("bad");
    let t = dir.join("gop.csv");
    std::fs::write(
        &t,
        "frame_type,size_bytes,pict_type,pts_ms,dts_ms,refs\nkey,100,I,0,0,\ndelta,5,Q,40,40,0\n",
    )
    .unwrap();
    let p = spawn(&[
        "--role",
        "publisher",
        "--bind",
        "127.0.0.1:9",
        "--cert-out",
        "x.der",
        "--log-dir",
        dir.join("l").to_str().unwrap(),
        "--frame-trace",
        t.to_str().unwrap(),
    ]); // fmt: skip
    let (code, err) = wait(p, Duration::from_secs(10));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("gop.csv") && err.contains("line 3"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn subscriber_without_publisher_exits_4() {
    let p = pair("nopub");
    // no publisher: nothing listens on the port and the certificate is never written
    let s = p.client("subscriber", &["--connect-timeout-s", "0.5"]);
    let (code, err) = wait(s, Duration::from_secs(10));
    assert_eq!(code, 4, "{err}");
}

#[test]
fn subscriber_ends_by_itself_after_duration_and_drain() {
    let p = pair("selfend");
    let t = trace();
    let publisher = p.server("publisher", &["--frame-trace", &t, "--duration-s", "20"]);
    // the subscriber expects 1 s + 0.5 s of drain: it closes 2 s after that
    let subscriber = p.client("subscriber", &["--duration-s", "1", "--drain-s", "0.5"]);
    let (sc, serr) = wait(subscriber, Duration::from_secs(15));
    assert_eq!(sc, 0, "subscriber stderr: {serr}");
    let summary = std::fs::read_to_string(p.log("subscriber").join("summary.json")).unwrap();
    assert!(
        summary.contains("\"exit_reason\": \"duration\""),
        "{summary}"
    );
    // the publisher, its peer gone, ends with 3 (peer lost)
    let (pc, perr) = wait(publisher, Duration::from_secs(30));
    assert_eq!(pc, 3, "publisher stderr: {perr}");
}
