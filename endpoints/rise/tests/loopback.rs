//! Runs the real `rise` binary as host and guest over loopback and checks the contract:
//! exit codes, the CSV logs and summary.json.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use proctest::{free_port, wait};

const BIN: &str = env!("CARGO_BIN_EXE_rise");

fn spawn(args: &[&str]) -> Child {
    proctest::spawn(BIN, args)
}

fn scratch(name: &str) -> proctest::Scratch {
    proctest::scratch("qs-rise", name)
}

fn rows(p: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.lines().map(str::to_string).collect()
}

fn json_u64(text: &str, key: &str) -> u64 {
    let at = text
        .find(&format!("\"{key}\": "))
        .unwrap_or_else(|| panic!("{key} in {text}"));
    let rest = &text[at + key.len() + 4..];
    rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap()]
        .parse()
        .unwrap()
}

const COMMON: &[&str] = &["--video-bitrate-mbps", "4", "--fps", "30"];

#[test]
fn host_and_guest_stream_and_log() {
    let dir = scratch("ok");
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let cert = dir.join("cert.der");
    let (hl, gl) = (dir.join("host"), dir.join("guest"));
    let mut h = vec!["--role", "host", "--bind", &bind, "--duration-s", "3"];
    let cert_s = cert.to_str().unwrap();
    h.extend(["--cert-out", cert_s, "--log-dir", hl.to_str().unwrap()]);
    // the host runs the baseline (one FIFO, vanilla quinn's head drop by default)
    h.extend(["--prio", "off"]);
    h.extend(COMMON);
    let host = spawn(&h);
    let mut g = vec!["--role", "guest", "--connect", &bind, "--duration-s", "3"];
    g.extend(["--cert", cert_s, "--log-dir", gl.to_str().unwrap()]);
    let keylog = dir.join("keys.log");
    g.extend(["--keylog", keylog.to_str().unwrap()]);
    g.extend(COMMON);
    let guest = spawn(&g);
    let (gc, gerr) = wait(guest, Duration::from_secs(20));
    let (hc, herr) = wait(host, Duration::from_secs(20));
    assert_eq!(gc, 0, "guest stderr: {gerr}");
    assert_eq!(hc, 0, "host stderr: {herr}");

    for (side, logs) in [("host", &hl), ("guest", &gl)] {
        let shown = rows(&logs.join("frames_displayed.csv"));
        assert_eq!(
            shown[0],
            "frame_id,frame_type,display_time_us,tracking_sample_id,tracking_gen_time_us,mtp_ms"
        );
        // 3 s at 30 fps on a lossless loopback: most of ~90 frames are shown.
        assert!(
            shown.len() > 60,
            "{side}: {} frames displayed",
            shown.len() - 1
        );
        // Later frames carry an MTP figure, positive and below a second.
        let mtp: f64 = shown
            .last()
            .unwrap()
            .rsplit(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(mtp > 0.0 && mtp < 1000.0, "{side}: mtp {mtp}");
        assert!(rows(&logs.join("frames_sent.csv")).len() > 60);
        assert!(rows(&logs.join("tracking_sent.csv")).len() > 150);
        assert!(rows(&logs.join("tracking_received.csv")).len() > 150);
        let path = rows(&logs.join("path_stats.csv"));
        assert!(path.len() > 20, "{side}: {} path rows", path.len());
        let chans = rows(&logs.join("channels.csv"));
        for kind in ["tracking", "video", "ack"] {
            assert!(chans.iter().any(|r| r.split(',').nth(1) == Some(kind)));
        }
        let summary = std::fs::read_to_string(logs.join("summary.json")).unwrap();
        assert!(
            summary.contains(&format!("\"role\": \"{side}\"")),
            "{summary}"
        );
        assert!(summary.contains("\"quinn_wait_us_p99\""), "{summary}");
        let scheme = if side == "host" {
            "fifo-head-drop"
        } else {
            "prio"
        };
        assert!(
            summary.contains(&format!("\"buffer_scheme\": \"{scheme}\"")),
            "{summary}"
        );
        assert!(summary.contains("\"transport_limited_pct\""), "{summary}");
        let sender = rows(&logs.join("sender.csv"));
        assert_eq!(
            sender[0],
            "time_us,queued_bytes_mean,queued_bytes_max,limited_us"
        );
        assert!(sender.len() > 20, "{side}: {} sender rows", sender.len());
        assert!(
            summary.contains("\"exit_reason\": \"duration\"")
                || summary.contains("\"exit_reason\": \"peer_closed\""),
            "{summary}"
        );
    }
    for logs in [&hl, &gl] {
        let summary = std::fs::read_to_string(logs.join("summary.json")).unwrap();
        let handed = json_u64(&summary, "quinn_datagrams");
        let sent = json_u64(&summary, "quinn_datagram_frames_sent");
        // The binary binds through quicsetup::udpbuf: the kernel's buffers are recorded and,
        // when forcing was permitted (root), at least what was asked for.
        let rcvbuf = json_u64(&summary, "udp_rcvbuf_bytes");
        let sndbuf = json_u64(&summary, "udp_sndbuf_bytes");
        let want = quicsetup::udpbuf::SOCKET_BUFFER_BYTES as u64;
        if summary.contains("\"udp_rcvbuf_mode\": \"forced\"") {
            assert!(rcvbuf >= want && sndbuf >= want, "{summary}");
        } else {
            assert!(
                summary.contains("\"udp_rcvbuf_mode\": \"plain\""),
                "{summary}"
            );
        }
        // quinn's own buffer holds about one datagram: it dropped none of ours.
        assert!(
            handed > 1000 && handed - sent <= 2,
            "{handed} handed, {sent} sent"
        );
    }
    let keys = std::fs::read_to_string(dir.join("keys.log")).unwrap();
    assert!(keys.contains("CLIENT_TRAFFIC_SECRET_0"), "{keys}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn guest_without_host_exits_4() {
    let dir = scratch("nohost");
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let cert = dir.join("missing.der");
    let logs = dir.join("logs");
    let guest = spawn(&[
        "--role",
        "guest",
        "--connect",
        &addr,
        "--cert",
        cert.to_str().unwrap(),
        "--log-dir",
        logs.to_str().unwrap(),
        "--connect-timeout-s",
        "0.5",
    ]);
    let (code, err) = wait(guest, Duration::from_secs(10));
    assert_eq!(code, 4, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_frame_trace_exits_2_naming_file_and_line() {
    let dir = scratch("badtrace");
    let trace = dir.join("frames.csv");
    std::fs::write(&trace, "frame_type,size_bytes\nkey,1000\nbogus,10\n").unwrap();
    let guest = spawn(&[
        "--role",
        "guest",
        "--connect",
        "127.0.0.1:9",
        "--cert",
        "x.der",
        "--log-dir",
        dir.join("logs").to_str().unwrap(),
        "--frame-trace",
        trace.to_str().unwrap(),
    ]);
    let (code, err) = wait(guest, Duration::from_secs(10));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("frames.csv") && err.contains("line 3"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_vanished_host_ends_the_guest_with_3() {
    let dir = scratch("lost");
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let cert = dir.join("cert.der");
    let cert_s = cert.to_str().unwrap();
    let (hl, gl) = (dir.join("host"), dir.join("guest"));
    let mut host = spawn(&[
        "--role",
        "host",
        "--bind",
        &bind,
        "--cert-out",
        cert_s,
        "--log-dir",
        hl.to_str().unwrap(),
        "--duration-s",
        "30",
        "--video-bitrate-mbps",
        "2",
    ]);
    let guest = spawn(&[
        "--role",
        "guest",
        "--connect",
        &bind,
        "--cert",
        cert_s,
        "--log-dir",
        gl.to_str().unwrap(),
        "--duration-s",
        "30",
        "--video-bitrate-mbps",
        "2",
        "--idle-timeout-s",
        "1",
    ]);
    // Let them connect and stream a little, then kill the host without a close.
    let t0 = Instant::now();
    while !gl.join("frames_displayed.csv").exists() || t0.elapsed() < Duration::from_millis(800) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "guest never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    host.kill().unwrap();
    host.wait().unwrap();
    let (code, err) = wait(guest, Duration::from_secs(10));
    assert_eq!(code, 3, "{err}");
    let summary = std::fs::read_to_string(gl.join("summary.json")).unwrap();
    assert!(summary.contains("peer_lost"), "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}
