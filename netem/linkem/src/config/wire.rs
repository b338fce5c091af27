//! The config as it is written (netem/README.md, "The linkem contract"): serde types that
//! mirror the JSON key for key. Unknown keys are refused, and each number's type and range is
//! checked as it is read, so every error carries the path of its key. Rules across keys and
//! the conversion into internal units are `config.rs`'s.

use super::{ConfigError, DropPolicy};
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use serde_path_to_error::Segment;
use std::fmt;
use std::marker::PhantomData;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ConfigSpec {
    pub seed: UInt,
    pub mtu_bytes: Option<UInt>,
    pub a_to_b: Object<DirectionSpec>,
    pub b_to_a: Object<DirectionSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DirectionSpec {
    /// A [`RateSpec`] tagged by `kind`.
    pub rate: Tagged,
    pub delay_us: Option<NonNeg>,
    pub jitter_us: Option<NonNeg>,
    pub jitter_reorder: Option<bool>,
    /// A [`LossSpec`] tagged by `kind`.
    pub loss: Option<Tagged>,
    pub queue: Option<Object<QueueSpec>>,
}

/// `rate` by its `kind`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(super) enum RateSpec {
    Unlimited {},
    Constant {
        rate_bps: NonNeg,
    },
    Schedule {
        /// `[t_ms, rate_bps]` pairs (a pair's length is checked in config.rs: serde's
        /// tuples report a long one as "expected fewer elements").
        points: Vec<Vec<NonNeg>>,
        period_ms: Option<NonNeg>,
        #[serde(rename = "loop")]
        looped: Option<bool>,
    },
    Opportunities {
        times_ms: Vec<NonNeg>,
        period_ms: NonNeg,
        bytes_per_opportunity: UInt,
        #[serde(rename = "loop")]
        looped: Option<bool>,
    },
    Policer {
        rate_bps: NonNeg,
        burst_bytes: UInt,
    },
}

/// `loss` by its `kind`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(super) enum LossSpec {
    None {},
    Iid {
        p: Prob,
    },
    GilbertElliott {
        p: Prob,
        r: Prob,
        h: Prob,
        k: Prob,
    },
    FourState {
        p13: Prob,
        p31: Prob,
        p32: Prob,
        p23: Prob,
        p14: Prob,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct QueueSpec {
    pub limit_bytes: Option<UInt>,
    pub limit_packets: Option<UInt>,
    pub drop: Option<DropPolicy>,
}

/// A JSON object read as `T`: serde's derived structs also take an array (fields by
/// position), which the contract does not allow.
pub(super) struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = T;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(V(PhantomData)).map(Object)
    }
}

/// An object tagged by its `kind` key, read in a second step ([`Tagged::parse`]): serde's own
/// internally tagged enums lose the path of an error inside them (they buffer the object
/// first), so the tag becomes an outer key and the rest is read with its path.
#[derive(Deserialize)]
#[serde(transparent)]
pub(super) struct Tagged(Map<String, Value>);

impl Tagged {
    /// The object at `key` as `T`, an enum of one variant per `kind`.
    pub fn parse<T: DeserializeOwned>(self, key: &str) -> Result<T, ConfigError> {
        let mut map = self.0;
        let kind_key = join(key, "kind");
        let kind = match map.remove("kind") {
            None | Some(Value::Null) => return Err(ConfigError::new(kind_key, "is required")),
            Some(Value::String(s)) => s,
            Some(other) => {
                return Err(ConfigError::new(
                    kind_key,
                    format!("must be a string, got {other}"),
                ))
            }
        };
        let outer = Value::Object(Map::from_iter([(kind, Value::Object(map))]));
        serde_path_to_error::deserialize(outer).map_err(|e| {
            if e.path().iter().next().is_none() {
                // the variant itself: an unknown kind
                ConfigError::new(kind_key, e.inner().to_string())
            } else {
                keyed(key, e)
            }
        })
    }
}

/// `T` from `value`, every error keyed by its path below `key` ("" for the document).
pub(super) fn read<T: DeserializeOwned>(value: Value, key: &str) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(value).map_err(|e| keyed(key, e))
}

/// The error's dotted key (`a_to_b.rate.points[2]`) below `prefix`, and its message. A
/// missing field is reported at the field (serde reports it at the object holding it).
fn keyed(prefix: &str, e: serde_path_to_error::Error<serde_json::Error>) -> ConfigError {
    let mut key = prefix.to_string();
    for seg in e.path().iter() {
        match seg {
            Segment::Map { key: k } => key = join(&key, k),
            Segment::Seq { index } => key.push_str(&format!("[{index}]")),
            Segment::Enum { .. } => {} // the `kind` (see `Tagged`), not a key of the file
            Segment::Unknown => key = join(&key, "?"),
        }
    }
    let msg = e.into_inner().to_string();
    if let Some(field) = missing_field(&msg) {
        return ConfigError::new(join(&key, field), "is required");
    }
    if key.is_empty() {
        key = "(document)".into();
    }
    ConfigError::new(key, msg)
}

/// The field serde's `missing field `X`` message names.
fn missing_field(msg: &str) -> Option<&str> {
    msg.strip_prefix("missing field `")?.split('`').next()
}

pub(super) fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// A finite number ≥ 0.
#[derive(Debug, Clone, Copy)]
pub(super) struct NonNeg(pub f64);

/// A number in 0..=1.
#[derive(Debug, Clone, Copy)]
pub(super) struct Prob(pub f64);

/// An integer ≥ 0; integral floats such as 1500.0 are accepted.
#[derive(Debug, Clone, Copy)]
pub(super) struct UInt(pub u64);

/// Any JSON number, as f64; `.0` is what an error says was expected.
struct AnyNumber(&'static str);

impl<'de> Visitor<'de> for AnyNumber {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }
}

/// A JSON number that passes `ok`; else the error `why`, with the number.
fn number<'de, D: Deserializer<'de>>(
    d: D,
    expecting: &'static str,
    ok: fn(f64) -> bool,
    why: &str,
) -> Result<f64, D::Error> {
    let x = d.deserialize_any(AnyNumber(expecting))?;
    if ok(x) {
        Ok(x)
    } else {
        Err(de::Error::custom(format!("{why}, got {x}")))
    }
}

impl<'de> Deserialize<'de> for NonNeg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        number(
            d,
            "a non-negative number",
            ok,
            "must be a non-negative number",
        )
        .map(NonNeg)
    }
}

impl<'de> Deserialize<'de> for Prob {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let ok = |x: f64| (0.0..=1.0).contains(&x);
        let why = "is a probability and must be in 0..1";
        number(d, "a probability (a number in 0..1)", ok, why).map(Prob)
    }
}

impl<'de> Deserialize<'de> for UInt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = UInt;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-negative integer")
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<UInt, E> {
                Ok(UInt(v))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<UInt, E> {
                u64::try_from(v)
                    .map(UInt)
                    .map_err(|_| E::custom(format!("must be a non-negative integer, got {v}")))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<UInt, E> {
                if v >= 0.0 && v.fract() == 0.0 && v < 1.8e19 {
                    Ok(UInt(v as u64))
                } else {
                    Err(E::custom(format!(
                        "must be a non-negative integer, got {v}"
                    )))
                }
            }
        }
        d.deserialize_any(V)
    }
}
