//! `dtp::run_argv` as the sim site runs it: sender and receiver in virtual time over the sim
//! site's network (simnet: a lossless link, 10 ms one way); two runs with one seed write
//! identical logs.

use std::path::Path;

use proctest::{assert_same_files, scratch, virtual_pair_in, VirtualRun};

fn run(dir: &Path, seed: u64) -> VirtualRun {
    let common = [
        "--duration-s",
        "2",
        "--drain-s",
        "0.5",
        "--interval-ms",
        "100",
    ];
    let sender = [
        &common[..],
        &["--block-bytes", "20000,20000", "--redundancy", "always"],
    ]
    .concat();
    virtual_pair_in(dir, dtp::run_argv, &sender, &common, seed)
}

#[test]
fn a_session_runs_in_virtual_time_and_repeats_byte_for_byte() {
    let (a, b) = (scratch("dtp-virtual", "a"), scratch("dtp-virtual", "b"));
    let ra = run(&a, 3);
    assert_eq!(ra.codes, (0, 0), "{ra:?}");
    assert!((2.5..5.0).contains(&ra.virtual_s), "{ra:?}");
    let got = std::fs::read_to_string(a.join("connect/blocks_received.csv")).unwrap();
    // 20 rounds of 2 blocks, every one complete on a lossless 10 ms path
    let complete = got.lines().filter(|l| l.contains(",complete,")).count();
    assert_eq!(complete, 40, "{got}");
    let groups = std::fs::read_to_string(a.join("listen/fec_groups.csv")).unwrap();
    assert!(groups.lines().count() > 1, "{groups}");

    let rb = run(&b, 3);
    assert_eq!(rb.codes, (0, 0), "{rb:?}");
    assert_same_files(&a, &b);
}

#[test]
fn the_session_future_can_be_spawned() {
    // Send, so the sim may tokio::spawn each process's run_argv (a runtime is not needed
    // to make the future, only to run it)
    proctest::assert_send(&dtp::run_argv(vec![], quicsetup::Env::real()));
}
