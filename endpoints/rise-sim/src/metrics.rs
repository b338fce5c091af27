//! Per-run metrics as the real analysis computes them (analysis/metrics.py: numpy's linear
//! percentiles, libwebrtc freezes over all displayed frames), plus the stall and regime figures
//! of issue 10 (item 1 and 4).

use crate::run::{Run, Side, START_US};
use rise_core::freeze::{FreezeDetector, MIN_INCREASE_US};
use serde_json::{json, Map, Value};

/// numpy.percentile's default (linear) on finite values; None when empty.
pub fn percentile(v: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let pos = (v.len() - 1) as f64 * q / 100.0;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    Some(v[lo] + (v[hi] - v[lo]) * (pos - lo as f64))
}

/// Display gaps of one endpoint within [from_us, to_us], the leading gap (from `from_us` to the
/// first display) and the trailing gap (last display to `to_us`) included.
pub fn gaps_us(displays: &[u64], from_us: u64, to_us: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut last = from_us;
    for &t in displays.iter().filter(|&&t| t >= from_us && t <= to_us) {
        out.push(t - last);
        last = t;
    }
    out.push(to_us.saturating_sub(last));
    out
}

/// Stall time: the sum of display gaps that libwebrtc's freeze rule would call a freeze if the
/// average interval were the nominal one (gap ≥ max(3/fps, 1/fps + 150 ms)). Because the
/// trailing gap counts, a stream that stops displaying stalls until the end of the run.
pub fn stall_us(displays: &[u64], from_us: u64, to_us: u64, fps: u32) -> u64 {
    let t = 1_000_000 / u64::from(fps.max(1));
    let threshold = (3 * t).max(t + MIN_INCREASE_US);
    gaps_us(displays, from_us, to_us)
        .into_iter()
        .filter(|&g| g >= threshold)
        .sum()
}

fn opt(v: Option<f64>) -> Value {
    v.map_or(Value::Null, |x| json!((x * 1000.0).round() / 1000.0))
}

fn endpoint_metrics(s: &Side, duration_ns: u64, warmup_ns: u64) -> Value {
    let c = s.core.counters();
    let mut chans = Map::new();
    for (i, (k, st)) in s.core.channel_stats().into_iter().enumerate() {
        chans.insert(
            k.as_str().to_string(),
            json!({
                "enqueued": st.enqueued,
                "sent": st.sent,
                "dropped_ingress": st.dropped_ingress,
                "evicted": st.evicted,
                "purged": st.purged,
                "dropped_in_quinn": s.conn.stats.quinn_dropped[i],
            }),
        );
    }
    let after: Vec<_> = s
        .trace
        .samples
        .iter()
        .filter(|x| x.0 >= warmup_ns)
        .collect();
    let cwnd: Vec<f64> = after.iter().map(|x| x.1 as f64).collect();
    let pending: Vec<f64> = after.iter().map(|x| x.3 as f64).collect();
    let st = &s.conn.stats;
    let retx_rate = if c.video_datagrams_sent > 0 {
        100.0 * c.video_datagrams_retransmitted as f64 / c.video_datagrams_sent as f64
    } else {
        f64::NAN
    };
    json!({
        "frames_encoded": c.frames_encoded,
        "key_frames": c.key_frames,
        "frames_displayed": c.frames_displayed,
        "deadline_expirations": c.deadline_expirations,
        "video_datagrams_sent": c.video_datagrams_sent,
        "retx_rate_pct": opt(retx_rate.is_finite().then_some(retx_rate)),
        "tracking_sent": c.tracking_sent,
        "tracking_received": c.tracking_received,
        "channels": chans,
        "cwnd_bytes_p50": opt(crate::metrics::percentile(&cwnd, 50.0)),
        "cwnd_bytes_p90": opt(crate::metrics::percentile(&cwnd, 90.0)),
        "b_occupancy_bytes_p50": opt(percentile(&pending, 50.0)),
        "b_occupancy_bytes_p90": opt(percentile(&pending, 90.0)),
        "b_occupancy_bytes_max": opt(pending.iter().copied().reduce(f64::max)),
        "window_limited_frac": st.cwnd_limited_ns as f64 / duration_ns as f64,
        "pacing_limited_frac": st.pacing_limited_ns as f64 / duration_ns as f64,
        "srtt_ms": s.conn.rtt.get() as f64 / 1e6,
        "sent_packets": st.sent_packets,
        "lost_packets": st.lost_packets,
        "congestion_events": st.congestion_events,
        "pto_fired": st.pto_count_total,
    })
}

