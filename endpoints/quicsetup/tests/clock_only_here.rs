//! Nothing in the endpoint crates reads the wall clock or the monotonic clock directly: the
//! sessions run in virtual time on the sim site, where only the session's `quicsetup::Clock`
//! (tokio's clock) is right. This scans the sources for `Instant::now()` and
//! `SystemTime::now()` and allows them in exactly one file.
//!
//! Scanned: `src/`, `examples/` and `benches/` of the crates below. Not scanned: their
//! `tests/` (integration tests time real child processes with std's clock), `proctest` (that
//! test support), and `simnet`/`sim` (the sim itself measures its wall time).

use std::path::{Path, PathBuf};

/// The endpoint crates (folders under endpoints/).
const CRATES: &[&str] = &[
    "quicsetup",
    "priochan",
    "rise-core",
    "rise",
    "dtp",
    "qpr",
    "moq",
    "roq-core",
    "roq",
];

/// The one file allowed to read the clocks.
const ALLOWED: &[&str] = &["quicsetup/src/clock.rs"];

/// A call, or the function passed by name (`get_or_insert_with(Instant::now)`).
const FORBIDDEN: &[&str] = &[
    "Instant::now()",
    "SystemTime::now()",
    "Instant::now)",
    "SystemTime::now)",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The lines reading a clock outside [`ALLOWED`], and how many files were scanned.
fn offenders(endpoints: &Path, allowed: &[&str]) -> (Vec<String>, usize) {
    let mut files = Vec::new();
    for c in CRATES {
        for sub in ["src", "examples", "benches"] {
            rust_files(&endpoints.join(c).join(sub), &mut files);
        }
    }
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(endpoints).unwrap().to_string_lossy();
        if allowed.contains(&rel.as_ref()) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if FORBIDDEN.iter().any(|p| line.contains(p)) {
                bad.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    (bad, files.len())
}

fn endpoints() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn only_the_clock_module_reads_the_clocks() {
    let (bad, scanned) = offenders(&endpoints(), ALLOWED);
    // the scan found the crates (a wrong path would pass vacuously)
    assert!(scanned > 50, "only {scanned} files scanned");
    assert!(
        bad.is_empty(),
        "read the time from quicsetup::Clock instead:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_scan_sees_the_clock_module_when_it_is_not_allowed() {
    let (bad, _) = offenders(&endpoints(), &[]);
    assert!(
        bad.iter().all(|l| l.starts_with("quicsetup/src/clock.rs:")),
        "{bad:?}"
    );
    assert!(bad.len() >= 3, "{bad:?}");
}
