//! The linkem JSON config (see netem/README.md, "The linkem contract"), parsed and validated
//! into internal units (ns, bit/s, bytes). Every error names the offending key: `wire` reads
//! the JSON (serde, key by key), this module checks the rules across keys and converts.

mod wire;

use serde::Deserialize;
use std::fmt;
use wire::{join, ConfigSpec, DirectionSpec, LossSpec, QueueSpec, RateSpec};

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

impl ConfigError {
    fn new(key: impl Into<String>, msg: impl Into<String>) -> ConfigError {
        ConfigError {
            key: key.into(),
            msg: msg.into(),
        }
    }
}

fn err<T>(key: &str, msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError::new(key, msg))
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
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
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| ConfigError::new("(document)", format!("not valid JSON: {e}")))?;
    let spec: ConfigSpec = wire::read::<wire::Object<ConfigSpec>>(value, "")?.0;
    let mtu_bytes = spec.mtu_bytes.map_or(1500, |m| m.0);
    if !(68..=65535).contains(&mtu_bytes) {
        return err(
            "mtu_bytes",
            format!("must be in 68..=65535, got {mtu_bytes}"),
        );
    }
    let a_to_b = direction(spec.a_to_b.0, "a_to_b", mtu_bytes)?;
    let b_to_a = direction(spec.b_to_a.0, "b_to_a", mtu_bytes)?;
    Ok(Config {
        seed: spec.seed.0,
        mtu_bytes,
        a_to_b,
        b_to_a,
    })
}

/// One hour: the longest delay or jitter.
const MAX_DELAY_NS: u64 = 3_600_000_000_000;

fn direction(d: DirectionSpec, p: &str, mtu_bytes: u64) -> Result<DirectionConfig, ConfigError> {
    let rate = rate(d.rate.parse(&join(p, "rate"))?, &join(p, "rate"), mtu_bytes)?;
    let delay_ns = us_to_ns(d.delay_us.map_or(0.0, |x| x.0));
    let jitter_ns = us_to_ns(d.jitter_us.map_or(0.0, |x| x.0));
    if delay_ns > MAX_DELAY_NS || jitter_ns > MAX_DELAY_NS {
        return err(
            &join(p, "delay_us"),
            "delay_us and jitter_us must be below one hour",
        );
    }
    let loss = match d.loss {
        None => LossConfig::None,
        Some(l) => loss(l.parse(&join(p, "loss"))?, &join(p, "loss"))?,
    };
    let queue =
        match (&rate, d.queue) {
            (RateConfig::Policer { .. }, None) => None,
            (RateConfig::Policer { .. }, Some(_)) => return err(
                &join(p, "queue"),
                "a policer has no queue: leave queue out (or null) when rate.kind is \"policer\"",
            ),
            (_, None) => {
                return err(
                    &join(p, "queue"),
                    "is required (every rate kind but \"policer\" has a queue)",
                )
            }
            (_, Some(q)) => Some(queue(q.0, &join(p, "queue"))?),
        };
    Ok(DirectionConfig {
        rate,
        delay_ns,
        jitter_ns,
        jitter_reorder: d.jitter_reorder.unwrap_or(false),
        loss,
        queue,
    })
}

fn us_to_ns(x: f64) -> u64 {
    (x * 1e3).round() as u64
}

fn ms_to_ns(x: f64) -> u64 {
    (x * 1e6).round() as u64
}

/// The highest rate: 1 Tbit/s.
const MAX_RATE_BPS: f64 = 1e12;

fn positive_rate(x: f64, key: &str) -> Result<u64, ConfigError> {
    let r = x.round() as u64;
    if r == 0 || x > MAX_RATE_BPS {
        return err(key, format!("must be a rate in 1..=1e12 bit/s, got {x}"));
    }
    Ok(r)
}

