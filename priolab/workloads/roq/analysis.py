"""Per-run analysis of a `roq` run: the logs (endpoints/README.md "roq") → two tables and the
metrics.

`tables/roq_frames.parquet`: one row per frame the sender encoded (its RTP timestamp is the
key): `frame_index, rtp_ts, size_bytes, target_kbps, capture_ms, decoded, shown_rtp_ts,
latency_ms, ssim, psnr_db`. The picture compared with source frame `frame_index mod n` is the
one on screen for that timestamp: the frame itself if it was decoded, else the last decoded
picture with an earlier timestamp (a freeze), else nothing yet (black). Lost frames count:
every sent frame has a row and a score, so a run that stops delivering scores its frozen
picture, never an empty mean. `latency_ms` = decoded − capture (NaN if never decoded).

`tables/roq_rate.parquet`: the sender's `rate.csv` with `time_s` since the first frame.

Metrics (metrics.json): `ssim_mean`, `psnr_mean_db` (over every sent frame),
`ssim_decoded_mean` (over decoded frames only, for comparison), `frames_sent`,
`decoded_pct`, `frozen_pct` (shown a stale picture), `rtp_loss_pct` (RTP packets sent that
never arrived), `latency_median_ms`, `latency_p95_ms`, `target_mean_kbps`,
`send_rate_mean_kbps`, `competing_mbps` (QUIC stream goodput, 0 without one).
The decoder's side, from the endpoints' summary.json (NaN from a receiver older than these
fields): `key_frames_sent`, `key_frames_complete` (IDR frames that arrived whole: the only ones
decoding can start or recover from), `frames_pushed` (access units given to the decoder),
`pictures_decoded`, `decoder_errors` (ERROR messages on the decoder pipeline's bus while the
stream ran), `decoder_errors_at_eos` (after it ended: GstVideoDecoder's "No valid frames
decoded before end of stream" when it never output a picture), `decoder_stopped` (1 when
there was an ERROR while the stream ran: the pipeline decodes nothing after it) and
`no_picture` (1 when not one picture was decoded); the loss recovery's (NaN from a
receiver older than PLI): `pli_sent` (RTCP PLIs the receiver sent), `pli_received` (that
reached the sender), `key_frames_forced` (IDRs the encoder made at a PLI's request) and
`undecodable_frames` (complete frames that arrived while the prediction chain was broken).

The shape of the target over time ([RoQ §6.2-6.5]), from the sender's rate log and the
downlink's capacity as the run's link names it (a trace: its first drop in rate starts the
dip, the next rise ends it; NaN when the capacity does not dip): `target_changes_per_s` (how
often the target changes), `target_top_bottom_pct` (samples at the trivial controller's
highest or lowest level, 1280 or 256 kbit/s: "alternates between the highest and lowest
level"), `send_rate_pre_dip_kbps` (the mean sent rate over the second half of the time
before the dip: "after the initial ramp-up phase"), `target_min_dip_kbps` (the lowest target
during the dip), `ramp_up_s` (from the first sample until the target first reaches 90 % of
the highest target before the dip: the run's own "good link utilization") and `recovery_s`
(from the end of the dip until the target reaches that level again; a run that never does
counts the time to its last sample, a lower bound). The times are on the sender's clock from
its first frame; the trace's clock starts with the link, at most the link's settle time
(netem/README.md, "A trace's time 0") earlier, which these windows of tens of seconds do not
resolve.
A run with `no_picture` or `decoder_stopped` is not a low-quality run like the others: the
SSIM table says so beside its SSIM (figures.py).

The decoded luma (`guest/decoded.y`, ~690 MB per 2 minutes at 360p) is deleted once the
frames table is written, unless the workload's `keep_decoded` is true; the table then stands
for it (a second analysis reads the table).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from analysis.logs import AnalysisError
from ground import rundir
from priolab.workloads.logs import read_csv_log
from priolab.workloads.roq.kernel import load_kernel, psnrs_db, score_pairs
from priolab.workloads.roq.workload import RoqParams
from priolab.workloads.what_ran import what_ran

if TYPE_CHECKING:
    from analysis.rundirs import Run

FRAMES_TABLE = "roq_frames.parquet"
RATE_TABLE = "roq_rate.parquet"
SENT_COLUMNS = ["frame_index", "rtp_ts", "size_bytes", "packets", "target_kbps", "capture_us"]
DECODED_COLUMNS = ["decoded_index", "rtp_ts", "decoded_us"]
RATE_COLUMNS = ["time_us", "target_bps", "send_rate_bps", "rtp_queue_pkts"]


class RoqLogError(ValueError):
    """A log that is missing or lacks the documented columns (names the file)."""


def _read(path: Path, columns: list[str]) -> pd.DataFrame:
    return read_csv_log(path, columns, RoqLogError, "endpoints/README.md, roq logs")


def _json(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


def align(sent_ts: np.ndarray, decoded_ts: np.ndarray) -> np.ndarray:
    """For each sent timestamp, the index (into `decoded_ts`) of the picture on screen: the
    last decoded picture with timestamp ≤ it; −1 if none yet. `decoded_ts` in decode order
    (increasing; a repeated timestamp keeps its last picture)."""
    if len(decoded_ts) == 0:  # nothing decoded: nothing on screen, ever
        return np.full(len(sent_ts), -1, dtype=np.int64)
    order = np.argsort(decoded_ts, kind="stable")
    ts = decoded_ts[order]
    pos = np.searchsorted(ts, sent_ts, side="right") - 1
    return np.where(pos >= 0, order[np.maximum(pos, 0)], -1)


def score_frames(
    sent_ts: np.ndarray,
    source_index: np.ndarray,
    source_luma: np.ndarray,
    decoded_ts: np.ndarray,
    decoded_luma: np.ndarray,
) -> pd.DataFrame:
    """SSIM and PSNR per sent frame against its source frame (see the module docstring). Each
    distinct (picture shown, source frame) pair is scored once (a freeze repeats one), all in
    one call to the kernel (kernel.py: quality.py's SSIM and PSNR, bit for bit)."""
    shown = align(sent_ts, decoded_ts)
    if len(shown) != len(source_index):
        raise ValueError(f"{len(sent_ts)} sent timestamps, {len(source_index)} source indices")
    pairs, which = np.unique(
        np.stack([shown, np.asarray(source_index, dtype=np.int64)]), axis=1, return_inverse=True
    )
    ssim_u, sse_u = score_pairs(decoded_luma, source_luma, pairs[0], pairs[1])
    psnr_u = psnrs_db(sse_u, source_luma.shape[1] * source_luma.shape[2])
    ssims, psnrs = ssim_u[which.ravel()], psnr_u[which.ravel()]
    shown_ts = (
        np.where(shown >= 0, decoded_ts[np.maximum(shown, 0)], -1)
        if len(decoded_ts)
        else np.full(len(sent_ts), -1, dtype=np.int64)
    )
    return pd.DataFrame(
        {
            "decoded": np.isin(sent_ts, decoded_ts),
            "shown_rtp_ts": shown_ts,
            "ssim": ssims,
            "psnr_db": psnrs,
        }
    )


def _luma(path: Path, w: int, h: int) -> np.ndarray:
    n = path.stat().st_size
    if n % (w * h):
        raise RoqLogError(f"{path}: {n} bytes is not a whole number of {w}x{h} luma planes")
    if n == 0:  # nothing decoded (mmap refuses an empty file): every frame is scored as black
        return np.zeros((0, h, w), dtype=np.uint8)
    return np.memmap(path, dtype=np.uint8, mode="r").reshape(-1, h, w)


def _source_luma(path: Path, w: int, h: int) -> np.ndarray:
    frame = w * h * 3 // 2
    n = path.stat().st_size // frame
    if n == 0 or n * frame != path.stat().st_size:
        raise RoqLogError(f"{path}: not a whole number of {w}x{h} I420 frames")
    return np.memmap(path, dtype=np.uint8, mode="r").reshape(n, frame)[:, : w * h].reshape(n, h, w)


def frames_table(run_dir: Path, params: dict[str, Any], source: Path) -> pd.DataFrame:
    w, h = int(params.get("width", 640)), int(params.get("height", 360))
    sent = _read(run_dir / "host" / "frames_sent.csv", SENT_COLUMNS)
    dec = _read(run_dir / "guest" / "decoded_frames.csv", DECODED_COLUMNS)
    if not source.is_file():
        raise RoqLogError(f"{source}: the source video is missing (workload prepare makes it)")
    src = _source_luma(source, w, h)
    luma = _luma(run_dir / "guest" / "decoded.y", w, h)
    if len(luma) != len(dec):
        raise RoqLogError(
            f"{run_dir / 'guest' / 'decoded.y'}: {len(luma)} pictures, "
            f"decoded_frames.csv lists {len(dec)}"
        )
    sent = sent.sort_values("frame_index").reset_index(drop=True)
    sent_ts = sent["rtp_ts"].to_numpy(np.int64)
    scores = score_frames(
        sent_ts,
        sent["frame_index"].to_numpy(np.int64) % len(src),
        src,
        dec["rtp_ts"].to_numpy(np.int64),
        luma,
    )
    t0 = float(sent["capture_us"].iloc[0]) if len(sent) else 0.0
    dec_us = dec.drop_duplicates("rtp_ts", keep="first").set_index("rtp_ts")["decoded_us"]
    decoded_us = dec_us.reindex(sent_ts).to_numpy(float)
    capture = sent["capture_us"].to_numpy(float)
    return pd.DataFrame(
        {
            "frame_index": sent["frame_index"].to_numpy(),
            "rtp_ts": sent_ts,
            "size_bytes": sent["size_bytes"].to_numpy(),
            "target_kbps": sent["target_kbps"].to_numpy(),
            "capture_ms": (capture - t0) / 1e3,
            "latency_ms": (decoded_us - capture) / 1e3,
            **{c: scores[c].to_numpy() for c in scores.columns},
        }
    )


def rate_table(run_dir: Path, t0_us: float) -> pd.DataFrame:
    r = _read(run_dir / "host" / "rate.csv", RATE_COLUMNS)
    r.insert(0, "time_s", (r["time_us"].to_numpy(float) - t0_us) / 1e6)
    return r


TRIVIAL_EDGE_BPS = (256_000.0, 1_280_000.0)
"""The trivial controller's lowest and highest levels ([RoQ §3.3]; roq-core trivial.rs)."""
RAMP_SHARE = 0.9
"""`ramp_up_s` and `recovery_s`: the target reaches this share of its highest before the dip
(an assumption: the paper's "good link utilization" has no number)."""


CSV_ONLY_KEYS = ("gap", "max_gap_s", "rate_unit", "step_s", "time_column", "time_format")
"""A trace's keys that only a CSV trace may set; metadata.json's link holds every key with its
default, so they are left out when reading another format back."""


def capacity_dip(meta: dict[str, Any]) -> tuple[float, float] | None:
    """(start_s, end_s) of the downlink capacity's first dip (a drop in rate and the next
    rise), from the trace the run's link names; None for a constant rate, a trace that does
    not dip, or one that cannot be read."""
    from traces.config import TraceRate
    from traces.throughput import RateSchedule, load_trace

    try:
        run = meta["run"]
        cfg = run["link"]["downlink"].get("trace")
        if not cfg:
            return None
        csv_only = () if cfg.get("format") == "csv" else CSV_ONLY_KEYS
        trace = TraceRate.model_validate({k: v for k, v in cfg.items()
                                          if v is not None and k not in csv_only})  # fmt: skip
        sched = load_trace(trace, Path(run.get("base_dir", ".")))
    except Exception:  # noqa: BLE001 (any unreadable link or trace: no dip to report)
        return None
    if not isinstance(sched, RateSchedule):
        return None
    t, r = np.asarray(sched.times_s, float), np.asarray(sched.rate_mbps, float)
    down = np.flatnonzero(np.diff(r) < 0)
    if not len(down):
        return None
    i = int(down[0]) + 1
    up = np.flatnonzero(np.diff(r[i:]) > 0)
    end = float(t[i + int(up[0]) + 1]) if len(up) else float(sched.duration_s)
    return float(t[i]), end


def shape_metrics(rate: pd.DataFrame, dip: tuple[float, float] | None) -> dict[str, float]:
    """The target's shape over time (module docstring), from the rate table."""
    nan = math.nan
    out = dict.fromkeys(("target_changes_per_s", "target_top_bottom_pct",
                         "send_rate_pre_dip_kbps", "target_min_dip_kbps", "ramp_up_s",
                         "recovery_s"), nan)  # fmt: skip
    if len(rate) < 2:
        return out
    t = rate["time_s"].to_numpy(float)
    target = rate["target_bps"].to_numpy(float)
    span = t[-1] - t[0]
    if span > 0:
        out["target_changes_per_s"] = float(np.count_nonzero(np.diff(target))) / span
    out["target_top_bottom_pct"] = 100.0 * float(np.isin(target, TRIVIAL_EDGE_BPS).mean())
    if dip is None:
        return out
    start, end = dip
    before, during = t < start, (t >= start) & (t < end)
    if before.any():
        half = before & (t >= start / 2)
        if half.any():
            out["send_rate_pre_dip_kbps"] = float(rate["send_rate_bps"].to_numpy(float)[half]
                                                  .mean() / 1e3)  # fmt: skip
        level = RAMP_SHARE * float(target[before].max())
        reached = np.flatnonzero(before & (target >= level))
        out["ramp_up_s"] = float(t[reached[0]] - t[0]) if len(reached) else nan
        after = np.flatnonzero((t >= end) & (target >= level))
        if t[-1] >= end:
            out["recovery_s"] = float(t[after[0]] - end) if len(after) else float(t[-1] - end)
    if during.any():
        out["target_min_dip_kbps"] = float(target[during].min() / 1e3)
    return out


def _pct(v: np.ndarray, q: float) -> float:
    return float(np.percentile(v, q)) if len(v) else math.nan


def metrics(
    frames: pd.DataFrame, rate: pd.DataFrame, host: dict[str, Any], guest: dict[str, Any]
) -> dict[str, float]:
    n = len(frames)
    m: dict[str, float] = {"frames_sent": float(n)}
    m["ssim_mean"] = float(frames["ssim"].mean()) if n else math.nan
    m["psnr_mean_db"] = float(frames["psnr_db"].mean()) if n else math.nan
    dec = frames["decoded"].to_numpy(bool)
    m["ssim_decoded_mean"] = float(frames.loc[dec, "ssim"].mean()) if dec.any() else math.nan
    m["decoded_pct"] = 100.0 * float(dec.mean()) if n else math.nan
    m["frozen_pct"] = 100.0 - m["decoded_pct"] if n else math.nan
    sent_pk = float(host.get("rtp_packets_sent", math.nan))
    got_pk = float(guest.get("rtp_packets_received", math.nan))
    m["rtp_loss_pct"] = 100.0 * (1 - got_pk / sent_pk) if sent_pk > 0 else math.nan
    lat = frames["latency_ms"].dropna().to_numpy(float)
    m["latency_median_ms"] = _pct(lat, 50)
    m["latency_p95_ms"] = _pct(lat, 95)
    m["target_mean_kbps"] = float(rate["target_bps"].mean() / 1e3) if len(rate) else math.nan
    m["send_rate_mean_kbps"] = float(rate["send_rate_bps"].mean() / 1e3) if len(rate) else math.nan
    span_s = (frames["capture_ms"].max() / 1e3) if n else math.nan
    comp = float(guest.get("competing_bytes_received", 0))
    m["competing_mbps"] = comp * 8 / 1e6 / span_s if span_s and span_s > 0 else 0.0
    m.update(decoder_metrics(host, guest, int(dec.sum())))
    return m


def decoder_metrics(host: dict[str, Any], guest: dict[str, Any], decoded: int) -> dict[str, float]:
    """What the decoder was given and what it did (module docstring); NaN where the
    endpoint's summary.json lacks the field."""

    def num(d: dict[str, Any], key: str) -> float:
        v = d.get(key)
        return float(v) if isinstance(v, int | float) else math.nan

    errors = num(guest, "decoder_errors")
    pushed = num(guest, "frames_pushed_to_decoder")
    return {
        "key_frames_sent": num(host, "key_frames_sent"),
        "key_frames_complete": num(guest, "key_frames_complete"),
        "frames_pushed": pushed if not math.isnan(pushed) else num(guest, "frames_complete"),
        "pictures_decoded": float(decoded),
        "decoder_errors": errors,
        "decoder_errors_at_eos": num(guest, "decoder_errors_at_eos"),
        "decoder_stopped": math.nan if math.isnan(errors) else float(errors > 0),
        "no_picture": float(decoded == 0),
        "pli_sent": num(guest, "pli_sent"),
        "pli_received": num(host, "pli_received"),
        "key_frames_forced": num(host, "key_frames_forced"),
        "undecodable_frames": num(guest, "undecodable_frames"),
    }


def run_params(meta: dict[str, Any]) -> tuple[dict[str, Any], Path]:
    w = dict(meta.get("run", {}).get("workload", {}))
    w.pop("kind", None)
    src = meta.get("inputs", {}).get("source")
    if not src:
        raise RoqLogError("metadata.json: inputs.source missing (the roq workload's prepare)")
    return w, Path(src)


def run_analysis(
    run_dir: Path, tables_dir: str = "tables", meta: dict[str, Any] | None = None
) -> dict[str, float]:
    """Write the two tables (reusing the frames table when decoded.y is gone); return the
    run's metrics."""
    meta = meta if meta is not None else _json(run_dir / rundir.METADATA)
    params, source = run_params(meta)
    out = run_dir / tables_dir
    out.mkdir(exist_ok=True)
    decoded = run_dir / "guest" / "decoded.y"
    if decoded.is_file() or not (out / FRAMES_TABLE).is_file():
        frames = frames_table(run_dir, params, source)
        frames.to_parquet(out / FRAMES_TABLE, index=False)
        if not params.get("keep_decoded", False):
            decoded.unlink(missing_ok=True)
    else:
        frames = pd.read_parquet(out / FRAMES_TABLE)
    sent = _read(run_dir / "host" / "frames_sent.csv", SENT_COLUMNS)
    t0 = float(sent["capture_us"].min()) if len(sent) else 0.0
    rate = rate_table(run_dir, t0)
    rate.to_parquet(out / RATE_TABLE, index=False)
    host, guest = (_json(run_dir / ep / "summary.json") for ep in ("host", "guest"))
    return metrics(frames, rate, host, guest) | shape_metrics(rate, capacity_dip(meta))


class RoqAnalysis:
    """The `roq` workload's part of analysis/ (analysis.workload.WorkloadAnalysis)."""

    core_metrics: tuple[str, ...] = (
        "ssim_mean", "psnr_mean_db", "decoded_pct", "rtp_loss_pct", "latency_median_ms",
        "target_mean_kbps", "send_rate_mean_kbps",
    )  # fmt: skip
    run_columns: tuple[str, ...] = ("transport", "rate", "cc", "feedback", "competing_stream")
    log_dirs: tuple[str, ...] = ("guest", "host")

    def write_tables(self, run_dir: Path, tables_dir: Path) -> dict[str, object]:
        load_kernel()  # a missing build stops the step before it writes anything
        try:
            run_analysis(run_dir, tables_dir.name)
        except RoqLogError as e:
            raise AnalysisError(str(e)) from None
        return {
            FRAMES_TABLE: len(pd.read_parquet(tables_dir / FRAMES_TABLE)),
            RATE_TABLE: len(pd.read_parquet(tables_dir / RATE_TABLE)),
        }

    def metrics(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> tuple[dict[str, float], dict[str, Any]]:
        try:
            return run_analysis(run_dir, tables_dir.name, meta), {}
        except RoqLogError as e:
            raise AnalysisError(str(e)) from None

    def summary_header(self, runs: list[Run]) -> list[str]:
        def describe(p: RoqParams) -> str:
            return (f"{p.transport}, rate {p.rate}, QUIC CC {p.cc}, feedback {p.feedback}"
                    + (", competing stream" if p.competing_stream else ""))  # fmt: skip

        return [
            "The receiver's video against the source, per frame the sender encoded: ssim_mean "
            "and psnr_mean_db score the picture on screen at each frame's RTP timestamp (a lost "
            "frame scores the frozen picture before it); decoded_pct = frames decoded; "
            "target/send rate from the sender's controller (priolab/workloads/roq/README.md).",
            "",
            "What ran:",
            "",
            *what_ran(runs, RoqParams, describe),
            "",
        ]

    def figure_data(
        self, run_dir: Path, meta: dict[str, Any], tables_dir: Path
    ) -> dict[str, dict[str, list[Any]]]:
        from priolab.workloads.roq.figure_data import figure_data

        return figure_data(run_dir, meta, tables_dir)


ANALYSIS = RoqAnalysis()
