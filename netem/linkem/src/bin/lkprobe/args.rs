//! Command line of lkprobe (see main.rs).

use std::net::Ipv4Addr;
use std::path::PathBuf;

pub struct SendArgs {
    pub dst: Ipv4Addr,
    pub port: u16,
    pub rate_mbps: f64,
    pub seconds: f64,
    pub payload_bytes: usize,
    pub flows: u16,
    pub fps: f64,
}

pub struct RecvArgs {
    pub port: u16,
    pub flows: u16,
    pub seconds: f64,
    pub idle_s: f64,
    pub samples: Option<PathBuf>,
}

pub enum Mode {
    Send(SendArgs),
    Recv(RecvArgs),
}

/// Smallest payload: the header (seq, send time).
pub const HEADER_BYTES: usize = 16;
const MAX_PAYLOAD_BYTES: usize = 1472;

fn num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{key}: not a valid number: {v:?}"))
}

pub fn parse(argv: &[String]) -> Result<Mode, String> {
    let usage = "usage: lkprobe send --dst IP --port P --rate-mbps R --seconds S \
                 [--payload-bytes N] [--flows K] [--fps F] | lkprobe recv --port P [--flows K] \
                 [--seconds S] [--idle S] [--samples FILE]";
    let (mode, rest) = argv.split_first().ok_or(usage)?;
    let mut kv = std::collections::HashMap::new();
    let mut it = rest.iter();
    while let Some(k) = it.next() {
        let v = it.next().ok_or_else(|| format!("{k}: missing value"))?;
        if kv.insert(k.as_str(), v.as_str()).is_some() {
            return Err(format!("{k}: given twice"));
        }
    }
    let mut take = |k: &str| kv.remove(k);
    let flows: u16 = take("--flows").map_or(Ok(1), |v| num("--flows", v))?;
    if flows == 0 {
        return Err("--flows: must be at least 1".into());
    }
    let port: u16 = num("--port", take("--port").ok_or("--port is required")?)?;
    if port as u32 + flows as u32 > 65_536 {
        return Err("--port + --flows: beyond port 65535".into());
    }
    let parsed = match mode.as_str() {
        "send" => {
            let payload_bytes =
                take("--payload-bytes").map_or(Ok(1400), |v| num("--payload-bytes", v))?;
            if !(HEADER_BYTES..=MAX_PAYLOAD_BYTES).contains(&payload_bytes) {
                return Err(format!(
                    "--payload-bytes: must be {HEADER_BYTES}..={MAX_PAYLOAD_BYTES}, got {payload_bytes}"
                ));
            }
            let a = SendArgs {
                dst: num("--dst", take("--dst").ok_or("--dst is required")?)?,
                port,
                rate_mbps: num(
                    "--rate-mbps",
                    take("--rate-mbps").ok_or("--rate-mbps is required")?,
                )?,
                seconds: num(
                    "--seconds",
                    take("--seconds").ok_or("--seconds is required")?,
                )?,
                payload_bytes,
                flows,
                fps: take("--fps").map_or(Ok(0.0), |v| num("--fps", v))?,
            };
            if !(a.rate_mbps > 0.0 && a.rate_mbps.is_finite()) {
                return Err(format!("--rate-mbps: must be > 0, got {}", a.rate_mbps));
            }
            if !(a.seconds > 0.0 && a.seconds.is_finite()) {
                return Err(format!("--seconds: must be > 0, got {}", a.seconds));
            }
            if !(a.fps >= 0.0 && a.fps.is_finite()) {
                return Err(format!(
                    "--fps: must be >= 0 (0: evenly paced), got {}",
                    a.fps
                ));
            }
            Mode::Send(a)
        }
        "recv" => {
            let a = RecvArgs {
                port,
                flows,
                seconds: take("--seconds").map_or(Ok(60.0), |v| num("--seconds", v))?,
                idle_s: take("--idle").map_or(Ok(1.0), |v| num("--idle", v))?,
                samples: take("--samples").map(PathBuf::from),
            };
            if !(a.seconds > 0.0 && a.idle_s > 0.0) {
                return Err("--seconds and --idle: must be > 0".into());
            }
            Mode::Recv(a)
        }
        other => return Err(format!("unknown mode {other:?}; {usage}")),
    };
    if let Some(k) = kv.keys().next() {
        return Err(format!("unknown option {k} for {mode}; {usage}"));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_send_with_defaults() {
        let Mode::Send(a) = parse(&v(
            "send --dst 10.0.0.2 --port 5000 --rate-mbps 30 --seconds 2",
        ))
        .unwrap() else {
            panic!("not send")
        };
        assert_eq!(
            (a.port, a.flows, a.payload_bytes, a.fps),
            (5000, 1, 1400, 0.0)
        );
    }

    #[test]
    fn rejects_bad_input_naming_the_option() {
        let e = |s: &str| match parse(&v(s)) {
            Err(m) => m,
            Ok(_) => panic!("accepted {s}"),
        };
        assert!(e("send --dst 10.0.0.2 --port 1 --rate-mbps 0 --seconds 1").contains("--rate-mbps"));
        assert!(e("send --dst x --port 1 --rate-mbps 1 --seconds 1").contains("--dst"));
        assert!(
            e("send --dst 10.0.0.2 --port 1 --rate-mbps 1 --seconds 1 --payload-bytes 8")
                .contains("--payload-bytes")
        );
        assert!(e("recv --port 1 --bogus 3").contains("--bogus"));
        assert!(e("recv --port 65535 --flows 2").contains("--flows"));
    }
}
