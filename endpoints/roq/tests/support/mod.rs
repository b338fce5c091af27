//! What the binary's tests and the virtual-time tests share: a synthetic moving I420 source
//! (no file needed) and the check of a lossless session's logs: every frame sent is decoded,
//! the decoded luma is close to the source's, no PLI.

use std::path::Path;

pub const W: usize = 320;
pub const H: usize = 176;
pub const FRAMES: usize = 25;

pub fn source(dir: &Path) -> std::path::PathBuf {
    let mut v = Vec::with_capacity(FRAMES * W * H * 3 / 2);
    for f in 0..FRAMES {
        for y in 0..H {
            for x in 0..W {
                v.push(((x + 3 * f) / 2 % 200 + (y / 8) % 2 * 40) as u8);
            }
        }
        v.extend(std::iter::repeat_n(128u8, W * H / 2));
    }
    let p = dir.join("src.yuv");
    std::fs::write(&p, v).unwrap();
    p
}

pub fn json_u64(p: &Path, key: &str) -> u64 {
    let s = std::fs::read_to_string(p).unwrap();
    let i = s
        .find(&format!("\"{key}\": "))
        .unwrap_or_else(|| panic!("{key} in {s}"));
    s[i + key.len() + 4..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect::<String>()
        .parse()
        .unwrap()
}

pub fn check(dir: &Path, src: &Path) {
    let r = dir.join("r");
    let sent = json_u64(&dir.join("s/summary.json"), "frames_sent");
    assert_eq!(sent, FRAMES as u64 * 2, "2 s at 25 fps");
    assert_eq!(json_u64(&r.join("summary.json"), "frames_complete"), sent);
    assert_eq!(json_u64(&r.join("summary.json"), "pictures_decoded"), sent);
    let y = std::fs::read(r.join("decoded.y")).unwrap();
    assert_eq!(y.len(), sent as usize * W * H);
    // frame 30 is source frame 5 (the source loops): close to it
    let s = std::fs::read(src).unwrap();
    let frame = W * H * 3 / 2;
    let (a, b) = (&y[30 * W * H..31 * W * H], &s[5 * frame..5 * frame + W * H]);
    let mad = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.abs_diff(*y) as u64)
        .sum::<u64>()
        / (W * H) as u64;
    assert!(mad < 8, "mean absolute luma difference {mad}");
    // no loss: no PLI, no forced IDR
    assert_eq!(json_u64(&r.join("summary.json"), "pli_sent"), 0);
    assert_eq!(json_u64(&r.join("summary.json"), "chain_breaks"), 0);
    assert_eq!(
        json_u64(&dir.join("s/summary.json"), "key_frames_forced"),
        0
    );
    let log = std::fs::read_to_string(r.join("decoded_frames.csv")).unwrap();
    assert!(
        log.lines().nth(31).unwrap().starts_with("30,108000,"),
        "rtp_ts of frame 30"
    );
}
