//! Config parsing: defaults, units, errors that name the key and what is allowed, and every
//! config shape the Python side writes read back value for value.

use linkem::config::*;
use serde_json::{json, Value};

fn base(dir: &str) -> String {
    format!(
        r#"{{"seed": 42, "mtu_bytes": 1500, "a_to_b": {dir}, "b_to_a": {{"rate": {{"kind": "unlimited"}}, "queue": {{"limit_packets": 10}}}}}}"#
    )
}

fn key_of(doc: &str) -> String {
    parse_config(doc).expect_err("should fail").key
}

#[test]
fn contract_example_parses() {
    let dir = r#"{"rate": {"kind": "constant", "rate_bps": 70000000}, "delay_us": 10500, "jitter_us": 0,
        "jitter_reorder": false, "loss": {"kind": "gilbert_elliott", "p": 0.01, "r": 0.3, "h": 0.0, "k": 1.0},
        "queue": {"limit_bytes": 131250, "limit_packets": null, "drop": "tail"}}"#;
    let c = parse_config(&base(dir)).unwrap();
    assert_eq!(c.seed, 42);
    assert_eq!(
        c.a_to_b.rate,
        RateConfig::Constant {
            rate_bps: 70_000_000
        }
    );
    assert_eq!(c.a_to_b.delay_ns, 10_500_000);
    assert_eq!(c.a_to_b.queue.unwrap().limit, QueueLimit::Bytes(131250));
    let sched = r#"{"rate": {"kind": "schedule", "points": [[0, 70000000], [1000, 50000000]], "period_ms": 2000, "loop": true},
        "queue": {"limit_packets": 5, "drop": "head"}}"#;
    let c = parse_config(&base(sched)).unwrap();
    assert_eq!(c.a_to_b.queue.unwrap().drop, DropPolicy::Head);
    let opp = r#"{"rate": {"kind": "opportunities", "times_ms": [0, 0, 1, 3], "period_ms": 4, "bytes_per_opportunity": 1500, "loop": true},
        "loss": {"kind": "four_state", "p13": 0.01, "p31": 0.3, "p32": 0.0, "p23": 1.0, "p14": 0.0}, "queue": {"limit_packets": 5}}"#;
    assert!(parse_config(&base(opp)).is_ok());
    let pol = r#"{"rate": {"kind": "policer", "rate_bps": 20000000, "burst_bytes": 25000}}"#;
    let c = parse_config(&base(pol)).unwrap();
    assert_eq!(
        c.a_to_b.rate,
        RateConfig::Policer {
            rate_bps: 20_000_000,
            burst_bytes: 25_000
        }
    );
    assert_eq!(c.a_to_b.queue, None);
    let pol_null_queue =
        r#"{"rate": {"kind": "policer", "rate_bps": 2e7, "burst_bytes": 1514}, "queue": null}"#;
    assert_eq!(
        parse_config(&base(pol_null_queue)).unwrap().a_to_b.queue,
        None
    );
}