fn link_metrics(l: &crate::link::Link) -> Value {
    let q: Vec<f64> = l.queue_samples.iter().map(|&x| x as f64).collect();
    json!({
        "offered": l.stats.offered,
        "delivered": l.stats.delivered,
        "dropped_queue": l.stats.dropped_queue,
        "dropped_loss": l.stats.dropped_loss,
        "dropped_policer": l.stats.dropped_policer,
        "queue_bytes_p50": opt(percentile(&q, 50.0)),
        "queue_bytes_max": opt(q.iter().copied().reduce(f64::max)),
    })
}

/// Everything about a finished run, Guest's view first.
pub fn summarize(run: &Run, warmup_s: f64) -> Value {
    let dur_ns = run.cfg.duration_ns;
    let warmup_ns = ((warmup_s * 1e9) as u64).min(dur_ns);
    let from_us = START_US + warmup_ns / 1000;
    let to_us = START_US + dur_ns / 1000;
    let g = &run.guest.trace;
    let times: Vec<u64> = g.displays.iter().map(|d| d.0).collect();
    let mtp_all: Vec<f64> = g.displays.iter().map(|d| d.1.unwrap_or(f64::NAN)).collect();
    let mtp_after: Vec<f64> = g
        .displays
        .iter()
        .filter(|d| d.0 >= from_us)
        .map(|d| d.1.unwrap_or(f64::NAN))
        .collect();
    let mut fd = FreezeDetector::default();
    let (mut freezes, mut freeze_us) = (0u64, 0u64);
    for &t in &times {
        if let Some(i) = fd.on_display(t) {
            freezes += 1;
            freeze_us += i;
        }
    }
    let fps = run.cfg.host.endpoint.fps;
    let shown_after = times.iter().filter(|&&t| t >= from_us).count();
    let window_s = (dur_ns - warmup_ns) as f64 / 1e9;
    let gaps = gaps_us(&times, from_us, to_us);
    json!({
        "warmup_s": warmup_s,
        "guest": {
            "mtp_median_ms": opt(percentile(&mtp_after, 50.0)),
            "mtp_p95_ms": opt(percentile(&mtp_after, 95.0)),
            "mtp_p99_ms": opt(percentile(&mtp_after, 99.0)),
            "mtp_median_ms_all": opt(percentile(&mtp_all, 50.0)),
            "mtp_p99_ms_all": opt(percentile(&mtp_all, 99.0)),
            "frames_displayed": times.len(),
            "displayed_fps": shown_after as f64 / window_s,
            "freeze_count": freezes,
            "freeze_rate_pct": if times.is_empty() { Value::Null } else { json!(100.0 * freezes as f64 / times.len() as f64) },
            "freeze_duration_s": freeze_us as f64 / 1e6,
            "stall_s": stall_us(&times, from_us, to_us, fps) as f64 / 1e6,
            "longest_gap_s": gaps.iter().copied().max().unwrap_or(0) as f64 / 1e6,
            "host_frames_never_displayed": run.host.trace.frames_sent.saturating_sub(times.len() as u64),
        },
        "host": endpoint_metrics(&run.host, dur_ns, warmup_ns),
        "guest_endpoint": endpoint_metrics(&run.guest, dur_ns, warmup_ns),
        "uplink": link_metrics(&run.up),
        "downlink": link_metrics(&run.down),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_is_numpys_linear() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), Some(2.5));
        assert_eq!(percentile(&v, 100.0), Some(4.0));
        assert_eq!(percentile(&[f64::NAN], 50.0), None);
    }

    #[test]
    fn a_stream_that_stops_stalls_until_the_end() {
        // 30 fps for 1 s, then nothing for 9 s
        let d: Vec<u64> = (0..30).map(|i| i * 33_333).collect();
        let s = stall_us(&d, 0, 10_000_000, 30);
        assert_eq!(s, 10_000_000 - 29 * 33_333);
        // steady display: no stall
        let d: Vec<u64> = (0..300).map(|i| i * 33_333).collect();
        assert_eq!(stall_us(&d, 0, 300 * 33_333, 30), 0);
    }
}
