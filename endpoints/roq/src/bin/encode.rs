//! `roq-encode`: a raw I420 clip through the `roq` sender's live encoder (x264enc, tune
//! zerolatency) at one fixed bitrate and back through the receiver's decoder (avdec_h264),
//! offline: no network, no pacing (x264's rate control follows the frames' timestamps, not
//! the wall clock). Writes the decoded pictures' luma, one frame after another, to `--out-y`
//! and prints one JSON line: frames, bytes, the bitrate achieved, IDR frames. The input of
//! priolab/workloads/roq/span.py, which scores it (SSIM) against the source.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Parser;

use roq::media::{is_idr, Decoder, Encoder};

#[derive(Debug, Parser)]
#[command(
    name = "roq-encode",
    version,
    about = "roq's encoder and decoder, offline, at one bitrate"
)]
struct Args {
    /// raw I420 frames of --width × --height
    #[arg(long)]
    source: PathBuf,
    #[arg(long, default_value_t = 640)]
    width: u32,
    #[arg(long, default_value_t = 360)]
    height: u32,
    #[arg(long, default_value_t = 25)]
    fps: u32,
    /// x264enc bitrate (kbit/s)
    #[arg(long)]
    kbps: u32,
    #[arg(long, default_value_t = 50)]
    key_int_frames: u32,
    #[arg(long, default_value = "veryfast")]
    x264_preset: String,
    /// the decoded luma, frame after frame
    #[arg(long)]
    out_y: PathBuf,
}

fn run(a: &Args) -> Result<String> {
    let frame = (a.width * a.height * 3 / 2) as usize;
    let luma = (a.width * a.height) as usize;
    let src =
        std::fs::read(&a.source).with_context(|| format!("--source {}", a.source.display()))?;
    if src.is_empty() || src.len() % frame != 0 {
        bail!(
            "--source {}: {} bytes is not a whole number of {}x{} I420 frames",
            a.source.display(),
            src.len(),
            a.width,
            a.height
        );
    }
    if !(1..=50_000).contains(&a.kbps) {
        bail!("--kbps {}: allowed 1..=50000", a.kbps);
    }
    let n = src.len() / frame;
    let frame_ns = 1_000_000_000 / a.fps as u64;
    let mut enc = Encoder::new(
        a.width,
        a.height,
        a.fps,
        a.kbps,
        a.key_int_frames,
        &a.x264_preset,
    )?;
    let dec = Decoder::new()?;
    let mut pictures: Vec<Option<Vec<u8>>> = vec![None; n];
    let mut take = |p: roq::media::Picture| -> Result<()> {
        let k = ((p.pts_ns + frame_ns / 2) / frame_ns) as usize;
        let slot = pictures
            .get_mut(k)
            .with_context(|| format!("a picture at {} ns", p.pts_ns))?;
        *slot = Some(p.i420[..luma].to_vec());
        Ok(())
    };
    let (mut bytes, mut idrs) = (0u64, 0u64);
    for k in 0..n {
        let pts = k as u64 * frame_ns;
        let au = enc.encode(&src[k * frame..(k + 1) * frame], pts)?;
        bytes += au.len() as u64;
        idrs += u64::from(is_idr(&au));
        dec.push(au, pts)?;
        while let Some(p) = dec.pull(Duration::from_millis(1)) {
            take(p)?;
        }
    }
    dec.end();
    while let Some(p) = dec.pull(Duration::from_secs(2)) {
        take(p)?;
    }
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(&a.out_y)
            .with_context(|| format!("--out-y {}", a.out_y.display()))?,
    );
    let mut decoded = 0;
    for (k, p) in pictures.iter().enumerate() {
        let Some(y) = p else {
            bail!("frame {k} was not decoded")
        };
        out.write_all(y)?;
        decoded += 1;
    }
    out.flush()?;
    let kbps = bytes as f64 * 8.0 / (n as f64 / a.fps as f64) / 1e3;
    Ok(format!(
        "{{\"frames\": {n}, \"decoded\": {decoded}, \"bytes\": {bytes}, \"kbps_target\": {}, \
         \"kbps_achieved\": {kbps:.1}, \"idr_frames\": {idrs}}}",
        a.kbps
    ))
}

fn main() -> ExitCode {
    let a = Args::parse();
    match run(&a) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("roq-encode: {e:#}");
            ExitCode::from(2)
        }
    }
}
