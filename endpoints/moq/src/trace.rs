//! The GoP frame trace (traces/README.md, "GoP CSV": header
//! `frame_type,size_bytes,pict_type,pts_ms,dts_ms,refs`, rows in decode order) and the live
//! release schedule built from it.
//!
//! Live: frame k of the run is the clip's frame `k mod n` in decode order, loop `k div n`;
//! it is *captured* at `loop·period + pts` (period = the clip's presentation span plus one
//! frame interval) and *released* in decode order as soon as it can be encoded, i.e. at the
//! latest capture time of the frames up to it in decode order (a P frame shown after two B
//! frames is released at its own capture time; the B frames right after it, also then). The
//! group (GoP) sequence number counts I frames from 0.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::Pict;

const HEADER: &str = "frame_type,size_bytes,pict_type,pts_ms,dts_ms,refs";

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipFrame {
    pub pict: Pict,
    pub size_bytes: u32,
    pub pts_ms: f64,
}

/// Parses the GoP CSV text; errors name `origin` and the line.
pub fn parse_clip(text: &str, origin: &str) -> Result<Vec<ClipFrame>> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let Some((n, head)) = lines.next() else {
        bail!("{origin}: empty file");
    };
    if head.replace(' ', "") != HEADER {
        bail!("{origin}, line {n}: header {head:?}; allowed exactly {HEADER}");
    }
    let mut out = Vec::new();
    for (n, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 6 {
            bail!("{origin}, line {n}: {} fields, allowed 6", f.len());
        }
        let pict = match f[2] {
            "I" => Pict::I,
            "P" => Pict::P,
            "B" => Pict::B,
            x => bail!("{origin}, line {n}: pict_type {x:?}; allowed I, P or B"),
        };
        let size_bytes: u32 =
            f[1].parse().ok().filter(|&s| s >= 1).with_context(|| {
                format!("{origin}, line {n}: size_bytes {:?}; allowed >= 1", f[1])
            })?;
        let pts_ms: f64 = f[3]
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .with_context(|| format!("{origin}, line {n}: pts_ms {:?}; allowed >= 0", f[3]))?;
        out.push(ClipFrame {
            pict,
            size_bytes,
            pts_ms,
        });
    }
    if out.is_empty() {
        bail!("{origin}: no rows after the header");
    }
    if out[0].pict != Pict::I {
        bail!("{origin}: the first frame (decode order) must be an I frame, to loop the clip");
    }
    Ok(out)
}

pub fn read_clip(path: &Path) -> Result<Vec<ClipFrame>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse_clip(&text, &path.display().to_string())
}

/// One frame of the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Release {
    /// Decode-order index in the run (0, 1, 2, ...).
    pub frame_id: u64,
    /// Row of the clip it replays.
    pub clip_index: usize,
    pub pict: Pict,
    pub size_bytes: u32,
    pub group: u64,
    /// Since the start of the stream, µs.
    pub capture_us: u64,
    pub release_us: u64,
}

/// The clip's frame interval (median gap between sorted presentation times) and period.
pub fn clip_period_us(clip: &[ClipFrame]) -> (u64, u64) {
    let mut pts: Vec<f64> = clip.iter().map(|f| f.pts_ms).collect();
    pts.sort_by(f64::total_cmp);
    let mut gaps: Vec<f64> = pts.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_by(f64::total_cmp);
    let interval_ms = gaps.get(gaps.len() / 2).copied().unwrap_or(40.0);
    let interval_us = (interval_ms * 1000.0).round() as u64;
    let span_us = (pts[pts.len() - 1] * 1000.0).round() as u64;
    (interval_us, span_us + interval_us)
}

/// Every frame captured in `[0, duration_us)`, looping the clip, in decode (= release) order.
pub fn schedule(clip: &[ClipFrame], duration_us: u64) -> Vec<Release> {
    let (_, period_us) = clip_period_us(clip);
    let mut out = Vec::new();
    let mut latest_capture = 0u64;
    let mut group = 0u64;
    for k in 0u64.. {
        let base = k * period_us;
        if base >= duration_us {
            break;
        }
        for (j, f) in clip.iter().enumerate() {
            let capture_us = base + (f.pts_ms * 1000.0).round() as u64;
            if f.pict == Pict::I && !(k == 0 && j == 0) {
                group += 1;
            }
            latest_capture = latest_capture.max(capture_us);
            out.push(Release {
                frame_id: out.len() as u64,
                clip_index: j,
                pict: f.pict,
                size_bytes: f.size_bytes,
                group,
                capture_us,
                release_us: latest_capture,
            });
        }
    }
    // Cut at the first frame captured at or after the end: the B frames after it in decode
    // order need it (their future reference), and everything later is captured later still.
    if let Some(cut) = out.iter().position(|r| r.capture_us >= duration_us) {
        out.truncate(cut);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIP: &str = "frame_type,size_bytes,pict_type,pts_ms,dts_ms,refs\n\
        key,9000,I,0,-40,\ndelta,3000,P,120,0,0\ndelta,1000,B,40,40,0;1\n\
        delta,1100,B,80,80,0;1\ndelta,3100,P,160,120,1\n";

    #[test]
    fn parses_and_checks() {
        let c = parse_clip(CLIP, "c.csv").unwrap();
        assert_eq!(c.len(), 5);
        assert_eq!(c[2].pict, Pict::B);
        assert_eq!(c[4].pts_ms, 160.0);
        assert_eq!(clip_period_us(&c), (40_000, 200_000));
        let bad = CLIP.replace("delta,1000,B", "delta,0,B");
        let e = parse_clip(&bad, "c.csv").unwrap_err().to_string();
        assert!(
            e.contains("c.csv, line 4") && e.contains("size_bytes"),
            "{e}"
        );
        let e = parse_clip("x,y\n", "c.csv").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("header"), "{e}");
        let e = parse_clip(&CLIP.replace("key,9000,I", "delta,9000,P"), "c.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("first frame"), "{e}");
    }

    #[test]
    fn releases_in_decode_order_at_the_latest_capture_so_far() {
        let c = parse_clip(CLIP, "c").unwrap();
        let s = schedule(&c, 400_000);
        let got: Vec<(u64, u64, u64, Pict)> = s
            .iter()
            .map(|r| (r.capture_us / 1000, r.release_us / 1000, r.group, r.pict))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 0, 0, Pict::I),
                (120, 120, 0, Pict::P),
                (40, 120, 0, Pict::B),
                (80, 120, 0, Pict::B),
                (160, 160, 0, Pict::P),
                (200, 200, 1, Pict::I),
                (320, 320, 1, Pict::P),
                (240, 320, 1, Pict::B),
                (280, 320, 1, Pict::B),
                (360, 360, 1, Pict::P),
            ]
        );
        assert!(s.iter().enumerate().all(|(i, r)| r.frame_id == i as u64));
        assert_eq!(s[7].clip_index, 2);
    }

    #[test]
    fn cut_at_the_duration_without_dangling_b_frames() {
        let c = parse_clip(CLIP, "c").unwrap();
        // 130 ms: I(0), P(120), B(40), B(80) are captured; P(160) is not.
        let s = schedule(&c, 130_000);
        assert_eq!(s.len(), 4);
        // 100 ms: P(120) is not captured, so the B frames that need it go too.
        let s = schedule(&c, 100_000);
        assert_eq!(s.len(), 1);
    }
}
