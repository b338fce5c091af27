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
- GoP (the plain format extended): header `frame_type,size_bytes,pict_type,pts_ms,dts_ms,refs`,
  one row per frame in **decode order**: pict_type I/P/B, presentation and decode time (ms,
  the first frame shown at 0), and the decode indices (0-based rows) of the frames it
  references, `;`-separated (empty for I). What the `moq` publisher replays; made by
  `encode_gop_trace` (ffmpeg + ffprobe) with references from `traces/gop.py`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ground.errors import show
from traces.errors import TraceError
from traces.gop import GopError, check_display_order, closure, references
from traces.textlines import data_lines, finite_float

FRAME_HEADER = ["frame_type", "size_bytes"]
GOP_HEADER = [*FRAME_HEADER, "pict_type", "pts_ms", "dts_ms", "refs"]
_PICT_TYPES = {"I", "P", "B", "S", "SI", "SP", "BI", "?"}


@dataclass(frozen=True, eq=False)
class GopTiming:
    """What a GoP trace adds, per frame in decode order: picture type (I/P/B), presentation and
    decode time (ms) and the decode indices of the referenced frames."""

    pict_type: tuple[str, ...]
    pts_ms: np.ndarray
    dts_ms: np.ndarray
    refs: tuple[tuple[int, ...], ...]


@dataclass(frozen=True, eq=False)
class FrameTrace:
    """is_key[i]: frame i is a key frame; size_bytes[i] >= 1. `gop`: pict types, pts/dts and
    references (decode order) when the trace has them."""

    is_key: np.ndarray
    size_bytes: np.ndarray
    gop: GopTiming | None = None

    def __post_init__(self) -> None:
        k = np.array(self.is_key, dtype=bool)
        s = np.array(self.size_bytes, dtype=np.int64)
        if k.ndim != 1 or len(k) == 0 or s.shape != k.shape:
            raise TraceError(None, "a frame trace needs N >= 1 frame types and sizes")
        if np.any(s < 1):
            raise TraceError(None, "frame sizes must be >= 1 byte")
        object.__setattr__(self, "is_key", k)
        object.__setattr__(self, "size_bytes", s)
        g = self.gop
        if g is not None:
            n = len(k)
            if not (len(g.pict_type) == len(g.pts_ms) == len(g.dts_ms) == len(g.refs) == n):
                raise TraceError(None, "GoP timing needs one entry per frame")
            if [t == "I" for t in g.pict_type] != k.tolist():
                raise TraceError(None, "key frames must be exactly the I frames")
            try:
                closure(g.refs)
            except GopError as e:
                raise TraceError(None, str(e)) from None

    def mean_bitrate_mbps(self, fps: float) -> float:
        return float(self.size_bytes.mean() * 8 * fps / 1e6)


def _size(path: Path, s: str, lineno: int) -> int:
    try:
        v = int(s)
    except ValueError:
        raise TraceError(path, f"size_bytes {show(s)} is not an integer", lineno) from None
    if v < 1:
        raise TraceError(path, f"size_bytes {v}; allowed an integer >= 1", lineno)
    return v


def _refs(path: Path, s: str, lineno: int) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in s.split(";")) if s else ()
    except ValueError:
        raise TraceError(path, f"refs {s!r}; allowed row indices separated by ;", lineno) from None


def read_gop_csv(path: Path) -> FrameTrace:
    """The GoP format (header GOP_HEADER, rows in decode order)."""
    lines = data_lines(path)
    head_no, head = lines[0]
    if [h.strip() for h in head.split(",")] != GOP_HEADER:
        raise TraceError(path, f"header {head!r}; allowed exactly {','.join(GOP_HEADER)}", head_no)
    keys: list[bool] = []
    sizes: list[int] = []
    picts: list[str] = []
    pts: list[float] = []
    dts: list[float] = []
    refs: list[tuple[int, ...]] = []
    for lineno, s in lines[1:]:
        f = [x.strip() for x in s.split(",")]
        if len(f) != len(GOP_HEADER):
            raise TraceError(path, f"{len(f)} fields, allowed {len(GOP_HEADER)}", lineno)
        if f[2] not in ("I", "P", "B"):
            raise TraceError(path, f"pict_type {f[2]!r}; allowed I, P or B", lineno)
        if f[0] != ("key" if f[2] == "I" else "delta"):
            raise TraceError(path, f"frame_type {f[0]!r} disagrees with pict_type {f[2]}", lineno)
        r = _refs(path, f[5], lineno)
        if any(not 0 <= x < len(keys) for x in r):
            raise TraceError(path, f"refs {f[5]!r}: allowed only earlier rows (0-based)", lineno)
        keys.append(f[2] == "I")
        sizes.append(_size(path, f[1], lineno))
        picts.append(f[2])
        pts.append(finite_float(path, f[3], "pts_ms", lineno))
        dts.append(finite_float(path, f[4], "dts_ms", lineno))
        refs.append(r)
    if not keys:
        raise TraceError(path, "no rows after the header")
    gop = GopTiming(tuple(picts), np.array(pts), np.array(dts), tuple(refs))
    return FrameTrace(np.array(keys), np.array(sizes), gop)


