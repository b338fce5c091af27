//! The CSV logs of the contract (endpoints/README.md), through buffered writers.

use std::fmt::Write as _;

use std::path::Path;

use anyhow::{Context, Result};
pub use quicsetup::csv::Csv;
use rise_core::{ChannelCounters, Event, Kind};

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// What `path_stats.csv` records per sample.
#[derive(Debug, Clone, Copy, Default)]
pub struct PathSample {
    pub rtt_ms: f64,
    pub cwnd_bytes: u64,
    pub lost_packets: u64,
    pub sent_packets: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub congestion_events: u64,
}

impl PathSample {
    pub fn from_quinn(conn: &quinn::Connection) -> Self {
        let s = conn.stats();
        PathSample {
            rtt_ms: conn.rtt().as_secs_f64() * 1e3,
            cwnd_bytes: s.path.cwnd,
            lost_packets: s.path.lost_packets,
            sent_packets: s.path.sent_packets,
            bytes_sent: s.udp_tx.bytes,
            bytes_received: s.udp_rx.bytes,
            congestion_events: s.path.congestion_events,
        }
    }
}

pub struct Logs {
    frames_sent: Csv,
    frames_displayed: Csv,
    tracking_sent: Csv,
    tracking_received: Csv,
    channels: Csv,
    path_stats: Csv,
    sender: Csv,
}

impl Logs {
    pub fn create(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Logs {
            frames_sent: Csv::create(
                dir,
                "frames_sent.csv",
                "frame_id,frame_type,size_bytes,frag_cnt,encode_time_us,tracking_sample_id,key_cause",
            )?,
            frames_displayed: Csv::create(
                dir,
                "frames_displayed.csv",
                "frame_id,frame_type,display_time_us,tracking_sample_id,tracking_gen_time_us,mtp_ms",
            )?,
            tracking_sent: Csv::create(
                dir,
                "tracking_sent.csv",
                "sample_id,gen_time_us,yaw_rad,pitch_rad,roll_rad",
            )?,
            tracking_received: Csv::create(
                dir,
                "tracking_received.csv",
                "sample_id,recv_time_us,gen_time_us",
            )?,
            channels: Csv::create(
                dir,
                "channels.csv",
                "time_us,channel,enqueued,sent,dropped_ingress,evicted,retransmitted,bytes_sent",
            )?,
            path_stats: Csv::create(
                dir,
                "path_stats.csv",
                "time_us,rtt_ms,cwnd_bytes,lost_packets,sent_packets,bytes_sent,bytes_received,congestion_events",
            )?,
            sender: Csv::create(
                dir,
                "sender.csv",
                "time_us,queued_bytes_mean,queued_bytes_max,limited_us",
            )?,
        })
    }

    pub fn event(&mut self, ev: &Event) -> Result<()> {
        match ev {
            Event::FrameSent {
                frame_id,
                frame_type,
                size_bytes,
                frag_cnt,
                encode_time_us,
                tracking_sample_id,
                key_cause,
            } => self.frames_sent.line(&format!(
                "{frame_id},{frame_type},{size_bytes},{frag_cnt},{encode_time_us},{tracking_sample_id},{}",
                key_cause.map_or("none", |c| c.as_str())
            )),
            Event::FrameDisplayed {
                frame_id,
                frame_type,
                display_time_us,
                tracking_sample_id,
                tracking_gen_time_us,
                mtp_ms,
                ..
            } => self.frames_displayed.line(&format!(
                "{frame_id},{frame_type},{display_time_us},{tracking_sample_id},{},{}",
                opt(*tracking_gen_time_us),
                opt(mtp_ms.map(|m| format!("{m:.3}")))
            )),
            Event::TrackingSent {
                sample_id,
                gen_time_us,
                yaw_rad,
                pitch_rad,
                roll_rad,
            } => self.tracking_sent.line(&format!(
                "{sample_id},{gen_time_us},{yaw_rad:.6},{pitch_rad:.6},{roll_rad:.6}"
            )),
            Event::TrackingReceived {
                sample_id,
                recv_time_us,
                gen_time_us,
            } => self
                .tracking_received
                .line(&format!("{sample_id},{recv_time_us},{gen_time_us}")),
            // Counted by the core (summary.json `datagrams_malformed`).
            Event::Malformed { .. } => Ok(()),
        }
    }

    pub fn channels(&mut self, now_us: u64, stats: &[(Kind, ChannelCounters)]) -> Result<()> {
        for (k, c) in stats {
            self.channels.line(&format!(
                "{now_us},{},{},{},{},{},{},{}",
                k.as_str(),
                c.enqueued,
                c.sent,
                c.dropped_ingress,
                c.evicted,
                c.retransmitted,
                c.bytes_sent
            ))?;
        }
        Ok(())
    }

    pub fn path(&mut self, now_us: u64, p: &PathSample) -> Result<()> {
        self.path_stats.line(&format!(
            "{now_us},{:.3},{},{},{},{},{},{}",
            p.rtt_ms,
            p.cwnd_bytes,
            p.lost_packets,
            p.sent_packets,
            p.bytes_sent,
            p.bytes_received,
            p.congestion_events
        ))
    }

    pub fn sender(&mut self, s: &crate::regime::SenderSample) -> Result<()> {
        self.sender.line(&format!(
            "{},{},{},{}",
            s.time_us, s.queued_bytes_mean, s.queued_bytes_max, s.limited_us
        ))
    }

    pub fn flush(&mut self) -> Result<()> {
        for c in [
            &mut self.frames_sent,
            &mut self.frames_displayed,
            &mut self.tracking_sent,
            &mut self.tracking_received,
            &mut self.channels,
            &mut self.path_stats,
            &mut self.sender,
        ] {
            c.flush()?;
        }
        Ok(())
    }
}

