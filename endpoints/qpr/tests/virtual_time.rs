//! `qpr::run_argv` as the sim site runs it: server and player in virtual time over the sim
//! site's network (simnet: a lossless link, 10 ms one way), the datagrams on a second
//! connection; two runs with one seed write identical logs. HTTP/2 over TCP has no injected network: refused.

use std::path::Path;

use proctest::{assert_same_files, scratch, virtual_pair_in, VirtualRun};

fn run(dir: &Path, transport: &str) -> VirtualRun {
    let common = ["--scale", "0.02", "--seed", "5", "--transport", transport];
    let path = ["--unreliable-path", "loss-blind-connection"];
    let server = [&common[..], &path, &["--initial-window-bytes", "12000"]].concat();
    let q = if transport == "h2" { "0" } else { "50" };
    let player = [&common[..], &path, &["--duration-s", "3", "--q-pct", q]].concat();
    virtual_pair_in(dir, qpr::run_argv, &server, &player, 9)
}

#[test]
fn a_session_runs_in_virtual_time_and_repeats_byte_for_byte() {
    let (a, b) = (scratch("qpr-virtual", "a"), scratch("qpr-virtual", "b"));
    let ra = run(&a, "quic");
    assert_eq!(ra.codes, (0, 0), "{ra:?}");
    assert!((3.0..6.0).contains(&ra.virtual_s), "{ra:?}");
    let segs = proctest::csv_table(&a.join("connect/segments.csv"));
    assert!(segs.len() >= 3, "{} segments", segs.len());
    let server = std::fs::read_to_string(a.join("listen/summary.json")).unwrap();
    assert!(server.contains("unreliable_conn_sent_packets"), "{server}");

    let rb = run(&b, "quic");
    assert_eq!(rb.codes, (0, 0), "{rb:?}");
    assert_same_files(&a, &b);
}

#[test]
fn http2_over_tcp_is_refused_off_the_kernel() {
    let r = run(&scratch("qpr-virtual", "h2"), "h2");
    assert_eq!(r.codes, (2, 2), "{r:?}");
    assert!(r.stderr.0.contains("needs the kernel's TCP"), "{r:?}");
}

#[test]
fn the_session_future_can_be_spawned() {
    // Send, so the sim may tokio::spawn each process's run_argv (a runtime is not needed
    // to make the future, only to run it)
    proctest::assert_send(&qpr::run_argv(vec![], quicsetup::Env::real()));
}