fn rate(r: RateSpec, p: &str, mtu_bytes: u64) -> Result<RateConfig, ConfigError> {
    Ok(match r {
        RateSpec::Unlimited {} => RateConfig::Unlimited,
        RateSpec::Constant { rate_bps } => RateConfig::Constant {
            rate_bps: positive_rate(rate_bps.0, &join(p, "rate_bps"))?,
        },
        RateSpec::Schedule {
            points,
            period_ms,
            looped,
        } => schedule(points, period_ms, looped.unwrap_or(true), p)?,
        RateSpec::Opportunities {
            times_ms,
            period_ms,
            bytes_per_opportunity,
            looped,
        } => {
            let kt = join(p, "times_ms");
            if times_ms.is_empty() {
                return err(&kt, "must not be empty");
            }
            let times_ns: Vec<u64> = times_ms.iter().map(|t| ms_to_ns(t.0)).collect();
            if let Some(i) = (1..times_ns.len()).find(|&i| times_ns[i] < times_ns[i - 1]) {
                return err(&format!("{kt}[{i}]"), "times_ms must be non-decreasing");
            }
            let period_ns = ms_to_ns(period_ms.0);
            // Mahimahi's own rule: the period is the last timestamp, so an opportunity may sit
            // at the period itself (the same instant as the next loop's start)
            if period_ns == 0 || times_ns.last().is_some_and(|&t| t > period_ns) {
                return err(
                    &join(p, "period_ms"),
                    "must be > 0 and at least every times_ms entry",
                );
            }
            if bytes_per_opportunity.0 == 0 {
                return err(&join(p, "bytes_per_opportunity"), "must be > 0");
            }
            RateConfig::Opportunities {
                times_ns,
                period_ns,
                bytes_per_opportunity: bytes_per_opportunity.0,
                looped: looped.unwrap_or(true),
            }
        }
        RateSpec::Policer {
            rate_bps,
            burst_bytes,
        } => {
            let kb = join(p, "burst_bytes");
            let frame = mtu_bytes + 14;
            if burst_bytes.0 < frame {
                return err(
                    &kb,
                    format!(
                        "must be at least one full frame, mtu_bytes + 14 = {frame} \
                         (a smaller bucket never passes a full-size frame), got {}",
                        burst_bytes.0
                    ),
                );
            }
            RateConfig::Policer {
                rate_bps: positive_rate(rate_bps.0, &join(p, "rate_bps"))?,
                burst_bytes: burst_bytes.0,
            }
        }
    })
}

fn schedule(
    points: Vec<Vec<wire::NonNeg>>,
    period_ms: Option<wire::NonNeg>,
    looped: bool,
    p: &str,
) -> Result<RateConfig, ConfigError> {
    let kp = join(p, "points");
    if points.is_empty() {
        return err(&kp, "must not be empty");
    }
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(points.len());
    for (i, point) in points.iter().enumerate() {
        let ki = format!("{kp}[{i}]");
        let [t, r] = point[..] else {
            return err(
                &ki,
                format!(
                    "must be a pair [t_ms, rate_bps], got {} numbers",
                    point.len()
                ),
            );
        };
        if r.0 > MAX_RATE_BPS {
            return err(
                &format!("{ki}[1]"),
                format!("rate_bps must be at most 1e12, got {}", r.0),
            );
        }
        let t_ns = ms_to_ns(t.0);
        if i == 0 && t_ns != 0 {
            return err(&ki, "the first point must start at t_ms = 0");
        }
        if out.last().is_some_and(|&(prev, _)| t_ns <= prev) {
            return err(&ki, "t_ms must be strictly increasing");
        }
        out.push((t_ns, r.0.round() as u64));
    }
    let kper = join(p, "period_ms");
    let period_ns = match period_ms {
        Some(x) => ms_to_ns(x.0),
        None if looped => return err(&kper, "is required when the schedule loops"),
        None => 0,
    };
    let last_t = out.last().map_or(0, |x| x.0);
    if looped {
        if period_ns <= last_t {
            return err(&kper, "must be larger than the last point's t_ms");
        }
        if out.iter().all(|x| x.1 == 0) {
            return err(&kp, "a looped schedule needs at least one rate_bps > 0");
        }
    }
    Ok(RateConfig::Schedule {
        points: out,
        period_ns,
        looped,
    })
}

fn loss(l: LossSpec, p: &str) -> Result<LossConfig, ConfigError> {
    Ok(match l {
        LossSpec::None {} => LossConfig::None,
        LossSpec::Iid { p } => LossConfig::Iid { p: p.0 },
        LossSpec::GilbertElliott { p, r, h, k } => LossConfig::GilbertElliott {
            p: p.0,
            r: r.0,
            h: h.0,
            k: k.0,
        },
        LossSpec::FourState {
            p13,
            p31,
            p32,
            p23,
            p14,
        } => {
            if p13.0 + p14.0 > 1.0 + 1e-12 {
                return err(&join(p, "p13"), "p13 + p14 must not exceed 1");
            }
            if p31.0 + p32.0 > 1.0 + 1e-12 {
                return err(&join(p, "p31"), "p31 + p32 must not exceed 1");
            }
            LossConfig::FourState {
                p13: p13.0,
                p31: p31.0,
                p32: p32.0,
                p23: p23.0,
                p14: p14.0,
            }
        }
    })
}

fn queue(q: QueueSpec, p: &str) -> Result<QueueConfig, ConfigError> {
    let limit = match (q.limit_bytes, q.limit_packets) {
        (Some(b), None) if b.0 > 0 => QueueLimit::Bytes(b.0),
        (None, Some(n)) if n.0 > 0 => QueueLimit::Packets(n.0),
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
    Ok(QueueConfig {
        limit,
        drop: q.drop.unwrap_or(DropPolicy::Tail),
    })
}