#[test]
fn errors_name_the_key() {
    let q = r#""queue": {"limit_packets": 10}"#;
    let cases = [
        (format!(r#"{{"rate": {{"kind": "constant", "rate_bps": 1e6}}, "loss": {{"kind": "iid", "p": 1.5}}, {q}}}"#), "a_to_b.loss.p"),
        (format!(r#"{{"rate": {{"kind": "constant"}}, {q}}}"#), "a_to_b.rate.rate_bps"),
        (format!(r#"{{"rate": {{"kind": "warp"}}, {q}}}"#), "a_to_b.rate.kind"),
        (format!(r#"{{"rate": {{"kind": "unlimited"}}, "delay_ms": 3, {q}}}"#), "a_to_b.delay_ms"),
        (format!(r#"{{"rate": {{"kind": "unlimited"}}, "delay_us": -3, {q}}}"#), "a_to_b.delay_us"),
        (r#"{"rate": {"kind": "unlimited"}}"#.to_string(), "a_to_b.queue"),
        (r#"{"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 3, "limit_bytes": 3000}}"#.to_string(), "a_to_b.queue.limit_bytes"),
        (r#"{"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 3, "drop": "middle"}}"#.to_string(), "a_to_b.queue.drop"),
        (format!(r#"{{"rate": {{"kind": "schedule", "points": [[0, 1e6], [500, 2e6]], "period_ms": 400}}, {q}}}"#), "a_to_b.rate.period_ms"),
        (format!(r#"{{"rate": {{"kind": "schedule", "points": [[10, 1e6]], "period_ms": 400}}, {q}}}"#), "a_to_b.rate.points[0]"),
        (format!(r#"{{"rate": {{"kind": "opportunities", "times_ms": [3, 1], "period_ms": 4, "bytes_per_opportunity": 1500}}, {q}}}"#), "a_to_b.rate.times_ms[1]"),
        (format!(r#"{{"rate": {{"kind": "opportunities", "times_ms": [1, 5], "period_ms": 4, "bytes_per_opportunity": 1500}}, {q}}}"#), "a_to_b.rate.period_ms"),
        (format!(r#"{{"rate": {{"kind": "policer", "rate_bps": 1e6, "burst_bytes": 3000}}, {q}}}"#), "a_to_b.queue"),
        (r#"{"rate": {"kind": "policer", "rate_bps": 1e6}}"#.to_string(), "a_to_b.rate.burst_bytes"),
        (r#"{"rate": {"kind": "policer", "rate_bps": 1e6, "burst_bytes": 1513}}"#.to_string(), "a_to_b.rate.burst_bytes"),
        (r#"{"rate": {"kind": "policer", "burst_bytes": 3000}}"#.to_string(), "a_to_b.rate.rate_bps"),
        (r#"{"rate": {"kind": "policer", "rate_bps": 1e6, "burst_bytes": 3000, "queue_bytes": 1}}"#.to_string(), "a_to_b.rate.queue_bytes"),
        (format!(r#"{{"rate": {{"kind": "unlimited"}}, "loss": {{"kind": "four_state", "p13": 0.6, "p31": 0.3, "p32": 0.0, "p23": 1.0, "p14": 0.5}}, {q}}}"#), "a_to_b.loss.p13"),
    ];
    for (dir, key) in cases {
        assert_eq!(key_of(&base(&dir)), key, "{dir}");
    }
    let unlimited = r#"{"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 1}}"#;
    assert_eq!(
        key_of(&format!(
            r#"{{"a_to_b": {unlimited}, "b_to_a": {unlimited}}}"#
        )),
        "seed"
    );
    assert_eq!(key_of("{not json"), "(document)");
    let e = parse_config(&base(
        r#"{"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 0}}"#,
    ))
    .unwrap_err();
    assert!(e.to_string().contains("a_to_b.queue.limit_packets"), "{e}");
}

/// The whole message of the error `doc` gives.
fn error_of(doc: &str) -> String {
    parse_config(doc).expect_err("should fail").to_string()
}

/// One direction with `rest` beside a valid constant rate and queue.
fn dir_with(rest: &str) -> String {
    base(&format!(
        r#"{{"rate": {{"kind": "constant", "rate_bps": 1e6}}, "queue": {{"limit_packets": 10}}{rest}}}"#
    ))
}

#[test]
fn an_unknown_key_is_named_with_the_keys_allowed_there() {
    assert_eq!(
        error_of(&dir_with(r#", "delay_ms": 3"#)),
        "config key `a_to_b.delay_ms`: unknown field `delay_ms`, expected one of `rate`, \
         `delay_us`, `jitter_us`, `jitter_reorder`, `loss`, `queue`"
    );
    assert_eq!(
        error_of(&base(
            r#"{"rate": {"kind": "policer", "rate_bps": 1e6, "burst_bytes": 3000, "queue_bytes": 1}}"#
        )),
        "config key `a_to_b.rate.queue_bytes`: unknown field `queue_bytes`, expected \
         `rate_bps` or `burst_bytes`"
    );
    assert_eq!(
        error_of(&dir_with(
            r#", "loss": {"kind": "iid", "p": 0.1, "r": 0.2}"#
        )),
        "config key `a_to_b.loss.r`: unknown field `r`, expected `p`"
    );
    assert_eq!(
        error_of(&dir_with(r#", "loss": {"kind": "bursty"}"#)),
        "config key `a_to_b.loss.kind`: unknown variant `bursty`, expected one of `none`, \
         `iid`, `gilbert_elliott`, `four_state`"
    );
    assert_eq!(
        error_of(
            &base(r#"{"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 1}}"#).replacen(
                '{',
                r#"{"c_to_d": {}, "#,
                1
            )
        ),
        "config key `c_to_d`: unknown field `c_to_d`, expected one of `seed`, `mtu_bytes`, \
         `a_to_b`, `b_to_a`"
    );
}

#[test]
fn a_missing_key_is_named_at_its_place() {
    assert_eq!(
        error_of(&base(
            r#"{"rate": {"kind": "constant"}, "queue": {"limit_packets": 1}}"#
        )),
        "config key `a_to_b.rate.rate_bps`: is required"
    );
    assert_eq!(
        error_of(&base(
            r#"{"rate": {"rate_bps": 5}, "queue": {"limit_packets": 1}}"#
        )),
        "config key `a_to_b.rate.kind`: is required"
    );
    assert_eq!(
        error_of(&base(r#"{"queue": {"limit_packets": 1}}"#)),
        "config key `a_to_b.rate`: is required"
    );
    assert_eq!(
        error_of(&base(r#"{"rate": {"kind": "unlimited"}}"#)),
        "config key `a_to_b.queue`: is required (every rate kind but \"policer\" has a queue)"
    );
    assert_eq!(
        error_of(&base(
            r#"{"rate": {"kind": "unlimited"}, "queue": {"drop": "head"}}"#
        )),
        "config key `a_to_b.queue.limit_bytes`: give one of limit_bytes, limit_packets"
    );
    assert_eq!(
        error_of(&base(
            r#"{"rate": {"kind": "schedule", "points": [[0, 1e6]]}, "queue": {"limit_packets": 1}}"#
        )),
        "config key `a_to_b.rate.period_ms`: is required when the schedule loops"
    );
}

#[test]
fn a_value_of_the_wrong_type_is_named_with_the_type_expected() {
    let cases = [
        (
            dir_with(r#", "jitter_reorder": 1"#),
            "config key `a_to_b.jitter_reorder`: invalid type: integer `1`, expected a boolean",
        ),
        (
            base(
                r#"{"rate": {"kind": "constant", "rate_bps": "fast"}, "queue": {"limit_packets": 1}}"#,
            ),
            "config key `a_to_b.rate.rate_bps`: invalid type: string \"fast\", expected a \
             non-negative number",
        ),
        (
            base(
                r#"{"rate": {"kind": "schedule", "points": [[0, 1e6], [5, 2e6, 3]], "period_ms": 10},
                    "queue": {"limit_packets": 1}}"#,
            ),
            "config key `a_to_b.rate.points[1]`: must be a pair [t_ms, rate_bps], got 3 numbers",
        ),
        (
            base(
                r#"{"rate": {"kind": "schedule", "points": [[0, 1e6], [5, null]], "period_ms": 10},
                    "queue": {"limit_packets": 1}}"#,
            ),
            "config key `a_to_b.rate.points[1][1]`: invalid type: null, expected a \
             non-negative number",
        ),
        (
            dir_with(r#", "loss": {"kind": 3}"#),
            "config key `a_to_b.loss.kind`: must be a string, got 3",
        ),
        (
            base(r#"{"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 2.5}}"#),
            "config key `a_to_b.queue.limit_packets`: must be a non-negative integer, got 2.5",
        ),
        (
            base(r#"{"rate": {"kind": "unlimited"}, "queue": [null, 3, "tail"]}"#),
            "config key `a_to_b.queue`: invalid type: sequence, expected a JSON object",
        ),
        (
            "[1, 2]".to_string(),
            "config key `(document)`: invalid type: sequence, expected a JSON object",
        ),
    ];
    for (doc, want) in cases {
        assert_eq!(error_of(&doc), want, "{doc}");
    }
    // integral floats are integers (Python may write 1500.0)
    let c = parse_config(&base(
        r#"{"rate": {"kind": "unlimited"}, "queue": {"limit_bytes": 3000.0}}"#,
    ))
    .unwrap();
    assert_eq!(c.a_to_b.queue.unwrap().limit, QueueLimit::Bytes(3000));
}

#[test]
fn a_value_out_of_range_is_named_with_the_range() {
    let cases = [
        (
            dir_with(r#", "loss": {"kind": "gilbert_elliott", "p": 0.1, "r": 1.5, "h": 0, "k": 1}"#),
            "config key `a_to_b.loss.r`: is a probability and must be in 0..1, got 1.5",
        ),
        (
            dir_with(r#", "delay_us": -3"#),
            "config key `a_to_b.delay_us`: must be a non-negative number, got -3",
        ),
        (
            dir_with(r#", "jitter_us": 4e12"#),
            "config key `a_to_b.delay_us`: delay_us and jitter_us must be below one hour",
        ),
        (
            base(r#"{"rate": {"kind": "constant", "rate_bps": 0.2}, "queue": {"limit_packets": 1}}"#),
            "config key `a_to_b.rate.rate_bps`: must be a rate in 1..=1e12 bit/s, got 0.2",
        ),
        (
            base(r#"{"rate": {"kind": "schedule", "points": [[0, 2e12]], "period_ms": 10},
                    "queue": {"limit_packets": 1}}"#),
            "config key `a_to_b.rate.points[0][1]`: rate_bps must be at most 1e12, got 2000000000000",
        ),
        (
            base(r#"{"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 0}}"#),
            "config key `a_to_b.queue.limit_packets`: must be > 0",
        ),
        (
            base(r#"{"rate": {"kind": "opportunities", "times_ms": [0, 1], "period_ms": 2,
                    "bytes_per_opportunity": 0}, "queue": {"limit_packets": 1}}"#),
            "config key `a_to_b.rate.bytes_per_opportunity`: must be > 0",
        ),
        (
            r#"{"seed": 1, "mtu_bytes": 50, "a_to_b": {"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 1}},
                "b_to_a": {"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 1}}}"#
                .to_string(),
            "config key `mtu_bytes`: must be in 68..=65535, got 50",
        ),
        (
            base(r#"{"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 1}}"#)
                .replace(r#""seed": 42"#, r#""seed": -1"#),
            "config key `seed`: must be a non-negative integer, got -1",
        ),
    ];
    for (doc, want) in cases {
        assert_eq!(error_of(&doc), want, "{doc}");
    }
}

/// A parsed config written back in the contract's form, every key the Python side writes
/// (netem/linkem_config.py), in the contract's units.
fn contract_json(c: &Config) -> Value {
    let ms = |ns: u64| ns as f64 / 1e6;
    let dir = |d: &DirectionConfig| {
        let rate = match &d.rate {
            RateConfig::Unlimited => json!({"kind": "unlimited"}),
            RateConfig::Constant { rate_bps } => json!({"kind": "constant", "rate_bps": rate_bps}),
            RateConfig::Schedule {
                points,
                period_ns,
                looped,
            } => json!({"kind": "schedule",
                "points": points.iter().map(|&(t, r)| json!([ms(t), r])).collect::<Vec<_>>(),
                "period_ms": ms(*period_ns), "loop": looped}),
            RateConfig::Opportunities {
                times_ns,
                period_ns,
                bytes_per_opportunity,
                looped,
            } => json!({"kind": "opportunities",
                "times_ms": times_ns.iter().map(|&t| ms(t)).collect::<Vec<_>>(),
                "period_ms": ms(*period_ns), "bytes_per_opportunity": bytes_per_opportunity,
                "loop": looped}),
            RateConfig::Policer {
                rate_bps,
                burst_bytes,
            } => json!({"kind": "policer", "rate_bps": rate_bps, "burst_bytes": burst_bytes}),
        };
        let loss = match d.loss {
            LossConfig::None => json!({"kind": "none"}),
            LossConfig::Iid { p } => json!({"kind": "iid", "p": p}),
            LossConfig::GilbertElliott { p, r, h, k } => {
                json!({"kind": "gilbert_elliott", "p": p, "r": r, "h": h, "k": k})
            }
            LossConfig::FourState {
                p13,
                p31,
                p32,
                p23,
                p14,
            } => json!({"kind": "four_state", "p13": p13, "p31": p31, "p32": p32,
                "p23": p23, "p14": p14}),
        };
        let mut out = json!({"rate": rate, "delay_us": d.delay_ns as f64 / 1e3,
            "jitter_us": d.jitter_ns as f64 / 1e3, "jitter_reorder": d.jitter_reorder,
            "loss": loss});
        if let Some(q) = d.queue {
            let (b, n) = match q.limit {
                QueueLimit::Bytes(b) => (Some(b), None),
                QueueLimit::Packets(n) => (None, Some(n)),
            };
            let drop = match q.drop {
                DropPolicy::Tail => "tail",
                DropPolicy::Head => "head",
            };
            out["queue"] = json!({"limit_bytes": b, "limit_packets": n, "drop": drop});
        }
        out
    };
    json!({"seed": c.seed, "mtu_bytes": c.mtu_bytes, "a_to_b": dir(&c.a_to_b),
        "b_to_a": dir(&c.b_to_a)})
}

/// Equal as JSON, numbers compared by value (2500 == 2500.0).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn every_shape_the_python_side_writes_reads_back_value_for_value() {
    // tests/test_linkem_fixtures.py makes these as a run makes its linkem.json and checks
    // they are what Python writes now
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let cfg = parse_config(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let written: Value = serde_json::from_str(&text).unwrap();
        let back = contract_json(&cfg);
        assert!(
            same(&written, &back),
            "{}:\n{written}\n{back}",
            path.display()
        );
        names.push(path.file_stem().unwrap().to_string_lossy().into_owned());
    }
    names.sort();
    assert_eq!(
        names,
        [
            "constant-bdp-iid",
            "opportunities-head-ge",
            "policer-fourstate-jitter",
            "schedule-led-unlimited"
        ]
    );
}
