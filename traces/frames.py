"""Video frame-size traces: read ffprobe output and the plain CSV, write the CSV, and make a
real trace by encoding a synthetic source with ffmpeg.

Formats (see traces/README.md):
- plain: header `frame_type,size_bytes`, rows `key|delta,<integer >= 1>` — what
  `rise --frame-trace` replays.
- ffprobe: the output of `ffprobe -select_streams v -show_frames
  -show_entries frame=pict_type,pkt_size -of csv` (rows like `frame,4136,P` or `frame,P,4136`;
  ffprobe prints the fields in its own order; `-of csv=p=0` and `key=value` forms are accepted
  too; a trailing `side_data,...` part is ignored). pict_type I is a key frame; P, B and the
  others are delta frames.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from traces.errors import TraceError
from traces.textlines import data_lines

FRAME_HEADER = ["frame_type", "size_bytes"]
_PICT_TYPES = {"I", "P", "B", "S", "SI", "SP", "BI", "?"}


@dataclass(frozen=True, eq=False)
class FrameTrace:
    """is_key[i]: frame i is a key frame; size_bytes[i] >= 1."""

    is_key: np.ndarray
    size_bytes: np.ndarray

    def __post_init__(self) -> None:
        k = np.array(self.is_key, dtype=bool)
        s = np.array(self.size_bytes, dtype=np.int64)
        if k.ndim != 1 or len(k) == 0 or s.shape != k.shape:
            raise TraceError(None, "a frame trace needs N >= 1 frame types and sizes")
        if np.any(s < 1):
            raise TraceError(None, "frame sizes must be >= 1 byte")
        object.__setattr__(self, "is_key", k)
        object.__setattr__(self, "size_bytes", s)

    def mean_bitrate_mbps(self, fps: float) -> float:
        return float(self.size_bytes.mean() * 8 * fps / 1e6)


def _size(path: Path, s: str, lineno: int) -> int:
    try:
        v = int(s)
    except ValueError:
        raise TraceError(path, f"size_bytes {s!r} is not an integer", lineno) from None
    if v < 1:
        raise TraceError(path, f"size_bytes {v}; allowed an integer >= 1", lineno)
    return v


def read_frame_csv(path: Path) -> FrameTrace:
    lines = data_lines(path)
    head_no, head = lines[0]
    if [h.strip() for h in head.split(",")] != FRAME_HEADER:
        raise TraceError(path, f"header {head!r}; allowed exactly frame_type,size_bytes", head_no)
    keys: list[bool] = []
    sizes: list[int] = []
    for lineno, s in lines[1:]:
        f = [x.strip() for x in s.split(",")]
        if len(f) != 2:
            raise TraceError(path, f"{len(f)} fields, allowed 2 (frame_type,size_bytes)", lineno)
        if f[0] not in ("key", "delta"):
            raise TraceError(path, f"frame_type {f[0]!r}; allowed key or delta", lineno)
        keys.append(f[0] == "key")
        sizes.append(_size(path, f[1], lineno))
    if not keys:
        raise TraceError(path, "no rows after the header")
    return FrameTrace(np.array(keys), np.array(sizes))


def read_ffprobe_csv(path: Path) -> FrameTrace:
    keys: list[bool] = []
    sizes: list[int] = []
    for lineno, s in data_lines(path):
        fields = [x.strip() for x in s.split(",")]
        if fields and fields[0] == "frame":
            fields = fields[1:]
        if "side_data" in fields:  # ffprobe appends `side_data,<description>` to some frames
            fields = fields[: fields.index("side_data")]
        if fields == ["pict_type", "pkt_size"] or fields == ["pkt_size", "pict_type"]:
            continue  # a header (-of csv=nk=0:p=0 with print_section ... variants)
        pict: str | None = None
        size: int | None = None
        for x in fields:
            key, _, val = x.rpartition("=")
            if key == "pict_type" or (not key and val in _PICT_TYPES):
                pict = val
            elif key == "pkt_size" or (not key and val.lstrip("-").isdigit()):
                size = _size(path, val, lineno)
            elif x:
                raise TraceError(path, f"unexpected field {x!r} (want pict_type, pkt_size)", lineno)
        if pict is None or size is None:
            raise TraceError(path, "a row needs a pict_type (I/P/B) and a pkt_size", lineno)
        if pict not in _PICT_TYPES:
            raise TraceError(path, f"pict_type {pict!r}; allowed one of I, P, B", lineno)
        keys.append(pict == "I")
        sizes.append(size)
    return FrameTrace(np.array(keys), np.array(sizes))


def read_frames(path: Path) -> FrameTrace:
    """Either format, recognised by the first line."""
    first = data_lines(path)[0][1]
    if [h.strip() for h in first.split(",")] == FRAME_HEADER:
        return read_frame_csv(path)
    return read_ffprobe_csv(path)


def write_frame_csv(trace: FrameTrace, path: Path) -> None:
    rows = [",".join(FRAME_HEADER)]
    rows += [
        f"{'key' if k else 'delta'},{int(s)}"
        for k, s in zip(trace.is_key, trace.size_bytes, strict=True)
    ]
    Path(path).write_text("\n".join(rows) + "\n")


# --------------------------------------------------------------------------- ffmpeg


def ffmpeg_available() -> bool:
    return shutil.which("ffmpeg") is not None and shutil.which("ffprobe") is not None


def encode_command(
    out: Path,
    bitrate_mbps: float,
    fps: int,
    duration_s: float,
    width: int = 1280,
    height: int = 720,
    bufsize_frames: float = 10.0,
    source: str = "testsrc2",
) -> list[str]:
    """ffmpeg argv: lavfi `source` (moving test pattern) → libx264 realtime CBR-like:
    -b:v = -maxrate = bitrate, -bufsize = bufsize_frames frames' worth of bits (assumption:
    room for one key frame of up to 9× the mean), -tune zerolatency, -preset veryfast, one key
    frame at the start only (-g and -keyint_min huge, scene-cut detection off), 1 thread."""
    bps = int(bitrate_mbps * 1e6)
    return [
        "ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
        "-f", "lavfi", "-i", f"{source}=size={width}x{height}:rate={fps}",
        "-t", f"{duration_s:g}",
        "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency",
        "-b:v", str(bps), "-maxrate", str(bps), "-bufsize", str(int(bps * bufsize_frames / fps)),
        "-g", "1000000", "-keyint_min", "1000000", "-sc_threshold", "0", "-bf", "0",
        "-threads", "1", "-pix_fmt", "yuv420p", "-f", "matroska", str(out),
    ]  # fmt: skip


def probe_command(video: Path) -> list[str]:
    return [
        "ffprobe", "-v", "error", "-select_streams", "v", "-show_frames",
        "-show_entries", "frame=pict_type,pkt_size", "-of", "csv", str(video),
    ]  # fmt: skip


def encode_trace(
    bitrate_mbps: float,
    fps: int,
    duration_s: float,
    width: int = 1280,
    height: int = 720,
    bufsize_frames: float = 10.0,
) -> FrameTrace:
    """Encode a synthetic source with ffmpeg and return its frame sizes (via ffprobe)."""
    if not ffmpeg_available():
        raise TraceError(None, "ffmpeg/ffprobe not found on PATH (apt-get install ffmpeg)")
    if not (bitrate_mbps > 0 and fps > 0 and duration_s > 0):
        raise TraceError(None, "bitrate_mbps, fps and duration_s must be > 0")
    with tempfile.TemporaryDirectory(prefix="traces-video-") as tmp:
        video = Path(tmp) / "v.mkv"
        cmd = encode_command(video, bitrate_mbps, fps, duration_s, width, height, bufsize_frames)
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise TraceError(None, f"ffmpeg failed ({r.returncode}): {r.stderr.strip()[-500:]}")
        p = subprocess.run(probe_command(video), capture_output=True, text=True, check=False)
        if p.returncode != 0:
            raise TraceError(None, f"ffprobe failed ({p.returncode}): {p.stderr.strip()[-500:]}")
        csv_path = Path(tmp) / "frames.csv"
        csv_path.write_text(p.stdout)
        return read_ffprobe_csv(csv_path)
