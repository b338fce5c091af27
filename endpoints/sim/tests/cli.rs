//! priolab-sim as the harness runs it: a spec in, a report and the processes' files out, in
//! virtual time, with sim-dgram (quinn over simnet) as the program.

use priolab_sim::dgram_run;
use proctest::Scratch;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_priolab-sim");

/// A scratch folder per test, removed when a passing test ends.
fn scratch(name: &str) -> Scratch {
    proctest::scratch("priolab-sim", name)
}

fn link_json(seed: u64, rate: Value, p: f64) -> Value {
    dgram_run::link(seed, dgram_run::direction(rate, p))
}

fn constant(rate_bps: u64) -> Value {
    json!({"kind": "constant", "rate_bps": rate_bps})
}

/// A run of sim-dgram, `rate_mbps` for `duration_s`, guest to host, in `dir`.
fn spec(dir: &Path, link: Value, rate_mbps: f64, duration_s: f64, host_rcvbuf: Value) -> PathBuf {
    let run = dgram_run::DgramRun {
        link,
        rate_mbps,
        duration_s,
        host_rcvbuf,
    };
    run.write(dir).unwrap()
}

fn run(spec: &Path) -> (i32, String) {
    let out = Command::new(BIN)
        .args(["run", spec.to_str().unwrap()])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A one-second sim-dgram run's spec in a fresh folder `name`, as JSON to edit.
fn editable(name: &str) -> (Scratch, PathBuf, Value) {
    let d = scratch(name);
    let link = link_json(1, constant(10_000_000), 0.0);
    let p = spec(&d, link, 1.0, 1.0, Value::Null);
    let v = serde_json::from_str(&read(&d, "SPEC.json")).unwrap();
    (d, p, v)
}

/// Write `v` to `p` and run it.
fn run_edited(p: &Path, v: &Value) -> (i32, String) {
    std::fs::write(p, v.to_string()).unwrap();
    run(p)
}

fn report(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("sim-report.json")).unwrap()).unwrap()
}

fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
}

