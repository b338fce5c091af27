//! Command line of the contract:
//! `linkem --iface-a IF --iface-b IF --config FILE --stats FILE [--packet-log FILE] [--ready-file FILE]`

use std::path::PathBuf;

pub const USAGE: &str = "usage: linkem --iface-a IF --iface-b IF --config FILE --stats FILE \
[--packet-log FILE] [--ready-file FILE]";

#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    pub iface_a: String,
    pub iface_b: String,
    pub config: PathBuf,
    pub stats: PathBuf,
    pub packet_log: Option<PathBuf>,
    pub ready_file: Option<PathBuf>,
}

pub fn parse_args(argv: &[String]) -> Result<Args, String> {
    let (mut a, mut b, mut c, mut s, mut l, mut r) = (None, None, None, None, None, None);
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let slot = match flag.as_str() {
            "--iface-a" => &mut a,
            "--iface-b" => &mut b,
            "--config" => &mut c,
            "--stats" => &mut s,
            "--packet-log" => &mut l,
            "--ready-file" => &mut r,
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        };
        let Some(v) = it.next() else {
            return Err(format!("{flag} needs a value\n{USAGE}"));
        };
        if slot.replace(v.clone()).is_some() {
            return Err(format!("{flag} given twice"));
        }
    }
    let need = |v: Option<String>, f: &str| v.ok_or_else(|| format!("missing {f}\n{USAGE}"));
    let iface_a = need(a, "--iface-a")?;
    let iface_b = need(b, "--iface-b")?;
    for (f, name) in [("--iface-a", &iface_a), ("--iface-b", &iface_b)] {
        if name.is_empty() || name.len() >= libc::IFNAMSIZ {
            return Err(format!(
                "{f}: interface name must have 1..15 characters, got {name:?}"
            ));
        }
    }
    if iface_a == iface_b {
        return Err("--iface-a and --iface-b must differ".to_string());
    }
    Ok(Args {
        iface_a,
        iface_b,
        config: need(c, "--config")?.into(),
        stats: need(s, "--stats")?.into(),
        packet_log: l.map(PathBuf::from),
        ready_file: r.map(PathBuf::from),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn full_and_minimal_command_lines() {
        let a = parse_args(&v(
            "--iface-a x --iface-b y --config c.json --stats s.jsonl \
             --packet-log p.jsonl --ready-file r",
        ))
        .unwrap();
        assert_eq!(a.iface_a, "x");
        assert_eq!(a.packet_log, Some(PathBuf::from("p.jsonl")));
        let a = parse_args(&v("--stats s --config c --iface-b y --iface-a x")).unwrap();
        assert_eq!((a.packet_log, a.ready_file), (None, None));
    }

    #[test]
    fn bad_command_lines_say_why() {
        let e = |s: &str| parse_args(&v(s)).unwrap_err();
        assert!(e("--iface-a x --iface-b y --config c").contains("missing --stats"));
        assert!(e("--iface-a x --iface-b x --config c --stats s").contains("must differ"));
        assert!(e("--iface-a x --bogus 1").contains("unknown argument"));
        assert!(e("--iface-a").contains("needs a value"));
        assert!(e("--iface-a x --iface-a z").contains("given twice"));
        assert!(e("--iface-a abcdefghijklmnop --iface-b y --config c --stats s").contains("1..15"));
    }
}
