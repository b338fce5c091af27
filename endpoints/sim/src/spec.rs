//! SPEC.json, the run the sim is asked for (written by the sim site's planner; format in
//! README.md). Every error names the file, the key and what is allowed; unknown keys are
//! errors too (a misspelt key would otherwise be silently ignored).

use crate::registry;
use serde_json::{Map, Value};
use simnet::{NodeSpec, ReaderStall, Side};
use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Spec {
    pub seed: u64,
    pub epoch_unix_ns: u64,
    pub deadline_s: f64,
    /// Accepted for the format's sake: cancelling a task is immediate, there is nothing to
    /// wait for.
    pub term_wait_s: f64,
    pub link: LinkSpec,
    pub nodes: BTreeMap<String, NodeSpec>,
    pub processes: Vec<ProcessSpec>,
    pub report: PathBuf,
    /// Optional: a pcap per node of every frame it sends and receives (simnet's capture).
    pub capture: Option<CaptureSpec>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CaptureSpec {
    pub snaplen_bytes: u32,
    /// node name → its pcap file (absolute)
    pub files: BTreeMap<String, PathBuf>,
}

#[derive(Debug, Clone)]
pub struct LinkSpec {
    pub config: PathBuf,
    pub stats: PathBuf,
    pub stats_interval_ms: u64,
    /// linkem's per-packet log (`link.packet_log` of the scenario), or null.
    pub packet_log: Option<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct ProcessSpec {
    pub node: String,
    pub name: String,
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub start_at_s: f64,
    pub runs_to_end: bool,
    pub ok_exit_codes: Vec<u8>,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
    /// Optional: start only once this file exists (after `start_at_s`), as the node agent's
    /// `wait_for_file`.
    pub wait_for_file: Option<PathBuf>,
}

/// A spec error: the file, the dotted key, and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    pub file: PathBuf,
    pub key: String,
    pub msg: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: key `{}`: {}",
            self.file.display(),
            self.key,
            self.msg
        )
    }
}

impl std::error::Error for SpecError {}

/// Reads values of one JSON object, naming `prefix.key` in errors.
struct Obj<'a> {
    file: &'a Path,
    prefix: String,
    map: &'a Map<String, Value>,
}

type R<T> = Result<T, SpecError>;

impl<'a> Obj<'a> {
    fn new(file: &'a Path, prefix: String, v: &'a Value, allowed: &[&str]) -> R<Self> {
        let map = v.as_object().ok_or_else(|| SpecError {
            file: file.to_path_buf(),
            key: if prefix.is_empty() {
                "(document)".into()
            } else {
                prefix.clone()
            },
            msg: "must be an object".into(),
        })?;
        let o = Obj { file, prefix, map };
        if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(o.err(k, &format!("unknown key; allowed: {}", allowed.join(", "))));
        }
        Ok(o)
    }

    fn key(&self, k: &str) -> String {
        if self.prefix.is_empty() {
            k.to_string()
        } else {
            format!("{}.{k}", self.prefix)
        }
    }

    fn err(&self, k: &str, msg: &str) -> SpecError {
        SpecError {
            file: self.file.to_path_buf(),
            key: self.key(k),
            msg: msg.to_string(),
        }
    }

    fn get(&self, k: &str) -> R<&'a Value> {
        self.map.get(k).ok_or_else(|| self.err(k, "missing"))
    }

    fn u64(&self, k: &str) -> R<u64> {
        self.get(k)?
            .as_u64()
            .ok_or_else(|| self.err(k, "must be a non-negative integer"))
    }

    fn f64_min(&self, k: &str, min: f64) -> R<f64> {
        match self.get(k)?.as_f64() {
            Some(x) if x.is_finite() && x >= min => Ok(x),
            _ => Err(self.err(k, &format!("must be a number >= {min}"))),
        }
    }

    fn str(&self, k: &str) -> R<&'a str> {
        self.get(k)?
            .as_str()
            .ok_or_else(|| self.err(k, "must be a string"))
    }

    fn abs_path(&self, k: &str) -> R<PathBuf> {
        let p = PathBuf::from(self.str(k)?);
        if p.is_absolute() {
            Ok(p)
        } else {
            Err(self.err(k, "must be an absolute path"))
        }
    }

    /// An absolute path, or None when the key is absent or null.
    fn opt_abs_path(&self, k: &str) -> R<Option<PathBuf>> {
        match self.map.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.abs_path(k).map(Some),
        }
    }

    fn bool(&self, k: &str) -> R<bool> {
        self.get(k)?
            .as_bool()
            .ok_or_else(|| self.err(k, "must be true or false"))
    }
}