def read_frame_csv(path: Path) -> FrameTrace:
    lines = data_lines(path)
    head_no, head = lines[0]
    if [h.strip() for h in head.split(",")] == GOP_HEADER:
        return read_gop_csv(path)
    if [h.strip() for h in head.split(",")] != FRAME_HEADER:
        raise TraceError(
            path, f"header {show(head)}; allowed exactly frame_type,size_bytes", head_no
        )
    keys: list[bool] = []
    sizes: list[int] = []
    for lineno, s in lines[1:]:
        f = [x.strip() for x in s.split(",")]
        if len(f) != 2:
            raise TraceError(path, f"{len(f)} fields, allowed 2 (frame_type,size_bytes)", lineno)
        if f[0] not in ("key", "delta"):
            raise TraceError(path, f"frame_type {show(f[0])}; allowed key or delta", lineno)
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
                raise TraceError(
                    path, f"unexpected field {show(x)} (want pict_type, pkt_size)", lineno
                )
        if pict is None or size is None:
            raise TraceError(path, "a row needs a pict_type (I/P/B) and a pkt_size", lineno)
        if pict not in _PICT_TYPES:
            raise TraceError(path, f"pict_type {show(pict)}; allowed one of I, P, B", lineno)
        keys.append(pict == "I")
        sizes.append(size)
    return FrameTrace(np.array(keys), np.array(sizes))


def read_frames(path: Path) -> FrameTrace:
    """Either format, recognised by the first line."""
    first = data_lines(path)[0][1]
    if [h.strip() for h in first.split(",")] in (FRAME_HEADER, GOP_HEADER):
        return read_frame_csv(path)
    return read_ffprobe_csv(path)


def write_frame_csv(trace: FrameTrace, path: Path) -> None:
    """The plain format, or the GoP format when the trace has GoP timing."""
    g = trace.gop
    rows = [",".join(GOP_HEADER if g else FRAME_HEADER)]
    for i, (k, s) in enumerate(zip(trace.is_key, trace.size_bytes, strict=True)):
        row = f"{'key' if k else 'delta'},{int(s)}"
        if g is not None:
            refs = ";".join(str(r) for r in g.refs[i])
            row += f",{g.pict_type[i]},{g.pts_ms[i]:g},{g.dts_ms[i]:g},{refs}"
        rows.append(row)
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
    return _encode_and_probe(
        (bitrate_mbps, fps, duration_s),
        "v.mkv",
        lambda video: encode_command(
            video, bitrate_mbps, fps, duration_s, width, height, bufsize_frames
        ),
        probe_command,
        _read_probe_csv,
    )


def _read_probe_csv(probe_out: str, tmp: Path) -> FrameTrace:
    """`probe_command`'s output read as the ffprobe CSV format (through a file in `tmp`)."""
    csv_path = tmp / "frames.csv"
    csv_path.write_text(probe_out)
    return read_ffprobe_csv(csv_path)


def _encode_and_probe(
    rate: tuple[float, float, float],
    video_name: str,
    encode: Callable[[Path], list[str]],
    probe: Callable[[Path], list[str]],
    parse: Callable[[str, Path], FrameTrace],
) -> FrameTrace:
    """The sequence every encoder here shares: check ffmpeg and `rate` (bitrate_mbps, fps,
    duration_s), run `encode(video)` into a temporary folder, then `probe(video)`, and return
    `parse(probe's stdout, the folder)` before the folder is removed."""
    _need_ffmpeg(*rate)
    with tempfile.TemporaryDirectory(prefix="traces-video-") as tmp:
        video = Path(tmp) / video_name
        _run(encode(video))
        return parse(_run(probe(video)), Path(tmp))


def _need_ffmpeg(bitrate_mbps: float, fps: float, duration_s: float) -> None:
    if not ffmpeg_available():
        raise TraceError(None, "ffmpeg/ffprobe not found on PATH (apt-get install ffmpeg)")
    if not (bitrate_mbps > 0 and fps > 0 and duration_s > 0):
        raise TraceError(None, "bitrate_mbps, fps and duration_s must be > 0")


