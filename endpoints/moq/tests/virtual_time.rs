//! `moq::run_argv` as the sim site runs it: publisher and subscriber in virtual time over the
//! sim site's network (simnet: a lossless link, 10 ms one way); two runs with one seed write
//! identical logs.

use std::path::Path;

use proctest::{assert_same_files, scratch, virtual_pair_in, VirtualRun};

fn run(dir: &Path, seed: u64) -> VirtualRun {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/synthetic/gop-x264-720p25-g50-bf2-2.7mbps-20s.csv");
    let common = ["--duration-s", "3", "--drain-s", "0.5"];
    let publisher = [
        &common[..],
        &["--scheme", "ft", "--frame-trace", trace.to_str().unwrap()],
    ]
    .concat();
    virtual_pair_in(dir, moq::run_argv, &publisher, &common, seed)
}

#[test]
fn a_session_runs_in_virtual_time_and_repeats_byte_for_byte() {
    let (a, b) = (scratch("moq-virtual", "a"), scratch("moq-virtual", "b"));
    let ra = run(&a, 5);
    assert_eq!(ra.codes, (0, 0), "{ra:?}");
    assert!((3.0..6.0).contains(&ra.virtual_s), "{ra:?}");
    let sent = std::fs::read_to_string(a.join("listen/frames_sent.csv")).unwrap();
    let got = std::fs::read_to_string(a.join("connect/frames_received.csv")).unwrap();
    // 3 s at 25 fps, every frame delivered on a lossless 10 ms path
    assert_eq!(sent.lines().count(), 76, "{sent}");
    assert_eq!(got.lines().count(), 76, "{got}");

    let rb = run(&b, 5);
    assert_eq!(rb.codes, (0, 0), "{rb:?}");
    assert_same_files(&a, &b);
}

#[test]
fn the_session_future_can_be_spawned() {
    // Send, so the sim may tokio::spawn each process's run_argv (a runtime is not needed
    // to make the future, only to run it)
    proctest::assert_send(&moq::run_argv(vec![], quicsetup::Env::real()));
}
