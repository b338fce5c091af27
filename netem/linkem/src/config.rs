//! The linkem JSON config (see netem/README.md, "The linkem contract"), parsed and validated
//! into internal units (ns, bit/s, bytes). Every error names the offending key.

use serde_json::{Map, Value};
use std::fmt;

/// A config error: the dotted key path and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub key: String,
    pub msg: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "config key `{}`: {}", self.key, self.msg)
    }
}

impl std::error::Error for ConfigError {}

fn err<T>(key: &str, msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError {
        key: key.to_string(),
        msg: msg.into(),
    })
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub seed: u64,
    pub mtu_bytes: u64,
    pub a_to_b: DirectionConfig,
    pub b_to_a: DirectionConfig,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DirectionConfig {
    pub rate: RateConfig,
    pub delay_ns: u64,
    pub jitter_ns: u64,
    pub jitter_reorder: bool,
    pub loss: LossConfig,
    /// None exactly when the rate is a policer (a policer has no queue).
    pub queue: Option<QueueConfig>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RateConfig {
    Unlimited,
    Constant {
        rate_bps: u64,
    },
    /// Piecewise-constant rate: `(start_ns, rate_bps)`, first start is 0, strictly increasing.
    Schedule {
        points: Vec<(u64, u64)>,
        period_ns: u64,
        looped: bool,
    },
    /// Mahimahi delivery opportunities: sorted times within one period.
    Opportunities {
        times_ns: Vec<u64>,
        period_ns: u64,
        bytes_per_opportunity: u64,
        looped: bool,
    },
    /// Token-bucket policer, no queue: the bucket fills at `rate_bps` up to `burst_bytes`
    /// (starting full); a frame that finds fewer tokens than its wire bytes is dropped.
    Policer {
        rate_bps: u64,
        burst_bytes: u64,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum LossConfig {
    None,
    Iid {
        p: f64,
    },
    GilbertElliott {
        p: f64,
        r: f64,
        h: f64,
        k: f64,
    },
    FourState {
        p13: f64,
        p31: f64,
        p32: f64,
        p23: f64,
        p14: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueLimit {
    Bytes(u64),
    Packets(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropPolicy {
    Tail,
    Head,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueConfig {
    pub limit: QueueLimit,
    pub drop: DropPolicy,
}

/// Parse and validate a config from JSON text.
pub fn parse_config(text: &str) -> Result<Config, ConfigError> {
    let v: Value = serde_json::from_str(text).map_err(|e| ConfigError {
        key: "(document)".into(),
        msg: format!("not valid JSON: {e}"),
    })?;
    let obj = as_object(&v, "(document)")?;
    check_keys(obj, "", &["seed", "mtu_bytes", "a_to_b", "b_to_a"])?;
    let seed = get_uint(obj, "", "seed")?.ok_or_else(|| missing("seed"))?;
    let mtu_bytes = get_uint(obj, "", "mtu_bytes")?.unwrap_or(1500);
    if !(68..=65535).contains(&mtu_bytes) {
        return err(
            "mtu_bytes",
            format!("must be in 68..=65535, got {mtu_bytes}"),
        );
    }
    let a_to_b = parse_direction(required(obj, "", "a_to_b")?, "a_to_b")?;
    let b_to_a = parse_direction(required(obj, "", "b_to_a")?, "b_to_a")?;
    for (name, d) in [("a_to_b", &a_to_b), ("b_to_a", &b_to_a)] {
        if let RateConfig::Policer { burst_bytes, .. } = d.rate {
            let frame = mtu_bytes + 14;
            if burst_bytes < frame {
                return err(
                    &format!("{name}.rate.burst_bytes"),
                    format!(
                        "must be at least one full frame, mtu_bytes + 14 = {frame} \
                         (a smaller bucket never passes a full-size frame), got {burst_bytes}"
                    ),
                );
            }
        }
    }
    Ok(Config {
        seed,
        mtu_bytes,
        a_to_b,
        b_to_a,
    })
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn missing(key: &str) -> ConfigError {
    ConfigError {
        key: key.into(),
        msg: "is required".into(),
    }
}

fn as_object<'a>(v: &'a Value, key: &str) -> Result<&'a Map<String, Value>, ConfigError> {
    v.as_object().ok_or_else(|| ConfigError {
        key: key.into(),
        msg: format!("must be a JSON object, got {v}"),
    })
}

fn check_keys(obj: &Map<String, Value>, prefix: &str, allowed: &[&str]) -> Result<(), ConfigError> {
    for k in obj.keys() {
        if !allowed.contains(&k.as_str()) {
            return err(
                &join(prefix, k),
                format!("unknown key (allowed: {})", allowed.join(", ")),
            );
        }
    }
    Ok(())
}

fn required<'a>(
    obj: &'a Map<String, Value>,
    prefix: &str,
    key: &str,
) -> Result<&'a Value, ConfigError> {
    match obj.get(key) {
        Some(v) if !v.is_null() => Ok(v),
        _ => Err(missing(&join(prefix, key))),
    }
}

/// A non-negative finite number (null/absent → None).
fn get_num(obj: &Map<String, Value>, prefix: &str, key: &str) -> Result<Option<f64>, ConfigError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
            _ => err(
                &join(prefix, key),
                format!("must be a non-negative number, got {v}"),
            ),
        },
    }
}

/// A non-negative integer; integral floats such as 1500.0 are accepted.
fn get_uint(obj: &Map<String, Value>, prefix: &str, key: &str) -> Result<Option<u64>, ConfigError> {
    if let Some(Value::Number(n)) = obj.get(key) {
        if let Some(u) = n.as_u64() {
            return Ok(Some(u));
        }
    }
    match get_num(obj, prefix, key)? {
        None => Ok(None),
        Some(x) if x.fract() == 0.0 && x < 1.8e19 => Ok(Some(x as u64)),
        Some(x) => err(
            &join(prefix, key),
            format!("must be a non-negative integer, got {x}"),
        ),
    }
}

fn get_bool(
    obj: &Map<String, Value>,
    prefix: &str,
    key: &str,
    default: bool,
) -> Result<bool, ConfigError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => err(
            &join(prefix, key),
            format!("must be true or false, got {v}"),
        ),
    }
}

