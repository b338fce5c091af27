//! What the endpoints' integration tests share: a scratch folder per test, a free UDP port,
//! spawning a binary with stderr captured, and waiting for it with a time limit, and a
//! server/client pair of one binary on loopback.

use std::io::Read;
use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A fresh empty folder under the temp dir, unique to this process and `name`.
pub fn scratch(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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
    pub dir: PathBuf,
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

    /// Removes the scratch folder (call it at the end of a passing test: a failing one keeps it).
    pub fn remove(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
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
