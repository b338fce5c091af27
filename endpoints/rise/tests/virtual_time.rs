//! `rise::run_argv` as the sim site runs it: host and guest in one paused tokio runtime
//! (virtual time) over injected in-memory sockets; two runs with one seed write identical logs.

use std::path::Path;
use std::time::Duration;

use proctest::{files_under, scratch, virtual_pair, VirtualRun};

fn run(dir: &Path, seed: u64) -> VirtualRun {
    let d = |p: &str| dir.join(p).to_str().unwrap().to_string();
    let common = ["--duration-s", "3", "--video-bitrate-mbps", "4"].map(String::from);
    let mut host: Vec<String> = ["rise", "--role", "listen", "--bind", "10.0.0.2:4433"]
        .map(String::from)
        .to_vec();
    host.extend([
        "--cert-out".into(),
        d("cert.der"),
        "--log-dir".into(),
        d("host"),
    ]);
    host.extend(common.clone());
    let mut guest: Vec<String> = ["rise", "--role", "connect", "--connect", "10.0.0.2:4433"]
        .map(String::from)
        .to_vec();
    guest.extend([
        "--cert".into(),
        d("cert.der"),
        "--log-dir".into(),
        d("guest"),
    ]);
    guest.extend(common);
    virtual_pair(rise::run_argv, host, guest, Duration::from_millis(10), seed)
}

fn logs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_under(dir)
        .into_iter()
        .filter(|(p, _)| p != "cert.der") // a fresh key every run (same size)
        .collect()
}

#[test]
fn a_session_runs_in_virtual_time_and_repeats_byte_for_byte() {
    let (a, b) = (scratch("rise-virtual", "a"), scratch("rise-virtual", "b"));
    let ra = run(&a, 7);
    assert_eq!(ra.codes, (0, 0), "{ra:?}");
    // 3 s of streaming plus the handshake and the close, all on tokio's paused clock.
    assert!((3.0..5.0).contains(&ra.virtual_s), "{ra:?}");
    let shown = std::fs::read_to_string(a.join("guest/frames_displayed.csv")).unwrap();
    assert!(shown.lines().count() > 60, "{shown}");
    let first_us: u64 = shown
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    // the logs' times are the virtual clock's: Unix time from the run's epoch
    let epoch_us = proctest::VIRTUAL_EPOCH_NS / 1000;
    assert!(
        (epoch_us..epoch_us + 5_000_000).contains(&first_us),
        "{first_us}"
    );

    let rb = run(&b, 7);
    assert_eq!(rb.codes, (0, 0), "{rb:?}");
    let (la, lb) = (logs(&a), logs(&b));
    assert_eq!(
        la.iter().map(|f| &f.0).collect::<Vec<_>>(),
        lb.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((name, x), (_, y)) in la.iter().zip(&lb) {
        assert!(x == y, "{name} differs between two runs with one seed");
    }
}
