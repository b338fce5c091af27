//! lkprobe: a batched, multi-flow UDP load generator and receiver, fast enough to saturate
//! linkem (the calibrator's "highest loss-free rate" and linkem's benchmark use it).
//!
//! ```text
//! lkprobe send --dst IP --port P --rate-mbps R --seconds S [--payload-bytes N] [--flows K] [--fps F]
//! lkprobe recv --port P [--flows K] [--seconds S] [--idle S] [--samples FILE]
//! ```
//!
//! Rates count the Ethernet frame (payload + 42 bytes of UDP, IP and Ethernet headers), as
//! linkem does. Flow k uses port P + k and its own thread on both ends. `--fps 0` (default)
//! paces packets evenly (due packets leave together in one `sendmmsg` per wake-up, at most
//! every 100 µs); `--fps F` sends each 1/F s one frame of R/F bits at once (video-like).
//! Each packet carries (seq, CLOCK_REALTIME send ns); the receiver stamps arrivals with the
//! kernel's receive time (SO_TIMESTAMPNS) and, with `--samples`, writes one record per packet
//! (little-endian i64: flow, seq, send_ns, recv_ns). Both print one JSON object on stdout.

mod args;
/// linkem's shell clock, the same file (lkprobe uses its clocks, stamps and sleep only).
#[allow(dead_code)]
#[path = "../../shell/clock.rs"]
mod clock;
mod recv;
mod send;
mod udp;

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args::parse(&argv) {
        Ok(p) => p,
        Err(msg) => {
            eprintln!("lkprobe: {msg}");
            return ExitCode::from(2);
        }
    };
    let result = match parsed {
        args::Mode::Send(a) => send::run(&a),
        args::Mode::Recv(a) => recv::run(&a),
    };
    match result {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lkprobe: {e}");
            ExitCode::from(1)
        }
    }
}
