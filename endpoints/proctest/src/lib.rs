//! What the endpoints' integration tests share: a scratch folder per test, a free UDP port,
//! spawning a binary with stderr captured, and waiting for it with a time limit, and a
//! server/client pair of one binary on loopback, and ([`virtual_pair`]) a pair of sessions in
//! virtual time over the sim site's network (simnet, with linkem's link core).

use std::io::Read;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A fresh empty folder under the temp dir, unique to this process and `name`. It is removed
/// when the guard drops at the end of a passing test; a failing (panicking) test keeps it, so
/// the logs it names in its message can still be read.
pub fn scratch(prefix: &str, name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

/// A scratch folder that removes itself on drop unless the thread is panicking.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A currently free UDP port on 127.0.0.1 (released before use: a small race, fine here).
pub fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn spawn(bin: &str, args: &[&str]) -> Child {
    Command::new(bin)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {bin}: {e}"))
}

/// One loopback session of an endpoint binary: a scratch folder, a free port, and the
/// certificate the server writes and the client reads. Each side logs to `dir/<role>`.
pub struct Pair {
    bin: String,
    pub dir: Scratch,
    pub addr: String,
    pub cert: PathBuf,
}

impl Pair {
    /// A fresh `scratch(prefix, name)` folder and a free port for `bin`.
    pub fn new(bin: &str, prefix: &str, name: &str) -> Pair {
        let dir = scratch(prefix, name);
        Pair {
            bin: bin.to_string(),
            addr: format!("127.0.0.1:{}", free_port()),
            cert: dir.join("cert.der"),
            dir,
        }
    }

    /// The log folder of `role`.
    pub fn log(&self, role: &str) -> PathBuf {
        self.dir.join(role)
    }

    /// `bin --role ROLE --bind ADDR --cert-out CERT --log-dir DIR/ROLE EXTRA...`
    pub fn server(&self, role: &str, extra: &[&str]) -> Child {
        self.start(role, &["--bind", "--cert-out"], extra)
    }

    /// `bin --role ROLE --connect ADDR --cert CERT --log-dir DIR/ROLE EXTRA...`
    pub fn client(&self, role: &str, extra: &[&str]) -> Child {
        self.start(role, &["--connect", "--cert"], extra)
    }

    fn start(&self, role: &str, flags: &[&str; 2], extra: &[&str]) -> Child {
        let (cert, log) = (self.cert.to_str().unwrap(), self.log(role));
        let mut args = vec!["--role", role, flags[0], &self.addr, flags[1], cert];
        args.extend(["--log-dir", log.to_str().unwrap()]);
        args.extend(extra);
        spawn(&self.bin, &args)
    }
}

/// Exit code and stderr; kills the child and panics after `limit`.
pub fn wait(mut c: Child, limit: Duration) -> (i32, String) {
    let t0 = Instant::now();
    loop {
        if let Some(st) = c.try_wait().unwrap() {
            let mut err = String::new();
            c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            return (st.code().unwrap_or(-1), err);
        }
        if t0.elapsed() > limit {
            c.kill().unwrap();
            c.wait().unwrap();
            panic!("the process did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Rows of a CSV log (no quoting) as header-name → value maps.
pub type Table = Vec<std::collections::BTreeMap<String, String>>;

pub fn csv_table(p: &std::path::Path) -> Table {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut lines = text.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            head.iter()
                .cloned()
                .zip(l.split(',').map(String::from))
                .collect()
        })
        .collect()
}

/// What [`virtual_pair`] saw.
#[derive(Debug)]
pub struct VirtualRun {
    /// Exit codes of the listener and the connector.
    pub codes: (u8, u8),
    /// Their stderr.
    pub stderr: (String, String),
    /// Virtual time from the start to the end of both.
    pub virtual_s: f64,
}

/// The Unix time at which a virtual pair starts (2026-01-01T00:00:00Z).
pub const VIRTUAL_EPOCH_NS: u64 = 1_767_225_600_000_000_000;

/// The listener's address in a [`virtual_pair`] (side b of the link, where the sim site's
/// hosts are).
pub const LISTEN_IP: &str = "10.0.0.2";
/// The connector's address (side a, the guests' side).
pub const CONNECT_IP: &str = "10.0.0.1";

/// A lossless link with `one_way_delay` each way and no rate limit (the queue never holds a
/// packet), its jitter and loss streams seeded by `seed`.
pub fn lossless_link(one_way_delay: Duration, seed: u64) -> linkem::Config {
    use linkem::config::{
        DirectionConfig, DropPolicy, LossConfig, QueueConfig, QueueLimit, RateConfig,
    };
    let dir = DirectionConfig {
        rate: RateConfig::Unlimited,
        delay_ns: one_way_delay.as_nanos() as u64,
        jitter_ns: 0,
        jitter_reorder: false,
        loss: LossConfig::None,
        queue: Some(QueueConfig {
            limit: QueueLimit::Packets(1_000_000),
            drop: DropPolicy::Tail,
        }),
    };
    linkem::Config {
        seed,
        mtu_bytes: 1500,
        a_to_b: dir.clone(),
        b_to_a: dir,
    }
}

/// Runs `run(listen_argv)` on [`LISTEN_IP`] and `run(connect_argv)` on [`CONNECT_IP`] at once,
/// as the sim site runs its processes: on simnet's runtime (tokio's clock paused: virtual
/// time), across a [`lossless_link`] with `one_way_delay`, both with quinn's randomness
/// seeded from `seed`.
pub fn virtual_pair<F, Fut>(
    run: F,
    listen_argv: Vec<String>,
    connect_argv: Vec<String>,
    one_way_delay: Duration,
    seed: u64,
) -> VirtualRun
where
    F: Fn(Vec<String>, quicsetup::Env) -> Fut,
    Fut: std::future::Future<Output = u8>,
{
    let srt = simnet::build().expect("simnet's runtime");
    let node = |ip: &str, side| simnet::NodeSpec {
        addr: ip.parse().unwrap(),
        side,
        recv_buffer_bytes: None,
        reader_stall: None,
    };
    let cfg = simnet::SimNetConfig {
        link: lossless_link(one_way_delay, seed),
        nodes: vec![
            node(CONNECT_IP, simnet::Side::A),
            node(LISTEN_IP, simnet::Side::B),
        ],
        stats: None,
        packet_log: None,
    };
    let net = simnet::SimNet::new(&srt, &cfg).expect("the network");
    srt.rt.block_on(async {
        let clock = quicsetup::Clock::virtual_with(VIRTUAL_EPOCH_NS, simnet::clock::now);
        let env = |ip: &str| {
            let (console, _out, err) = quicsetup::Console::memory();
            let node = net.node(ip.parse().unwrap()).expect("a node of the net");
            let env = quicsetup::Env {
                clock,
                net: quicsetup::Net::Injected(std::sync::Arc::new(node)),
                console,
                rng_seed: Some(seed),
            };
            (env, err)
        };
        let (le, lerr) = env(LISTEN_IP);
        let (ce, cerr) = env(CONNECT_IP);
        let (l, c) = tokio::join!(run(listen_argv, le), run(connect_argv, ce));
        VirtualRun {
            codes: (l, c),
            stderr: (lerr.text(), cerr.text()),
            virtual_s: clock.elapsed().as_secs_f64(),
        }
    })
}

/// Every file under `dir` (relative path, bytes), sorted by path.
pub fn files_under(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// [`virtual_pair`] of `program` with its listener on [`LISTEN_IP`]:4433 (`--role listen`, logs
/// in `dir/listen`) and its connector (`--role connect`, logs in `dir/connect`), the
/// certificate at `dir/cert.der`, each with its extra flags; 10 ms one way.
pub fn virtual_pair_in<F, Fut>(
    dir: &std::path::Path,
    run: F,
    listen_extra: &[&str],
    connect_extra: &[&str],
    seed: u64,
) -> VirtualRun
where
    F: Fn(Vec<String>, quicsetup::Env) -> Fut,
    Fut: std::future::Future<Output = u8>,
{
    let d = |p: &str| dir.join(p).to_str().unwrap().to_string();
    let argv = |role: &str, flag: &str, cert_flag: &str, extra: &[&str]| {
        let mut v: Vec<String> = vec!["endpoint".into(), "--role".into(), role.into()];
        v.extend([
            flag.into(),
            format!("{LISTEN_IP}:4433"),
            cert_flag.into(),
            d("cert.der"),
        ]);
        v.extend(["--log-dir".into(), d(role)]);
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    virtual_pair(
        run,
        argv("listen", "--bind", "--cert-out", listen_extra),
        argv("connect", "--connect", "--cert", connect_extra),
        Duration::from_millis(10),
        seed,
    )
}

/// Asserts the two folders hold the same files with the same bytes (but `cert.der`, a fresh
/// key every run).
pub fn assert_same_files(a: &std::path::Path, b: &std::path::Path) {
    let keep = |v: Vec<(String, Vec<u8>)>| -> Vec<(String, Vec<u8>)> {
        v.into_iter().filter(|(p, _)| p != "cert.der").collect()
    };
    let (fa, fb) = (keep(files_under(a)), keep(files_under(b)));
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&fa), names(&fb));
    for ((name, x), (_, y)) in fa.iter().zip(&fb) {
        assert!(
            x == y,
            "{name} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

/// Compiles only if `T` is `Send`: a session's future can go to `tokio::spawn`.
pub fn assert_send<T: Send>(_: &T) {}
