//! `priolab-sim run SPEC.json`: one run of the sim site (see README.md). Exit codes: 0 the run
//! ran and sim-report.json is written (the processes' own exit codes are in it); 2 bad
//! arguments or a bad spec (the message names the file and key; nothing is written); 1 an
//! I/O error while running.

use priolab_sim::{alloc_tuning, cost, report, run, spec};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: priolab-sim run SPEC.json";

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let path = match argv.as_slice() {
        [cmd, p] if cmd == "run" => PathBuf::from(p),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let (spec, link) = match load(&path) {
        Ok(x) => x,
        Err(msg) => {
            eprintln!("priolab-sim: {msg}");
            return ExitCode::from(2);
        }
    };
    alloc_tuning::apply();
    let meter = cost::Meter::start();
    let outcome = match run::run(&spec, link) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("priolab-sim: {e}");
            return ExitCode::from(1);
        }
    };
    let (wall_s, cpu_s) = meter.read();
    let written = report::build(&spec, &outcome, wall_s, cpu_s)
        .and_then(|r| report::write_atomically(&spec.report, &r));
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("priolab-sim: writing the report: {e}");
            ExitCode::from(1)
        }
    }
}

/// The spec and its link, checked: every problem is a message naming file and key.
fn load(path: &Path) -> Result<(spec::Spec, linkem::Config), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let spec = spec::parse(path, &text).map_err(|e| e.to_string())?;
    let key_err = |key: &str, msg: String| format!("{}: key `{key}`: {msg}", path.display());
    let cfg_path = &spec.link.config;
    let cfg_text = std::fs::read_to_string(cfg_path)
        .map_err(|e| key_err("link.config", format!("{}: {e}", cfg_path.display())))?;
    let link = linkem::parse_config(&cfg_text)
        .map_err(|e| key_err("link.config", format!("{}: {e}", cfg_path.display())))?;
    for (key, p) in [("report", &spec.report), ("link.stats", &spec.link.stats)] {
        if !p.parent().is_some_and(Path::is_dir) {
            return Err(key_err(
                key,
                format!("{}: its folder does not exist", p.display()),
            ));
        }
    }
    Ok((spec, link))
}