/// The number in a `sent N datagrams` / `received N datagrams` stdout line.
fn count(dir: &Path, f: &str) -> u64 {
    read(dir, f)
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

const OUTPUTS: &[&str] = &[
    "logs/srv.csv",
    "logs/cli.csv",
    "linkem-stats.jsonl",
    "srv.out",
    "cli.out",
    "srv.err",
    "cli.err",
];

#[test]
fn quinn_carries_every_datagram_over_a_lossless_link() {
    let d = scratch("lossless");
    let (code, err) = run(&spec(
        &d,
        link_json(1, constant(70_000_000), 0.0),
        10.0,
        3.0,
        Value::Null,
    ));
    assert_eq!(code, 0, "{err}");
    let r = report(&d);
    for p in r["processes"].as_array().unwrap() {
        assert_eq!(p["exit_code"], 0, "{p}");
        assert_eq!(p["cancelled"], false, "{p}");
    }
    let sent = count(&d, "cli.out");
    // 3 s at 10 Mbit/s of 1100-byte datagrams: 3409.
    assert!((3300..=3410).contains(&sent), "sent {sent}");
    assert_eq!(count(&d, "srv.out"), sent);
    assert_eq!(r["link"]["a_to_b"]["drops_loss"], 0);
    assert!(r["link"]["a_to_b"]["departures"].as_u64().unwrap() > sent);
    assert!(r["virtual_s"].as_f64().unwrap() > 4.0);
    // Each datagram's one-way delay is at least the link's 10.5 ms plus its serialisation.
    let rows: Vec<Vec<u64>> = read(&d, "logs/srv.csv")
        .lines()
        .skip(1)
        .map(|l| l.split(',').take(4).map(|x| x.parse().unwrap()).collect())
        .collect();
    let (n, delay): (u64, u64) = rows.iter().fold((0, 0), |a, r| (a.0 + r[1], a.1 + r[3]));
    assert_eq!(n, sent);
    let mean_us = delay / n;
    assert!(
        (10_626..11_700).contains(&mean_us),
        "mean one-way delay {mean_us} us"
    );
}

#[test]
fn the_same_spec_twice_gives_byte_identical_files_and_another_link_seed_does_not() {
    let runs: Vec<Scratch> = [1, 1, 2]
        .iter()
        .enumerate()
        .map(|(i, &seed)| {
            let d = scratch(&format!("det{i}"));
            let (code, err) = run(&spec(
                &d,
                link_json(seed, constant(20_000_000), 0.02),
                8.0,
                3.0,
                Value::Null,
            ));
            assert_eq!(code, 0, "{err}");
            d
        })
        .collect();
    for f in OUTPUTS {
        assert_eq!(
            read(&runs[0], f),
            read(&runs[1], f),
            "{f} differs between two runs"
        );
    }
    assert_ne!(
        read(&runs[0], "logs/srv.csv"),
        read(&runs[2], "logs/srv.csv")
    );
    assert_ne!(
        read(&runs[0], "linkem-stats.jsonl"),
        read(&runs[2], "linkem-stats.jsonl")
    );
    let (a, b) = (report(&runs[0]), report(&runs[1]));
    assert_eq!(a["virtual_s"], b["virtual_s"]);
    assert_eq!(a["link"], b["link"]);
    assert!(a["link"]["a_to_b"]["drops_loss"].as_u64().unwrap() > 0);
}

#[test]
fn a_small_receive_buffer_drops_a_burst_that_an_unbounded_one_takes() {
    // No rate limit: a burst quinn sends at one instant arrives at one instant, and the
    // datagrams beyond the buffer are dropped before quinn can read them.
    let drops = |rcvbuf: Value| {
        let d = scratch(&format!("rcvbuf-{rcvbuf}"));
        let (code, err) = run(&spec(
            &d,
            link_json(1, json!({"kind": "unlimited"}), 0.0),
            20.0,
            2.0,
            rcvbuf,
        ));
        assert_eq!(code, 0, "{err}");
        report(&d)["sockets"]["10.0.1.1:4433"]["recv_buffer_drops"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(drops(Value::Null), 0);
    assert!(drops(json!(2 * 2304)) > 0);
}

#[test]
fn a_bad_spec_exits_2_naming_file_and_key_and_writes_nothing() {
    let (d, p, mut v) = editable("bad");
    v["processes"][1]["argv"][0] = json!("no-such-program");
    let (code, err) = run_edited(&p, &v);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("{}: key `processes[1].argv[0]`", p.display())),
        "{err}"
    );
    assert!(err.contains("sim-dgram"), "names what is allowed: {err}");
    // A bad link config is named through the spec's key and the config's own key.
    std::fs::write(d.join("linkem.json"), r#"{"seed": 1}"#).unwrap();
    v["processes"][1]["argv"][0] = json!("sim-dgram");
    let (code, err) = run_edited(&p, &v);
    assert_eq!(code, 2);
    assert!(
        err.contains("key `link.config`") && err.contains("linkem.json"),
        "{err}"
    );
    for f in ["sim-report.json", "linkem-stats.jsonl", "srv.out"] {
        assert!(!d.join(f).exists(), "{f} was written");
    }
    let (code, _) = run(Path::new("/nonexistent/SPEC.json"));
    assert_eq!(code, 2);
}

#[test]
fn wait_for_file_holds_a_process_until_the_file_exists() {
    let (d, p, mut v) = editable("waitfor");
    // The client is due first, but waits for the server's certificate.
    v["processes"][1]["start_at_s"] = json!(0.0);
    v["processes"][1]["wait_for_file"] = json!(d.join("cert.der"));
    let (code, err) = run_edited(&p, &v);
    assert_eq!(code, 0, "{err}");
    let r = report(&d);
    let started = r["processes"][1]["started_at_s"].as_f64().unwrap();
    assert!(
        (0.5..0.502).contains(&started),
        "client started at {started}"
    );
    assert_eq!(r["processes"][1]["exit_code"], 0);
    // A file that never comes: the process never starts, and the report says so.
    v["processes"][1]["wait_for_file"] = json!(d.join("never"));
    let (code, err) = run_edited(&p, &v);
    assert_eq!(code, 0, "{err}");
    let r = report(&d);
    assert_eq!(r["processes"][1]["started_at_s"], Value::Null);
    assert_eq!(r["processes"][1]["exit_code"], Value::Null);
    let errors = r["errors"].to_string();
    assert!(errors.contains("cli never started"), "{errors}");
}
