//! Long-run loss rates and burst lengths of the loss models against their analytical values.

mod common;
use common::*;
use linkem::config::LossConfig;
use linkem::loss::Loss;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

const N: usize = 400_000;

fn pattern(cfg: LossConfig, seed: u64) -> Vec<bool> {
    let mut l = Loss::new(cfg);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..N).map(|_| l.lose(&mut rng)).collect()
}

fn rate(p: &[bool]) -> f64 {
    p.iter().filter(|&&x| x).count() as f64 / p.len() as f64
}

fn mean_burst(p: &[bool]) -> f64 {
    let (mut bursts, mut lost, mut prev) = (0, 0, false);
    for &x in p {
        if x {
            lost += 1;
            if !prev {
                bursts += 1;
            }
        }
        prev = x;
    }
    lost as f64 / bursts as f64
}

#[test]
fn iid_rate() {
    let p = pattern(LossConfig::Iid { p: 0.1 }, 1);
    assert!((rate(&p) - 0.1).abs() < 0.003, "{}", rate(&p));
    assert!((mean_burst(&p) - 1.0 / 0.9).abs() < 0.02);
}

#[test]
fn gilbert_simple_rate_and_burst() {
    let (p, r) = (0.01, 0.3);
    let pat = pattern(
        LossConfig::GilbertElliott {
            p,
            r,
            h: 0.0,
            k: 1.0,
        },
        2,
    );
    let want = p / (p + r);
    assert!(
        (rate(&pat) - want).abs() < 0.1 * want,
        "{} vs {want}",
        rate(&pat)
    );
    assert!(
        (mean_burst(&pat) - 1.0 / r).abs() < 0.1 / r,
        "{}",
        mean_burst(&pat)
    );
}

#[test]
fn gilbert_elliott_general_rate() {
    let (p, r, h, k) = (0.05, 0.2, 0.4, 0.98);
    let pat = pattern(LossConfig::GilbertElliott { p, r, h, k }, 3);
    let pi_b = p / (p + r);
    let want = (1.0 - k) * (1.0 - pi_b) + (1.0 - h) * pi_b;
    assert!(
        (rate(&pat) - want).abs() < 0.05 * want,
        "{} vs {want}",
        rate(&pat)
    );
}

/// Stationary loss rate of netem's 4-state chain (loss = being in state 3 or 4).
fn four_state_analytic(p13: f64, p31: f64, p32: f64, p23: f64, p14: f64) -> f64 {
    let m = [
        [1.0 - p13 - p14, 0.0, p13, p14],
        [0.0, 1.0 - p23, p23, 0.0],
        [p31, p32, 1.0 - p31 - p32, 0.0],
        [1.0, 0.0, 0.0, 0.0],
    ];
    let mut pi = [0.25; 4];
    for _ in 0..20_000 {
        let mut n = [0.0; 4];
        for (i, row) in m.iter().enumerate() {
            for (j, pij) in row.iter().enumerate() {
                n[j] += pi[i] * pij;
            }
        }
        pi = n;
    }
    pi[2] + pi[3]
}

#[test]
fn four_state_rate_and_burst() {
    let (p13, p31, p32, p23, p14) = (0.02, 0.3, 0.2, 0.5, 0.01);
    let pat = pattern(
        LossConfig::FourState {
            p13,
            p31,
            p32,
            p23,
            p14,
        },
        4,
    );
    let want = four_state_analytic(p13, p31, p32, p23, p14);
    assert!(
        (rate(&pat) - want).abs() < 0.05 * want,
        "{} vs {want}",
        rate(&pat)
    );
    // Without state 2 or isolated losses, bursts are geometric with mean 1/p31.
    let simple = pattern(
        LossConfig::FourState {
            p13: 0.01,
            p31: 0.25,
            p32: 0.0,
            p23: 1.0,
            p14: 0.0,
        },
        5,
    );
    assert!(
        (mean_burst(&simple) - 4.0).abs() < 0.3,
        "{}",
        mean_burst(&simple)
    );
}

#[test]
fn same_seed_same_pattern_other_seed_differs() {
    let ge = LossConfig::GilbertElliott {
        p: 0.02,
        r: 0.3,
        h: 0.1,
        k: 0.99,
    };
    assert_eq!(pattern(ge.clone(), 9), pattern(ge.clone(), 9));
    assert_ne!(pattern(ge.clone(), 9), pattern(ge, 10));
}

#[test]
fn loss_applies_after_the_rate_server() {
    // Lost packets still used link capacity: departure times of survivors are unchanged.
    let mut d = direction(
        r#"{"rate": {"kind": "constant", "rate_bps": 8000000}, "loss": {"kind": "iid", "p": 0.5},
        "queue": {"limit_packets": 100}}"#,
    );
    let mut out = Vec::new();
    for i in 0..50 {
        d.enqueue(0, i, 1000, &mut out);
    }
    d.poll(S, &mut out);
    let s = sent(&out);
    assert!(s.len() > 10 && s.len() < 40);
    assert!(s.iter().all(|&(i, at)| at == (i + 1) * MS));
    assert_eq!(d.counters().drops_loss as usize + s.len(), 50);
}

#[test]
fn direction_is_deterministic_per_seed() {
    let run = || {
        let mut d = direction(
            r#"{"rate": {"kind": "unlimited"}, "delay_us": 1000, "jitter_us": 800,
            "loss": {"kind": "iid", "p": 0.2}, "queue": {"limit_packets": 100000}}"#,
        );
        let mut out = Vec::new();
        for i in 0..2000 {
            d.enqueue(i * 50_000, i, 100, &mut out);
        }
        d.poll(10 * S, &mut out);
        sent(&out)
    };
    assert_eq!(run(), run());
}