/// A flat JSON object, written by hand (string, number, bool, nested object values).
#[derive(Default)]
pub struct JsonObject {
    fields: Vec<(String, String)>,
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl JsonObject {
    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        self.fields.push((k.to_string(), json_str(v)));
        self
    }
    pub fn opt_str(&mut self, k: &str, v: Option<&str>) -> &mut Self {
        let v = v.map(json_str).unwrap_or_else(|| "null".to_string());
        self.fields.push((k.to_string(), v));
        self
    }
    pub fn num<T: std::fmt::Display>(&mut self, k: &str, v: T) -> &mut Self {
        self.fields.push((k.to_string(), v.to_string()));
        self
    }
    /// A float; non-finite values become null.
    pub fn float(&mut self, k: &str, v: f64) -> &mut Self {
        let s = if v.is_finite() {
            format!("{v}")
        } else {
            "null".to_string()
        };
        self.fields.push((k.to_string(), s));
        self
    }
    pub fn bool(&mut self, k: &str, v: bool) -> &mut Self {
        self.fields.push((k.to_string(), v.to_string()));
        self
    }
    pub fn obj(&mut self, k: &str, v: &JsonObject) -> &mut Self {
        self.fields.push((k.to_string(), v.render(1)));
        self
    }
    pub fn render(&self, depth: usize) -> String {
        let pad = "  ".repeat(depth + 1);
        let body: Vec<String> = self
            .fields
            .iter()
            .map(|(k, v)| format!("{pad}{}: {v}", json_str(k)))
            .collect();
        format!("{{\n{}\n{}}}", body.join(",\n"), "  ".repeat(depth))
    }
}

/// Writes `text` to `path` atomically.
pub fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_and_nests() {
        let mut inner = JsonObject::default();
        inner.num("n", 3).float("x", f64::NAN);
        let mut o = JsonObject::default();
        o.str("s", "a\"b\\\n").bool("b", true).obj("in", &inner);
        let r = o.render(0);
        assert!(r.contains(r#""s": "a\"b\\\n""#), "{r}");
        assert!(r.contains(r#""x": null"#), "{r}");
        assert!(r.starts_with('{') && r.ends_with('}'));
    }
}