const TOP: &[&str] = &[
    "seed",
    "epoch_unix_ns",
    "deadline_s",
    "term_wait_s",
    "link",
    "nodes",
    "processes",
    "report",
    "capture",
];
const CAPTURE: &[&str] = &["snaplen_bytes", "files"];
/// tcpdump's limits on a snapshot length.
const SNAPLEN_BYTES: std::ops::RangeInclusive<u64> = 64..=262_144;
const LINK: &[&str] = &["config", "stats", "stats_interval_ms", "packet_log"];
const NODE: &[&str] = &["addr", "side", "recv_buffer_bytes", "reader_stall"];
const STALL: &[&str] = &["every_ms", "for_ms"];
const PROCESS: &[&str] = &[
    "node",
    "name",
    "argv",
    "cwd",
    "start_at_s",
    "runs_to_end",
    "ok_exit_codes",
    "stdout",
    "stderr",
    "wait_for_file",
];

/// Parse and check a spec's text (`file` names it in errors).
pub fn parse(file: &Path, text: &str) -> R<Spec> {
    let v: Value = serde_json::from_str(text).map_err(|e| SpecError {
        file: file.to_path_buf(),
        key: "(document)".into(),
        msg: format!("not valid JSON: {e}"),
    })?;
    let top = Obj::new(file, String::new(), &v, TOP)?;
    let deadline_s = top.f64_min("deadline_s", 0.0)?;
    let l = Obj::new(file, "link".into(), top.get("link")?, LINK)?;
    let link = LinkSpec {
        config: l.abs_path("config")?,
        stats: l.abs_path("stats")?,
        stats_interval_ms: match l.u64("stats_interval_ms")? {
            0 => return Err(l.err("stats_interval_ms", "must be at least 1")),
            n => n,
        },
        packet_log: l.opt_abs_path("packet_log")?,
    };
    let nodes = parse_nodes(&top)?;
    let procs = top
        .get("processes")?
        .as_array()
        .ok_or_else(|| top.err("processes", "must be a list"))?;
    let mut processes = Vec::new();
    for (i, pv) in procs.iter().enumerate() {
        processes.push(parse_process(file, i, pv, &nodes, deadline_s)?);
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, p) in processes.iter().enumerate() {
        if !names.insert(p.name.clone()) {
            return Err(top.err(
                &format!("processes[{i}].name"),
                &format!("{:?} is used twice", p.name),
            ));
        }
    }
    let capture = match top.map.get("capture") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_capture(
            &Obj::new(file, "capture".into(), v, CAPTURE)?,
            &nodes,
        )?),
    };
    Ok(Spec {
        capture,
        seed: top.u64("seed")?,
        epoch_unix_ns: top.u64("epoch_unix_ns")?,
        deadline_s,
        term_wait_s: top.f64_min("term_wait_s", 0.0)?,
        link,
        nodes,
        processes,
        report: top.abs_path("report")?,
    })
}

