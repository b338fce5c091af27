//! `rise-sim`: one predicted run (JSON on stdout) or a grid of them (JSON lines).
//! See endpoints/README.md, "The predictor".

use rise_sim::cc::CcKind;
use rise_sim::metrics::summarize;
use rise_sim::run::Run;
use rise_sim::scenario::{setting, Loss, Params, Scheme, SETTINGS};
use serde_json::json;
use std::process::ExitCode;

const USAGE: &str = "usage: rise-sim [--setting FB-4K-Low|FB-4K-High|5G-FHD-Low] [--scheme pri|nopri|nopri-tail|nopri-head|pri-u|pri-d]
       [--cc cubic|newreno] [--duration-s 30] [--seed 1] [--warmup-s 3]
       [--loss-pct P] [--ge-burst-pkts N] (uplink loss, iid unless a burst length is given)
       [--down-loss-pct P] [--down-ge-burst-pkts N] (downlink loss, e.g. packets lost at the Guest's socket)
       [--queue-bdp F] [--queue-drop tail|head] [--policer-burst-bytes N] (uplink)
       [--buffer-bytes B] [--keyframe-factor K] [--speed-deg-s S] [--rx-cost-us C]
       [--grid] [--loss-list a,b,..] [--queue-list a,b,..] [--schemes a,b,..] [--reps N]";

fn fail(msg: String) -> ExitCode {
    eprintln!("rise-sim: {msg}\n{USAGE}");
    ExitCode::from(2)
}

fn num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{key}: cannot parse {v:?} as a number"))
}

fn list(key: &str, v: &str) -> Result<Vec<f64>, String> {
    v.split(',').map(|x| num(key, x.trim())).collect()
}

struct Grid {
    loss: Vec<f64>,
    queue: Vec<f64>,
    schemes: Vec<Scheme>,
    reps: u64,
}

fn parse(args: &[String]) -> Result<(Params, Option<Grid>, Option<f64>), String> {
    let mut p = Params::default();
    let mut grid = None::<Grid>;
    let mut is_grid = false;
    let (mut loss_list, mut queue_list) = (None, None);
    let mut schemes = None;
    let mut reps = 1;
    let mut loss_pct = 0.0;
    let mut burst = None;
    let mut down_loss_pct = 0.0;
    let mut down_burst = None;
    let mut i = 0;
    while i < args.len() {
        let key = args[i].as_str();
        if key == "--grid" {
            is_grid = true;
            i += 1;
            continue;
        }
        if key == "--help" || key == "-h" {
            return Err("help".into());
        }
        let v = args
            .get(i + 1)
            .ok_or_else(|| format!("{key} needs a value"))?
            .as_str();
        match key {
            "--setting" => {
                p.setting = setting(v).ok_or_else(|| {
                    let names: Vec<_> = SETTINGS.iter().map(|s| s.name).collect();
                    format!("--setting {v:?}: allowed {}", names.join(", "))
                })?
            }
            "--scheme" => {
                p.scheme = Scheme::parse(v).ok_or_else(|| format!("--scheme {v:?} unknown"))?
            }
            "--cc" => {
                p.cc = match v {
                    "cubic" => CcKind::Cubic,
                    "newreno" => CcKind::NewReno,
                    _ => return Err(format!("--cc {v:?}: allowed cubic, newreno")),
                }
            }
            "--duration-s" => p.duration_s = num(key, v)?,
            "--seed" => p.seed = num(key, v)?,
            "--warmup-s" => p.warmup_s = num(key, v)?,
            "--loss-pct" => loss_pct = num(key, v)?,
            "--ge-burst-pkts" => burst = Some(num::<f64>(key, v)?),
            "--down-loss-pct" => down_loss_pct = num(key, v)?,
            "--down-ge-burst-pkts" => down_burst = Some(num::<f64>(key, v)?),
            "--queue-bdp" => p.up_queue_bdp = num(key, v)?,
            "--queue-drop" => {
                p.up_queue_drop_head = match v {
                    "tail" => false,
                    "head" => true,
                    _ => return Err(format!("--queue-drop {v:?}: allowed tail, head")),
                }
            }
            "--policer-burst-bytes" => p.up_policer_burst_bytes = Some(num(key, v)?),
            "--buffer-bytes" => p.buffer_bytes = num(key, v)?,
            "--keyframe-factor" => p.keyframe_factor = num(key, v)?,
            "--speed-deg-s" => p.speed_deg_s = num(key, v)?,
            "--rx-cost-us" => p.rx_cost_us = num(key, v)?,
            "--loss-list" => loss_list = Some(list(key, v)?),
            "--queue-list" => queue_list = Some(list(key, v)?),
            "--schemes" => {
                schemes = Some(
                    v.split(',')
                        .map(|s| Scheme::parse(s.trim()).ok_or(format!("--schemes: {s:?} unknown")))
                        .collect::<Result<Vec<_>, _>>()?,
                )
            }
            "--reps" => reps = num(key, v)?,
            _ => return Err(format!("unknown argument {key}")),
        }
        i += 2;
    }
    for (key, pct) in [("--loss-pct", loss_pct), ("--down-loss-pct", down_loss_pct)] {
        if !(0.0..100.0).contains(&pct) {
            return Err(format!("{key} {pct}: allowed 0 <= p < 100"));
        }
    }
    if p.duration_s <= p.warmup_s || p.warmup_s < 0.0 {
        return Err("--duration-s must exceed --warmup-s >= 0".into());
    }
    if !(0.0..=10_000.0).contains(&p.rx_cost_us) {
        return Err("--rx-cost-us: allowed 0..=10000".into());
    }
    if p.up_queue_bdp.is_nan() || p.up_queue_bdp <= 0.0 {
        return Err("--queue-bdp: allowed > 0".into());
    }
    if !(1.0..=9.0).contains(&p.keyframe_factor) {
        return Err("--keyframe-factor: allowed 1..=9".into());
    }
    for (key, b) in [
        ("--ge-burst-pkts", burst),
        ("--down-ge-burst-pkts", down_burst),
    ] {
        if b.is_some_and(|b| b.is_nan() || b < 1.0) {
            return Err(format!("{key}: allowed >= 1"));
        }
    }
    p.up_loss = Loss::from_pct(loss_pct, burst);
    p.down_loss = Loss::from_pct(down_loss_pct, down_burst);
    if is_grid {
        grid = Some(Grid {
            loss: loss_list.unwrap_or_else(|| vec![0.0, 0.02, 0.05, 0.1, 0.2, 0.5]),
            queue: queue_list.unwrap_or_else(|| vec![0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0]),
            schemes: schemes
                .unwrap_or_else(|| vec![Scheme::Pri, Scheme::NoPriTail, Scheme::NoPriHead]),
            reps,
        });
    }
    Ok((p, grid, burst))
}

