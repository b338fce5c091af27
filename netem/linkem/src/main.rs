//! linkem: priolab's userspace link emulator, a layer-2 bump-in-the-wire over AF_PACKET.
//! See netem/README.md ("The linkem contract" and "linkem internals").

mod shell;

use linkem::{parse_config, Direction};
use shell::args::parse_args;
use shell::forward::Forwarder;
use shell::pace::Pacer;
use shell::packet_log::{self, LogTx};
use shell::socket::{open_rx, open_tx};
use std::fs::File;
use std::io;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&argv) {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("linkem: {msg}");
            return ExitCode::from(2);
        }
    };
    let text = match std::fs::read_to_string(&args.config) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("linkem: --config {}: {e}", args.config.display());
            return ExitCode::from(2);
        }
    };
    let cfg = match parse_config(&text) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("linkem: {}: {e}", args.config.display());
            return ExitCode::from(2);
        }
    };
    match run(&args, &cfg) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("linkem: I/O error: {e}");
            ExitCode::from(1)
        }
    }
}

/// An integer environment variable in `range`, or `default` when unset.
fn env_int(name: &str, default: u64, range: std::ops::RangeInclusive<u64>) -> io::Result<u64> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(x) if range.contains(&x) => Ok(x),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{name} must be {}..={}, got {v:?}",
                    range.start(),
                    range.end()
                ),
            )),
        },
    }
}

/// LINKEM_RT_PRIO: SCHED_FIFO priority of the forwarding threads (default 10; 0: off).
fn rt_priority() -> io::Result<Option<i32>> {
    let p = env_int("LINKEM_RT_PRIO", 10, 0..=99)?;
    Ok((p > 0).then_some(p as i32))
}

/// LINKEM_BATCH_US: the departure batching bound in µs (see shell/pace.rs; 0: none).
fn batch_ns() -> io::Result<u64> {
    Ok(env_int("LINKEM_BATCH_US", DEFAULT_BATCH_US, 0..=10_000)? * 1_000)
}

/// Default departure batching bound, 100 µs: the largest bound that adds nothing measurable to
/// `priolab calibrate`'s delay error (linkem's send lateness at 50 % load 0.024–0.029 ms mean
/// against 0.023–0.026 without batching), while cutting the CPU wherever departures are closer
/// than that (200 Mbit/s × 2: 1.05 → 0.37 cores). Measured curve and source: netem/README.md,
/// "How the bound was chosen".
const DEFAULT_BATCH_US: u64 = 100;

/// Block SIGINT/SIGTERM in this and every later thread; the main thread waits for them.
fn block_stop_signals() -> libc::sigset_t {
    // SAFETY: sigset manipulation on a local, then pthread_sigmask on the calling thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

fn wait_signal(set: &libc::sigset_t, timeout_ms: u64) -> bool {
    let ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: (timeout_ms * 1_000_000) as libc::c_long,
    };
    // SAFETY: valid set and timespec.
    unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &ts) > 0 }
}

/// The stats writer: one line per message, each written (and so visible) at once.
fn write_stats(rx: mpsc::Receiver<String>, mut f: File) -> io::Result<()> {
    for line in rx {
        f.write_all(format!("{line}\n").as_bytes())?;
    }
    Ok(())
}

fn run(args: &shell::args::Args, cfg: &linkem::Config) -> io::Result<()> {
    let sigset = block_stop_signals();
    let with_path = |p: &std::path::Path, e: io::Error| {
        io::Error::new(e.kind(), format!("{}: {e}", p.display()))
    };
    let stats_file = File::create(&args.stats).map_err(|e| with_path(&args.stats, e))?;
    let (stats, stats_rx) = mpsc::channel::<String>();
    let stats_thread = std::thread::Builder::new()
        .name("lk-stats".into())
        .spawn(move || write_stats(stats_rx, stats_file))?;
    let (log, log_thread) = match &args.packet_log {
        Some(p) => {
            let (tx, h) = packet_log::start(p)?;
            (tx, Some(h))
        }
        None => (LogTx::disabled(), None),
    };
    let rx_a = open_rx(&args.iface_a)?;
    let rx_b = open_rx(&args.iface_b)?;
    let tx_a = open_tx(&args.iface_a)?;
    let tx_b = open_tx(&args.iface_b)?;
    let stop = Arc::new(AtomicBool::new(false));
    let epoch_ns = shell::clock::monotonic_ns();
    let buf_bytes = (cfg.mtu_bytes + 14) as usize;
    let rt_prio = rt_priority()?;
    let batch_ns = batch_ns()?;
    let make =
        |name: &'static str, dcfg: &linkem::config::DirectionConfig, stream, rx, tx| Forwarder {
            name,
            core: Direction::new(dcfg, cfg.mtu_bytes, cfg.seed, stream),
            rx,
            tx,
            buf_bytes,
            epoch_ns,
            stats: stats.clone(),
            log: log.clone(),
            stop: stop.clone(),
            rt_prio,
            pacer: Pacer::new(batch_ns, dcfg.delay_ns.saturating_sub(dcfg.jitter_ns)),
        };
    let fwd = [
        make("a_to_b", &cfg.a_to_b, 0, rx_a, tx_b),
        make("b_to_a", &cfg.b_to_a, 1, rx_b, tx_a),
    ];
    drop(log);
    drop(stats);
    let mut threads = Vec::new();
    for f in fwd {
        let name = format!("lk-{}", f.name);
        threads.push(
            std::thread::Builder::new()
                .name(name)
                .spawn(move || f.run())?,
        );
    }
    if let Some(p) = &args.ready_file {
        std::fs::write(p, format!("{}\n", std::process::id())).map_err(|e| with_path(p, e))?;
    }
    while !stop.load(Ordering::Relaxed) {
        if wait_signal(&sigset, 100) || threads.iter().any(|t| t.is_finished()) {
            stop.store(true, Ordering::Relaxed);
        }
    }
    let mut result = Ok(());
    for t in threads {
        let r = t
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("forwarding thread panicked")));
        if result.is_ok() {
            result = r;
        }
    }
    let r = stats_thread
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("stats thread panicked")));
    if result.is_ok() {
        result = r.map_err(|e| with_path(&args.stats, e));
    }
    if let Some(h) = log_thread {
        let r = h
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("log thread panicked")));
        if result.is_ok() {
            result = r;
        }
    }
    result
}