fn get_prob(obj: &Map<String, Value>, prefix: &str, key: &str) -> Result<f64, ConfigError> {
    let k = join(prefix, key);
    let x = get_num(obj, prefix, key)?.ok_or_else(|| missing(&k))?;
    if x > 1.0 {
        return err(&k, format!("is a probability and must be in 0..1, got {x}"));
    }
    Ok(x)
}

fn us_to_ns(x: f64) -> u64 {
    (x * 1e3).round() as u64
}

fn ms_to_ns(x: f64) -> u64 {
    (x * 1e6).round() as u64
}

fn kind<'a>(obj: &'a Map<String, Value>, prefix: &str) -> Result<&'a str, ConfigError> {
    let k = join(prefix, "kind");
    required(obj, prefix, "kind")?
        .as_str()
        .ok_or_else(|| ConfigError {
            key: k,
            msg: "must be a string".into(),
        })
}

fn parse_direction(v: &Value, p: &str) -> Result<DirectionConfig, ConfigError> {
    let obj = as_object(v, p)?;
    check_keys(
        obj,
        p,
        &[
            "rate",
            "delay_us",
            "jitter_us",
            "jitter_reorder",
            "loss",
            "queue",
        ],
    )?;
    let rate = parse_rate(required(obj, p, "rate")?, &join(p, "rate"))?;
    let delay_ns = us_to_ns(get_num(obj, p, "delay_us")?.unwrap_or(0.0));
    let jitter_ns = us_to_ns(get_num(obj, p, "jitter_us")?.unwrap_or(0.0));
    if delay_ns > 3_600_000_000_000 || jitter_ns > 3_600_000_000_000 {
        return err(
            &join(p, "delay_us"),
            "delay_us and jitter_us must be below one hour",
        );
    }
    let jitter_reorder = get_bool(obj, p, "jitter_reorder", false)?;
    let loss = match obj.get("loss") {
        None | Some(Value::Null) => LossConfig::None,
        Some(l) => parse_loss(l, &join(p, "loss"))?,
    };
    let queue =
        match (&rate, obj.get("queue")) {
            (RateConfig::Policer { .. }, None | Some(Value::Null)) => None,
            (RateConfig::Policer { .. }, Some(_)) => return err(
                &join(p, "queue"),
                "a policer has no queue: leave queue out (or null) when rate.kind is \"policer\"",
            ),
            (_, _) => Some(parse_queue(required(obj, p, "queue")?, &join(p, "queue"))?),
        };
    Ok(DirectionConfig {
        rate,
        delay_ns,
        jitter_ns,
        jitter_reorder,
        loss,
        queue,
    })
}

fn positive_rate(x: f64, key: &str) -> Result<u64, ConfigError> {
    let r = x.round() as u64;
    if r == 0 || x > 1e12 {
        return err(key, format!("must be a rate in 1..=1e12 bit/s, got {x}"));
    }
    Ok(r)
}