fn parse_nodes(top: &Obj) -> R<BTreeMap<String, NodeSpec>> {
    let nv = top.get("nodes")?;
    let map = nv
        .as_object()
        .ok_or_else(|| top.err("nodes", "must be an object of nodes"))?;
    let mut nodes = BTreeMap::new();
    let mut addrs = BTreeMap::new();
    for (name, v) in map {
        let o = Obj::new(top.file, format!("nodes.{name}"), v, NODE)?;
        let addr: IpAddr = o
            .str("addr")?
            .parse()
            .map_err(|_| o.err("addr", "must be an IP address"))?;
        if let Some(other) = addrs.insert(addr, name.clone()) {
            return Err(o.err("addr", &format!("{addr} is also node {other:?}'s")));
        }
        let side = match o.str("side")? {
            "a" => Side::A,
            "b" => Side::B,
            _ => {
                return Err(o.err(
                    "side",
                    "must be \"a\" (linkem's iface_a, the guests') or \"b\"",
                ))
            }
        };
        let recv_buffer_bytes = match o.get("recv_buffer_bytes")? {
            Value::Null => None,
            v => Some(v.as_u64().filter(|&b| b > 0).ok_or_else(|| {
                o.err(
                    "recv_buffer_bytes",
                    "must be null (unbounded) or a positive integer",
                )
            })?),
        };
        let reader_stall = match o.map.get("reader_stall") {
            None | Some(Value::Null) => None,
            Some(v) => Some(parse_stall(&Obj::new(
                top.file,
                o.key("reader_stall"),
                v,
                STALL,
            )?)?),
        };
        nodes.insert(
            name.clone(),
            NodeSpec {
                addr,
                side,
                recv_buffer_bytes,
                reader_stall,
            },
        );
    }
    Ok(nodes)
}

/// `{"snaplen_bytes": N, "files": {node: "/abs/file.pcap", ...}}`: nodes of the spec.
fn parse_capture(o: &Obj, nodes: &BTreeMap<String, NodeSpec>) -> R<CaptureSpec> {
    let snaplen_bytes = o.u64("snaplen_bytes")?;
    if !SNAPLEN_BYTES.contains(&snaplen_bytes) {
        return Err(o.err("snaplen_bytes", "must be 64..=262144 (tcpdump's -s)"));
    }
    let map = o
        .get("files")?
        .as_object()
        .ok_or_else(|| o.err("files", "must be an object: node name → pcap file"))?;
    let mut files = BTreeMap::new();
    for (node, v) in map {
        let key = format!("files.{node}");
        let Some(n) = nodes.get(node) else {
            let known: Vec<&str> = nodes.keys().map(String::as_str).collect();
            return Err(o.err(
                &key,
                &format!("no node {node:?}; nodes: {}", known.join(", ")),
            ));
        };
        if !n.addr.is_ipv4() {
            return Err(o.err(
                &key,
                "the node's address must be IPv4 (the frames are IPv4)",
            ));
        }
        let path = v
            .as_str()
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .ok_or_else(|| o.err(&key, "must be an absolute path"))?;
        files.insert(node.clone(), path);
    }
    Ok(CaptureSpec {
        snaplen_bytes: snaplen_bytes as u32,
        files,
    })
}

/// `{"every_ms": E, "for_ms": F}`: 0 < F < E.
fn parse_stall(o: &Obj) -> R<ReaderStall> {
    let every_ms = o.f64_min("every_ms", 0.0)?;
    let for_ms = o.f64_min("for_ms", 0.0)?;
    if every_ms <= 0.0 || for_ms <= 0.0 || for_ms >= every_ms {
        return Err(o.err(
            "for_ms",
            "must be above 0 and below every_ms (which must be above 0)",
        ));
    }
    let ns = |ms: f64| (ms * 1e6).round() as u64;
    Ok(ReaderStall {
        every_ns: ns(every_ms),
        for_ns: ns(for_ms),
    })
}

fn parse_process(
    file: &Path,
    i: usize,
    v: &Value,
    nodes: &BTreeMap<String, NodeSpec>,
    deadline_s: f64,
) -> R<ProcessSpec> {
    let o = Obj::new(file, format!("processes[{i}]"), v, PROCESS)?;
    let node = o.str("node")?.to_string();
    if !nodes.contains_key(&node) {
        let known: Vec<&str> = nodes.keys().map(String::as_str).collect();
        return Err(o.err(
            "node",
            &format!("no node {node:?}; nodes: {}", known.join(", ")),
        ));
    }
    let argv: Vec<String> = o
        .get("argv")?
        .as_array()
        .filter(|a| !a.is_empty())
        .and_then(|a| a.iter().map(|x| x.as_str().map(String::from)).collect())
        .ok_or_else(|| o.err("argv", "must be a non-empty list of strings"))?;
    let prog = program_name(&argv[0]);
    if registry::lookup(prog).is_none() {
        return Err(o.err(
            "argv[0]",
            &format!(
                "the sim has no program {prog:?}; it has: {}",
                registry::NAMES.join(", ")
            ),
        ));
    }
    let start_at_s = o.f64_min("start_at_s", 0.0)?;
    if start_at_s >= deadline_s {
        return Err(o.err(
            "start_at_s",
            &format!("must be before deadline_s ({deadline_s})"),
        ));
    }
    let ok_exit_codes = o
        .get("ok_exit_codes")?
        .as_array()
        .and_then(|a| {
            a.iter()
                .map(|x| x.as_u64().and_then(|c| u8::try_from(c).ok()))
                .collect()
        })
        .ok_or_else(|| o.err("ok_exit_codes", "must be a list of exit codes 0..=255"))?;
    Ok(ProcessSpec {
        node,
        name: o.str("name")?.to_string(),
        argv,
        cwd: o.abs_path("cwd")?,
        start_at_s,
        runs_to_end: o.bool("runs_to_end")?,
        ok_exit_codes,
        stdout: o.abs_path("stdout")?,
        stderr: o.abs_path("stderr")?,
        wait_for_file: o.opt_abs_path("wait_for_file")?,
    })
}