def _run(cmd: list[str]) -> str:
    """Run an ffmpeg/ffprobe argv; its stdout, or a TraceError with the end of its stderr."""
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise TraceError(None, f"{cmd[0]} failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    return r.stdout


# ------------------------------------------------------------------ GoP-structured encode


def encode_gop_command(
    out: Path,
    bitrate_mbps: float,
    fps: int,
    duration_s: float,
    gop_frames: int,
    b_frames: int,
    width: int = 1280,
    height: int = 720,
    noise: int = 6,
    vbv_s: float = 2.0,
    source: str = "testsrc2",
) -> list[str]:
    """ffmpeg argv: lavfi `source` with temporal noise of strength `noise` (0 = none) →
    libx264 with a fixed GoP: a key frame every `gop_frames` frames (closed GoP, no scene-cut
    key frames), exactly `b_frames` B frames between references (no adaptive B decision, no
    B-pyramid: B frames are never referenced), one reference frame (P refers to the previous
    I/P only), average bitrate `bitrate_mbps` with a VBV of `vbv_s` seconds; MP4 (which keeps
    real decode timestamps), one thread."""
    bps = int(bitrate_mbps * 1e6)
    x264 = f"b-adapt=0:b-pyramid=none:ref=1:open-gop=0:bframes={b_frames}"
    vf = f"noise=alls={noise}:allf=t" if noise > 0 else "null"
    return [
        "ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
        "-f", "lavfi", "-i", f"{source}=size={width}x{height}:rate={fps}", "-vf", vf,
        "-t", f"{duration_s:g}",
        "-c:v", "libx264", "-preset", "veryfast",
        "-b:v", str(bps), "-maxrate", str(bps), "-bufsize", str(int(bps * vbv_s)),
        "-g", str(gop_frames), "-keyint_min", str(gop_frames), "-sc_threshold", "0",
        "-bf", str(b_frames), "-x264-params", x264,
        "-threads", "1", "-pix_fmt", "yuv420p", "-f", "mp4", str(out),
    ]  # fmt: skip


def probe_gop_command(video: Path) -> list[str]:
    """ffprobe argv: packets (decode order: pts, dts, size) and frames (pts, pict_type), JSON."""
    return [
        "ffprobe", "-v", "error", "-select_streams", "v", "-show_packets", "-show_frames",
        "-show_entries", "packet=pts_time,dts_time,size:frame=pts_time,pict_type",
        "-of", "json", str(video),
    ]  # fmt: skip


def gop_trace_from_probe(probe_json: str) -> FrameTrace:
    """A GoP trace from `probe_gop_command`'s output: packets give the decode order, size, pts
    and dts; frames give the picture type, matched to packets by pts. Times are shifted so the
    first frame shown is at 0 ms; references come from the GoP model (traces/gop.py), checked
    against the presentation times."""
    try:
        items = json.loads(probe_json)["packets_and_frames"]
        packets = [x for x in items if x["type"] == "packet"]
        types = {round(float(x["pts_time"]) * 1e6): x["pict_type"] for x in items
                 if x["type"] == "frame"}  # fmt: skip
        pts = np.array([float(x["pts_time"]) * 1000 for x in packets])
        dts = np.array([float(x.get("dts_time", "nan")) * 1000 for x in packets])
        sizes = np.array([int(x["size"]) for x in packets])
        picts = tuple(types[round(float(x["pts_time"]) * 1e6)] for x in packets)
    except (ValueError, KeyError, TypeError) as e:
        raise TraceError(None, f"ffprobe output not understood: {e!r}") from None
    if not packets:
        raise TraceError(None, "ffprobe found no video packets")
    t0 = pts.min()
    pts, dts = np.round(pts - t0, 3), np.round(dts - t0, 3)
    try:
        refs = references(picts)
        check_display_order(picts, pts, refs)
    except GopError as e:
        raise TraceError(None, f"the encode does not follow the GoP model: {e}") from None
    gop = GopTiming(picts, pts, dts, tuple(refs))
    return FrameTrace(np.array([t == "I" for t in picts]), sizes, gop)


def encode_gop_trace(
    bitrate_mbps: float,
    fps: int,
    duration_s: float,
    gop_frames: int,
    b_frames: int,
    width: int = 1280,
    height: int = 720,
    noise: int = 6,
) -> FrameTrace:
    """Encode a synthetic source to a fixed I/P/B GoP and return its GoP trace."""
    return _encode_and_probe(
        (bitrate_mbps, fps, duration_s),
        "v.mp4",
        lambda video: encode_gop_command(
            video, bitrate_mbps, fps, duration_s, gop_frames, b_frames, width, height, noise
        ),
        probe_gop_command,
        lambda probe_out, _tmp: gop_trace_from_probe(probe_out),
    )