fn one(p: &Params) -> serde_json::Value {
    let mut run = Run::new(p.run_config());
    run.run();
    let m = summarize(&run, p.warmup_s);
    let describe = |loss: &Loss| match *loss {
        Loss::None => ("none", 0.0, None),
        Loss::Iid { pct } => ("iid", pct, None),
        Loss::GeMean { pct, burst_pkts } => ("gilbert_elliott_mean", pct, Some(burst_pkts)),
    };
    let (loss_model, loss_pct, burst) = describe(&p.up_loss);
    let (down_model, down_pct, down_burst) = describe(&p.down_loss);
    json!({
        "setting": p.setting.name,
        "scheme": p.scheme.as_str(),
        "cc": p.cc.as_str(),
        "seed": p.seed,
        "duration_s": p.duration_s,
        "up_loss_model": loss_model,
        "up_loss_pct": loss_pct,
        "up_ge_burst_pkts": burst,
        "down_loss_model": down_model,
        "down_loss_pct": down_pct,
        "down_ge_burst_pkts": down_burst,
        "up_queue_bdp": p.up_queue_bdp,
        "up_queue_drop": if p.up_queue_drop_head { "head" } else { "tail" },
        "up_policer_burst_bytes": p.up_policer_burst_bytes,
        "buffer_bytes": p.buffer_bytes,
        "keyframe_factor": p.keyframe_factor,
        "rx_cost_us": p.rx_cost_us,
        "metrics": m,
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (p, grid, burst) = match parse(&args) {
        Ok(x) => x,
        Err(e) if e == "help" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => return fail(e),
    };
    match grid {
        None => println!("{}", serde_json::to_string_pretty(&one(&p)).expect("json")),
        Some(g) => {
            for &loss in &g.loss {
                for &q in &g.queue {
                    for &s in &g.schemes {
                        for rep in 0..g.reps {
                            let mut q_p = p.clone();
                            q_p.scheme = s;
                            q_p.up_queue_bdp = q;
                            q_p.seed = p.seed + rep;
                            q_p.up_loss = Loss::from_pct(loss, burst);
                            println!("{}", one(&q_p));
                        }
                    }
                }
            }
        }
    }
    ExitCode::SUCCESS
}
