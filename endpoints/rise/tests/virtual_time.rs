//! `rise::run_argv` as the sim site runs it: host and guest in virtual time over the sim
//! site's network (simnet: a lossless link, 10 ms one way); two runs with one seed write
//! identical logs.

use std::path::Path;

use proctest::{assert_same_files, scratch, virtual_pair_in, VirtualRun};

fn run(dir: &Path, seed: u64) -> VirtualRun {
    let common = ["--duration-s", "3", "--video-bitrate-mbps", "4"];
    virtual_pair_in(dir, rise::run_argv, &common, &common, seed)
}

#[test]
fn a_session_runs_in_virtual_time_and_repeats_byte_for_byte() {
    let (a, b) = (scratch("rise-virtual", "a"), scratch("rise-virtual", "b"));
    let ra = run(&a, 7);
    assert_eq!(ra.codes, (0, 0), "{ra:?}");
    // 3 s of streaming plus the handshake and the close, all on tokio's paused clock.
    assert!((3.0..5.0).contains(&ra.virtual_s), "{ra:?}");
    let shown = std::fs::read_to_string(a.join("connect/frames_displayed.csv")).unwrap();
    assert!(shown.lines().count() > 60, "{shown}");
    let row = shown.lines().nth(1).unwrap();
    let first_us: u64 = row.split(',').nth(2).unwrap().parse().unwrap();
    // the logs' times are the virtual clock's: Unix time from the run's epoch
    let epoch_us = proctest::VIRTUAL_EPOCH_NS / 1000;
    assert!(
        (epoch_us..epoch_us + 5_000_000).contains(&first_us),
        "{first_us}"
    );
    // the role is the protocol's own name whichever alias chose it
    let summary = std::fs::read_to_string(a.join("listen/summary.json")).unwrap();
    assert!(summary.contains("\"role\": \"host\""), "{summary}");

    let rb = run(&b, 7);
    assert_eq!(rb.codes, (0, 0), "{rb:?}");
    assert_same_files(&a, &b);
}

#[test]
fn the_session_future_can_be_spawned() {
    // Send, so the sim may tokio::spawn each process's run_argv (a runtime is not needed
    // to make the future, only to run it)
    proctest::assert_send(&rise::run_argv(vec![], quicsetup::Env::real()));
}

/// The time of every event of a qlog trace (JSON-SEQ: one record per line), in ms.
fn qlog_times_ms(path: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.starts_with('\u{1e}'),
        "{}: not JSON-SEQ",
        path.display()
    );
    text.lines()
        .skip(1) // the header
        .map(|l| {
            let t = l.split("\"time\":").nth(1).expect("an event has a time");
            let end = t.find([',', '}']).unwrap();
            t[..end].parse().unwrap()
        })
        .collect()
}

#[test]
fn qlog_traces_are_in_virtual_time_and_repeat_byte_for_byte() {
    let (a, b) = (scratch("rise-qlog", "a"), scratch("rise-qlog", "b"));
    let run = |dir: &Path| {
        let q = dir.join("qlog");
        let q = q.to_str().unwrap();
        let common = [
            "--duration-s",
            "3",
            "--video-bitrate-mbps",
            "4",
            "--qlog-dir",
            q,
        ];
        virtual_pair_in(dir, rise::run_argv, &common, &common, 7)
    };
    let ra = run(&a);
    assert_eq!(ra.codes, (0, 0), "{ra:?}");
    for who in ["rise-host-1.sqlog", "rise-guest-1.sqlog"] {
        let path = a.join("qlog").join(who);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("transport:packet_sent") && text.contains("transport:packet_received")
        );
        let times = qlog_times_ms(&path);
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "{who}: times go back"
        );
        // the session's virtual time (3 s of streaming, the handshake, the close), however
        // little wall time the test took: the clock's, not the real clock's
        let last = *times.last().unwrap();
        assert!(
            (3000.0..ra.virtual_s * 1000.0 + 1.0).contains(&last),
            "{who}: {last}"
        );
    }
    let rb = run(&b);
    assert_eq!(rb.codes, (0, 0), "{rb:?}");
    // the connection IDs in the traces come from the seed too
    assert_same_files(&a.join("qlog"), &b.join("qlog"));
}