fn parse_rate(v: &Value, p: &str) -> Result<RateConfig, ConfigError> {
    let obj = as_object(v, p)?;
    match kind(obj, p)? {
        "unlimited" => {
            check_keys(obj, p, &["kind"])?;
            Ok(RateConfig::Unlimited)
        }
        "constant" => {
            check_keys(obj, p, &["kind", "rate_bps"])?;
            let k = join(p, "rate_bps");
            let x = get_num(obj, p, "rate_bps")?.ok_or_else(|| missing(&k))?;
            Ok(RateConfig::Constant {
                rate_bps: positive_rate(x, &k)?,
            })
        }
        "schedule" => {
            check_keys(obj, p, &["kind", "points", "period_ms", "loop"])?;
            let looped = get_bool(obj, p, "loop", true)?;
            let kp = join(p, "points");
            let arr = required(obj, p, "points")?.as_array().ok_or_else(|| ConfigError {
                key: kp.clone(),
                msg: "must be a list of [t_ms, rate_bps] pairs".into(),
            })?;
            if arr.is_empty() {
                return err(&kp, "must not be empty");
            }
            let mut points = Vec::with_capacity(arr.len());
            for (i, pt) in arr.iter().enumerate() {
                let ki = format!("{kp}[{i}]");
                let pair = pt.as_array().filter(|a| a.len() == 2).ok_or_else(|| ConfigError {
                    key: ki.clone(),
                    msg: format!("must be a pair [t_ms, rate_bps], got {pt}"),
                })?;
                let t = pair[0].as_f64().filter(|x| x.is_finite() && *x >= 0.0);
                let r = pair[1].as_f64().filter(|x| x.is_finite() && *x >= 0.0 && *x <= 1e12);
                let (Some(t), Some(r)) = (t, r) else {
                    return err(&ki, format!("needs t_ms >= 0 and 0 <= rate_bps <= 1e12, got {pt}"));
                };
                let t_ns = ms_to_ns(t);
                if i == 0 && t_ns != 0 {
                    return err(&ki, "the first point must start at t_ms = 0");
                }
                if let Some(&(prev, _)) = points.last() {
                    if t_ns <= prev {
                        return err(&ki, "t_ms must be strictly increasing");
                    }
                }
                points.push((t_ns, r.round() as u64));
            }
            let kper = join(p, "period_ms");
            let period_ns = match get_num(obj, p, "period_ms")? {
                Some(x) => ms_to_ns(x),
                None if looped => return Err(missing(&kper)),
                None => 0,
            };
            let last_t = points.last().map(|x| x.0).unwrap_or(0);
            if looped {
                if period_ns <= last_t {
                    return err(&kper, "must be larger than the last point's t_ms");
                }
                if points.iter().all(|x| x.1 == 0) {
                    return err(&kp, "a looped schedule needs at least one rate_bps > 0");
                }
            }
            Ok(RateConfig::Schedule {
                points,
                period_ns,
                looped,
            })
        }
        "opportunities" => {
            check_keys(
                obj,
                p,
                &["kind", "times_ms", "period_ms", "bytes_per_opportunity", "loop"],
            )?;
            let looped = get_bool(obj, p, "loop", true)?;
            let kt = join(p, "times_ms");
            let arr = required(obj, p, "times_ms")?.as_array().ok_or_else(|| ConfigError {
                key: kt.clone(),
                msg: "must be a list of times in ms".into(),
            })?;
            if arr.is_empty() {
                return err(&kt, "must not be empty");
            }
            let mut times_ns = Vec::with_capacity(arr.len());
            for (i, t) in arr.iter().enumerate() {
                let ki = format!("{kt}[{i}]");
                let Some(x) = t.as_f64().filter(|x| x.is_finite() && *x >= 0.0) else {
                    return err(&ki, format!("must be a time in ms >= 0, got {t}"));
                };
                let t_ns = ms_to_ns(x);
                if times_ns.last().is_some_and(|&prev| t_ns < prev) {
                    return err(&ki, "times_ms must be non-decreasing");
                }
                times_ns.push(t_ns);
            }
            let kper = join(p, "period_ms");
            let period_ns = ms_to_ns(get_num(obj, p, "period_ms")?.ok_or_else(|| missing(&kper))?);
            // Mahimahi's own rule: the period is the last timestamp, so an opportunity may sit
            // at the period itself (the same instant as the next loop's start)
            if period_ns == 0 || times_ns.last().is_some_and(|&t| t > period_ns) {
                return err(&kper, "must be > 0 and at least every times_ms entry");
            }
            let kb = join(p, "bytes_per_opportunity");
            let bytes_per_opportunity =
                get_uint(obj, p, "bytes_per_opportunity")?.ok_or_else(|| missing(&kb))?;
            if bytes_per_opportunity == 0 {
                return err(&kb, "must be > 0");
            }
            Ok(RateConfig::Opportunities {
                times_ns,
                period_ns,
                bytes_per_opportunity,
                looped,
            })
        }
        "policer" => {
            check_keys(obj, p, &["kind", "rate_bps", "burst_bytes"])?;
            let k = join(p, "rate_bps");
            let x = get_num(obj, p, "rate_bps")?.ok_or_else(|| missing(&k))?;
            let rate_bps = positive_rate(x, &k)?;
            let kb = join(p, "burst_bytes");
            let burst_bytes = get_uint(obj, p, "burst_bytes")?.ok_or_else(|| missing(&kb))?;
            if burst_bytes == 0 {
                return err(&kb, "must be > 0");
            }
            Ok(RateConfig::Policer {
                rate_bps,
                burst_bytes,
            })
        }
        other => err(
            &join(p, "kind"),
            format!("unknown rate kind {other:?} (allowed: constant, unlimited, schedule, opportunities, policer)"),
        ),
    }
}

