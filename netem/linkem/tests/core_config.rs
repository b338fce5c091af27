//! Config parsing: defaults, units, and errors that name the key.

use linkem::config::*;

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
    assert_eq!(key_of(r#"{"a_to_b": {}, "b_to_a": {}}"#), "seed");
    assert_eq!(key_of("{not json"), "(document)");
    let e = parse_config(&base(
        r#"{"rate": {"kind": "unlimited"}, "queue": {"limit_packets": 0}}"#,
    ))
    .unwrap_err();
    assert!(e.to_string().contains("a_to_b.queue.limit_packets"), "{e}");
}