/// argv[0]'s basename: the program's name.
pub fn program_name(argv0: &str) -> &str {
    argv0.rsplit('/').next().unwrap_or(argv0)
}

/// argv with relative paths made relative to `cwd` (one process holds many cwds). A path is
/// an argument, or the value of `--flag=value`, that contains a `/` and does not start with
/// one (`logs/host`, `./cert.der`, `../traces/x.csv`); a bare name without `/` is left as is,
/// since it cannot be told from a word (`--role host`): write `./name` for a file in cwd.
pub fn resolve_argv(argv: &[String], cwd: &Path) -> Vec<String> {
    let fix = |a: &str| -> String {
        if a.contains('/') && !a.starts_with('/') && !a.contains("://") {
            cwd.join(a).to_string_lossy().into_owned()
        } else {
            a.to_string()
        }
    };
    let mut out = vec![argv[0].clone()];
    for a in &argv[1..] {
        out.push(match a.split_once('=') {
            Some((flag, val)) if flag.starts_with("--") => format!("{flag}={}", fix(val)),
            _ if a.starts_with('-') => a.clone(),
            _ => fix(a),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_text(edit: impl FnOnce(&mut Value)) -> String {
        let mut v = serde_json::json!({
            "seed": 1, "epoch_unix_ns": 1_767_225_600_000_000_000u64, "deadline_s": 45.0,
            "term_wait_s": 2.0,
            "link": {"config": "/r/linkem.json", "stats": "/r/s.jsonl", "stats_interval_ms": 1000},
            "nodes": {"guest": {"addr": "10.0.0.1", "side": "a", "recv_buffer_bytes": null},
                      "host": {"addr": "10.0.1.1", "side": "b", "recv_buffer_bytes": 212992}},
            "processes": [{"node": "host", "name": "srv", "argv": ["sim-dgram", "--role", "listen"],
                           "cwd": "/r", "start_at_s": 0.5, "runs_to_end": true,
                           "ok_exit_codes": [0], "stdout": "/r/o", "stderr": "/r/e"}],
            "report": "/r/sim-report.json"
        });
        edit(&mut v);
        v.to_string()
    }

    fn key_of(edit: impl FnOnce(&mut Value)) -> String {
        parse(Path::new("/r/SPEC.json"), &spec_text(edit))
            .unwrap_err()
            .key
    }

    #[test]
    fn the_contract_example_parses() {
        let s = parse(Path::new("/r/SPEC.json"), &spec_text(|_| {})).unwrap();
        assert_eq!(s.nodes["host"].recv_buffer_bytes, Some(212_992));
        assert_eq!(s.nodes["guest"].side, Side::A);
        assert_eq!(s.nodes["guest"].reader_stall, None);
        let t = spec_text(|v| {
            v["nodes"]["guest"]["reader_stall"] = serde_json::json!({"every_ms": 50, "for_ms": 2.5})
        });
        let s = parse(Path::new("/r/SPEC.json"), &t).unwrap();
        let want = ReaderStall {
            every_ns: 50_000_000,
            for_ns: 2_500_000,
        };
        assert_eq!(s.nodes["guest"].reader_stall, Some(want));
        assert_eq!(s.processes[0].start_at_s, 0.5);
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        let e = parse(
            Path::new("/r/SPEC.json"),
            &spec_text(|v| v["link"]["config"] = "x.json".into()),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "/r/SPEC.json: key `link.config`: must be an absolute path"
        );
        assert_eq!(
            key_of(|v| v["processes"][0]["argv"][0] = "nope".into()),
            "processes[0].argv[0]"
        );
        assert_eq!(
            key_of(|v| v["processes"][0]["node"] = "nope".into()),
            "processes[0].node"
        );
        assert_eq!(
            key_of(|v| v["processes"][0]["start_at_s"] = 50.0.into()),
            "processes[0].start_at_s"
        );
        assert_eq!(
            key_of(|v| v["nodes"]["host"]["side"] = "c".into()),
            "nodes.host.side"
        );
        assert_eq!(
            key_of(|v| v["nodes"]["host"]["addr"] = "10.0.0.1".into()),
            "nodes.host.addr"
        );
        assert_eq!(
            key_of(|v| v["nodes"]["host"]["recv_buffer_bytes"] = 0.into()),
            "nodes.host.recv_buffer_bytes"
        );
        assert_eq!(key_of(|v| v["typo"] = 1.into()), "typo");
        assert_eq!(
            key_of(|v| v["nodes"]["guest"]["reader_stall"] =
                serde_json::json!({"every_ms": 5, "for_ms": 5})),
            "nodes.guest.reader_stall.for_ms"
        );
        assert_eq!(
            key_of(|v| v["nodes"]["guest"]["reader_stall"] = serde_json::json!({"every": 5})),
            "nodes.guest.reader_stall.every"
        );
        assert_eq!(
            key_of(|v| v["processes"][0]["wait_for_file"] = "cert.der".into()),
            "processes[0].wait_for_file"
        );
        assert_eq!(
            key_of(|v| {
                v.as_object_mut().unwrap().remove("seed");
            }),
            "seed"
        );
        assert_eq!(
            key_of(|v| v["processes"][0]["ok_exit_codes"] = serde_json::json!([256])),
            "processes[0].ok_exit_codes"
        );
        let cap = |c: Value| key_of(move |v| v["capture"] = c);
        assert_eq!(
            cap(serde_json::json!({"snaplen_bytes": 10, "files": {}})),
            "capture.snaplen_bytes"
        );
        assert_eq!(
            cap(serde_json::json!({"snaplen_bytes": 100, "files": {"emu": "/r/c.pcap"}})),
            "capture.files.emu"
        );
        assert_eq!(
            cap(serde_json::json!({"snaplen_bytes": 100, "files": {"host": "c.pcap"}})),
            "capture.files.host"
        );
        assert_eq!(cap(serde_json::json!({"snaplen": 100})), "capture.snaplen");
    }

    #[test]
    fn a_capture_names_a_pcap_per_node() {
        let t = spec_text(|v| {
            v["capture"] = serde_json::json!({"snaplen_bytes": 262144,
                "files": {"guest": "/r/capture-guest.pcap", "host": "/r/capture-host.pcap"}})
        });
        let s = parse(Path::new("/r/SPEC.json"), &t).unwrap();
        let c = s.capture.unwrap();
        assert_eq!(c.snaplen_bytes, 262_144);
        assert_eq!(c.files["guest"], PathBuf::from("/r/capture-guest.pcap"));
        assert_eq!(c.files.len(), 2);
        let none = parse(Path::new("/r/SPEC.json"), &spec_text(|_| {})).unwrap();
        assert_eq!(none.capture, None);
    }

    #[test]
    fn relative_paths_in_argv_are_resolved_against_cwd() {
        let argv: Vec<String> = [
            "sim-dgram",
            "--role",
            "host",
            "--log",
            "logs/a.csv",
            "--cert=./c.der",
            "/abs/x",
            "10.0.0.1:4433",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let r = resolve_argv(&argv, Path::new("/run/guest"));
        assert_eq!(
            r,
            [
                "sim-dgram",
                "--role",
                "host",
                "--log",
                "/run/guest/logs/a.csv",
                "--cert=/run/guest/./c.der",
                "/abs/x",
                "10.0.0.1:4433"
            ]
        );
    }
}