fn parse_loss(v: &Value, p: &str) -> Result<LossConfig, ConfigError> {
    let obj = as_object(v, p)?;
    match kind(obj, p)? {
        "none" => {
            check_keys(obj, p, &["kind"])?;
            Ok(LossConfig::None)
        }
        "iid" => {
            check_keys(obj, p, &["kind", "p"])?;
            Ok(LossConfig::Iid {
                p: get_prob(obj, p, "p")?,
            })
        }
        "gilbert_elliott" => {
            check_keys(obj, p, &["kind", "p", "r", "h", "k"])?;
            Ok(LossConfig::GilbertElliott {
                p: get_prob(obj, p, "p")?,
                r: get_prob(obj, p, "r")?,
                h: get_prob(obj, p, "h")?,
                k: get_prob(obj, p, "k")?,
            })
        }
        "four_state" => {
            check_keys(obj, p, &["kind", "p13", "p31", "p32", "p23", "p14"])?;
            let l = LossConfig::FourState {
                p13: get_prob(obj, p, "p13")?,
                p31: get_prob(obj, p, "p31")?,
                p32: get_prob(obj, p, "p32")?,
                p23: get_prob(obj, p, "p23")?,
                p14: get_prob(obj, p, "p14")?,
            };
            if let LossConfig::FourState {
                p13, p31, p32, p14, ..
            } = l
            {
                if p13 + p14 > 1.0 + 1e-12 {
                    return err(&join(p, "p13"), "p13 + p14 must not exceed 1");
                }
                if p31 + p32 > 1.0 + 1e-12 {
                    return err(&join(p, "p31"), "p31 + p32 must not exceed 1");
                }
            }
            Ok(l)
        }
        other => err(
            &join(p, "kind"),
            format!(
                "unknown loss kind {other:?} (allowed: none, iid, gilbert_elliott, four_state)"
            ),
        ),
    }
}

fn parse_queue(v: &Value, p: &str) -> Result<QueueConfig, ConfigError> {
    let obj = as_object(v, p)?;
    check_keys(obj, p, &["limit_bytes", "limit_packets", "drop"])?;
    let b = get_uint(obj, p, "limit_bytes")?;
    let n = get_uint(obj, p, "limit_packets")?;
    let limit = match (b, n) {
        (Some(b), None) if b > 0 => QueueLimit::Bytes(b),
        (None, Some(n)) if n > 0 => QueueLimit::Packets(n),
        (Some(_), Some(_)) => {
            return err(
                &join(p, "limit_bytes"),
                "give exactly one of limit_bytes, limit_packets (the other null)",
            )
        }
        (Some(_), None) => return err(&join(p, "limit_bytes"), "must be > 0"),
        (None, Some(_)) => return err(&join(p, "limit_packets"), "must be > 0"),
        (None, None) => {
            return err(
                &join(p, "limit_bytes"),
                "give one of limit_bytes, limit_packets",
            )
        }
    };
    let drop = match obj.get("drop") {
        None | Some(Value::Null) => DropPolicy::Tail,
        Some(Value::String(s)) if s == "tail" => DropPolicy::Tail,
        Some(Value::String(s)) if s == "head" => DropPolicy::Head,
        Some(other) => {
            return err(
                &join(p, "drop"),
                format!("must be \"tail\" or \"head\", got {other}"),
            )
        }
    };
    Ok(QueueConfig { limit, drop })
}
