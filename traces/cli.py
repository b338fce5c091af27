"""`priolab trace ...`: inspect, convert, scale, generate, fit and plot traces.

Wired into the main CLI by `register(subparsers)`; also runnable as `python -m traces.cli`.
Every handler prints `error: <file>, line <n>: <problem>` and returns 2 on bad input.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from traces.errors import TraceError
from traces.throughput import (
    DeliveryOpportunities,
    RateSchedule,
    write_mahimahi,
    write_schedule,
)

if TYPE_CHECKING:
    from traces.config import TraceRate
    from traces.tracking_layouts import TrackingSource

Trace = RateSchedule | DeliveryOpportunities
Handler = Callable[[argparse.Namespace], int]


def _guard(fn: Handler) -> Handler:
    @functools.wraps(fn)
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except TraceError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2

    return run


# --------------------------------------------------------------------------- reading


def sniff_format(path: Path) -> str:
    """mahimahi (one integer per line), csv (commas), else schedule (whitespace columns)."""
    try:
        with Path(path).open() as f:
            for line in f:
                s = line.strip()
                if not s or s.startswith("#"):
                    continue
                if "," in s:
                    return "csv"
                return "mahimahi" if len(s.split()) == 1 else "schedule"
    except OSError as e:
        raise TraceError(path, f"cannot read: {e.strerror or e}") from e
    raise TraceError(path, "empty file")


def _add_input(p: argparse.ArgumentParser) -> None:
    """The reading options of a link's `trace:` in a scenario (netem.model.TraceRate), as flags."""
    p.add_argument("input", type=Path, help="throughput trace")
    p.add_argument(
        "--format",
        choices=["auto", "mahimahi", "schedule", "csv"],
        default="auto",
        help="the input's format (default: auto, recognised from the file; README: formats)",
    )
    p.add_argument("--column", type=int, default=None, help="schedule: 1-based rate column")
    p.add_argument(
        "--row-step-s", type=float, default=None, help="schedule: one row per this many seconds"
    )
    p.add_argument(
        "--duplicates", choices=["error", "mean"], default="error", help="rows of one time"
    )
    p.add_argument("--time-column", help="csv: time column")
    p.add_argument("--time-format", help="csv: strptime format of a date-time time column")
    p.add_argument("--rate-column", help="csv: rate column")
    p.add_argument("--rate-unit", choices=["bps", "kbps", "mbps"], help="csv: rate unit")
    p.add_argument("--step-s", type=float, default=None, help="csv: resampling step")
    p.add_argument("--gap", choices=["error", "hold", "zero"], default=None, help="csv gaps")
    p.add_argument("--max-gap-s", type=float, default=None, help="csv: longest normal gap")
    p.add_argument("--start-s", type=float, default=None, help="window: start (s), re-based to 0")
    p.add_argument("--end-s", type=float, default=None, help="window: end (s, exclusive)")


def trace_config(args: argparse.Namespace) -> TraceRate:
    """The flags as the `trace:` mapping a scenario would hold (same model, same checks)."""
    from pydantic import ValidationError

    from ground.errors import problems_from
    from traces.config import TraceRate

    fmt = sniff_format(args.input) if args.format == "auto" else args.format
    given = {
        "rate_column": args.column if fmt != "csv" else args.rate_column,
        "row_step_s": args.row_step_s,
        "time_column": args.time_column,
        "time_format": args.time_format,
        "rate_unit": args.rate_unit,
        "step_s": args.step_s,
        "gap": args.gap,
        "max_gap_s": args.max_gap_s,
        "start_s": args.start_s,
        "end_s": args.end_s,
    }
    cfg = {"file": args.input, "format": fmt, **{k: v for k, v in given.items() if v is not None}}
    if args.duplicates != "error":
        cfg["duplicates"] = args.duplicates
    try:
        return TraceRate.model_validate(cfg)
    except ValidationError as e:
        flag = {k: "--" + k.replace("_", "-") for k in TraceRate.model_fields}
        flag["rate_column"] = "--rate-column" if fmt == "csv" else "--column"
        msgs = []
        for k, m in problems_from(e):
            for field, f in flag.items():
                m = re.sub(rf"\b{field}\b", f, m)
            msgs.append(m if k == "(top level)" else f"{flag.get(k, k)}: {m}")
        raise TraceError(args.input, "; ".join(msgs)) from e


def read_input(args: argparse.Namespace) -> Trace:
    """The input trace as the flags read it, cut to --start-s/--end-s (re-based to 0), as a
    scenario's link would replay it (before scaling)."""
    from traces.errors import TraceWindowError
    from traces.throughput import read_trace
    from traces.throughput_ops import window

    cfg = trace_config(args)
    try:
        return window(read_trace(cfg, args.input), cfg.start_s, cfg.end_s, args.input)
    except TraceWindowError as e:
        raise TraceError(args.input, f"--{e.key.replace('_', '-')}: {e.bare}") from e


def _throughput_only(args: argparse.Namespace, kind: str) -> None:
    """--start-s/--end-s cut throughput traces only."""
    if args.start_s is not None or args.end_s is not None:
        raise TraceError(args.input, f"--start-s/--end-s: only for throughput traces, not {kind}")


def write_output(x: Trace, path: Path, to: str) -> None:
    from traces.throughput_ops import to_opportunities, to_schedule

    if to == "mahimahi":
        write_mahimahi(x if isinstance(x, DeliveryOpportunities) else to_opportunities(x), path)
    else:
        write_schedule(x if isinstance(x, RateSchedule) else to_schedule(x), path)


def _fmt_of(x: Trace) -> str:
    return "mahimahi" if isinstance(x, DeliveryOpportunities) else "schedule"


# --------------------------------------------------------------------------- handlers


@_guard
def cmd_info(args: argparse.Namespace) -> int:
    from traces.throughput_ops import summary

    first = _first_line(args.input)
    if _is_tracking(first):
        _throughput_only(args, "a head-movement trace")
        return _tracking_info(args.input, args.json)
    if _is_frame_trace(first):
        _throughput_only(args, "a frame trace")
        return _frames_info(args.input, args.json)
    s = summary(read_input(args), below_mbps=args.below_mbps, bin_s=args.bin_s)
    if args.json:
        print(json.dumps(asdict(s)))
    else:
        for k, v in asdict(s).items():
            if v is not None:
                print(f"{k:16s} {v:.6g}" if isinstance(v, float) else f"{k:16s} {v}")
    return 0


def _first_line(path: Path) -> str:
    try:
        with Path(path).open() as f:
            for line in f:
                if line.strip():
                    return line.strip()
    except OSError as e:
        raise TraceError(path, f"cannot read: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise TraceError(path, "not a text file") from e
    raise TraceError(path, "empty file")


def _tracking_info(path: Path, as_json: bool) -> int:
    from traces.tracking import angular_speed_deg_s, read_tracking

    t = read_tracking(path)
    sp = angular_speed_deg_s(t) if len(t.times_s) > 1 else np.zeros(1)
    d = {
        "kind": "tracking",
        "samples": len(t.times_s),
        "duration_s": t.duration_s,
        "median_dt_ms": float(np.median(np.diff(t.times_s)) * 1000) if len(t.times_s) > 1 else 0,
        "median_speed_deg_s": float(np.median(sp)),
        "p90_speed_deg_s": float(np.percentile(sp, 90)),
    }
    print(json.dumps(d) if as_json else "\n".join(f"{k:20s} {v}" for k, v in d.items()))
    return 0


def _is_frame_trace(first_line: str) -> bool:
    """The plain or GoP frame CSV (same first two columns), or ffprobe's CSV."""
    s = first_line.replace(" ", "")
    return (
        s == "frame_type,size_bytes"
        or s.startswith("frame_type,size_bytes,")
        or (s.startswith("frame,"))
    )


def _frames_info(path: Path, as_json: bool) -> int:
    from traces.frames import read_frames

    f = read_frames(path)
    d: dict[str, Any] = {
        "kind": "frames",
        "frames": len(f.size_bytes),
        "key_frames": int(f.is_key.sum()),
        "mean_bytes": float(f.size_bytes.mean()),
        "max_bytes": int(f.size_bytes.max()),
        "mean_delta_bytes": float(f.size_bytes[~f.is_key].mean()) if (~f.is_key).any() else 0,
    }
    if f.gop is not None:
        for t in ("I", "P", "B"):
            sel = np.array([x == t for x in f.gop.pict_type])
            d[f"{t}_frames"] = int(sel.sum())
            d[f"mean_{t}_bytes"] = float(f.size_bytes[sel].mean()) if sel.any() else 0.0
        step_ms = float(np.median(np.diff(np.sort(f.gop.pts_ms)))) if len(f.size_bytes) > 1 else 0
        d["fps"] = 1000.0 / step_ms if step_ms > 0 else 0.0
        d["mean_mbps"] = f.mean_bitrate_mbps(d["fps"]) if step_ms > 0 else 0.0
    print(json.dumps(d) if as_json else "\n".join(f"{k:18s} {v}" for k, v in d.items()))
    return 0


@_guard
def cmd_convert(args: argparse.Namespace) -> int:
    write_output(read_input(args), args.output, args.to)
    return 0


@_guard
def cmd_scale(args: argparse.Namespace) -> int:
    from traces.throughput_ops import mean_mbps, scale, scale_to_mean

    x = read_input(args)
    y = (
        scale(x, args.factor)
        if args.factor is not None
        else scale_to_mean(x, args.target_mean_mbps)
    )
    write_output(y, args.output, args.to or _fmt_of(x))
    print(f"mean {mean_mbps(x):.6g} -> {mean_mbps(y):.6g} Mbit/s")
    return 0


@_guard
def cmd_generate(args: argparse.Namespace) -> int:
    from traces import generate as g

    if args.kind == "constant":
        if args.rate_mbps is None:
            raise TraceError(None, "generate constant needs --rate-mbps")
        x: Trace = g.constant(args.rate_mbps, args.duration_s)
    elif args.kind == "steps":
        if not args.spec:
            raise TraceError(None, "generate steps needs --spec start_s:rate_mbps,...")
        x = g.steps(args.spec, args.duration_s)
    else:
        model = g.load_model(args.model) if args.model else g.DEFAULT_CELLULAR
        x = g.generate_markov(model, args.duration_s, args.seed)
    write_output(x, args.output, args.to)
    return 0


@_guard
def cmd_fit(args: argparse.Namespace) -> int:
    from traces import generate as g

    model = g.fit(read_input(args), args.states, args.fit_step_s, name=args.input.name)
    if args.out:
        g.save_model(model, args.out)
    else:
        print(json.dumps(model.model_dump(), indent=2))
    if args.twin:
        twin = g.generate_markov(model, args.twin_duration_s or _duration(args), args.seed)
        write_output(twin, args.twin, args.to)
    return 0


def _duration(args: argparse.Namespace) -> float:
    from traces.throughput_ops import duration_s

    return duration_s(read_input(args))


@_guard
def cmd_plot(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    first = _first_line(args.input)
    if _is_tracking(first) or _is_frame_trace(first):
        _throughput_only(args, "a head-movement or frame trace")
    fig, ax = plt.subplots(figsize=(8, 3))
    if _is_tracking(first):
        from traces.tracking import read_tracking

        t = read_tracking(args.input)
        e = np.degrees(t.euler())
        for i, name in enumerate(("yaw", "pitch", "roll")):
            ax.plot(t.times_s, e[:, i], label=name, lw=0.8)
        ax.set_ylabel("angle (deg)")
        ax.legend(loc="upper right")
    elif _is_frame_trace(first):
        from traces.frames import read_frames

        f = read_frames(args.input)
        idx = np.arange(len(f.size_bytes))
        ax.bar(idx, f.size_bytes, width=1.0, color=np.where(f.is_key, "C3", "C0"))
        ax.set_xlabel("frame")
        ax.set_ylabel("size (bytes)")
    else:
        from traces.throughput_ops import to_schedule

        x = read_input(args)
        s = x if isinstance(x, RateSchedule) else to_schedule(x, round(args.bin_s * 1000))
        ax.step(np.append(s.times_s, s.duration_s), np.append(s.rate_mbps, s.rate_mbps[-1]),
                where="post", lw=0.8)  # fmt: skip
        ax.set_ylabel("rate (Mbit/s)")
    if not ax.get_xlabel():
        ax.set_xlabel("time (s)")
    ax.set_title(args.input.name)
    fig.tight_layout()
    fig.savefig(args.output, dpi=100)
    plt.close(fig)
    return 0


def _is_tracking(first_line: str) -> bool:
    """A head-movement trace: the endpoint's CSV, a Corbillon file, or a table naming yaw or
    a quaternion (traces.tracking_layouts)."""
    low = first_line.lower()
    return (
        first_line.startswith(("time_s,", "timestamp viewpoint"))
        or "yaw" in low
        or "quaternion" in low
    )


def tracking_source(args: argparse.Namespace) -> TrackingSource:
    """The tracking flags as the `tracking_trace:` mapping a scenario would hold."""
    from pydantic import ValidationError

    from ground.errors import problems_from
    from traces.tracking_layouts import TrackingSource

    cfg: dict[str, object] = {"file": args.input}
    for key in ("layout", "time_unit", "time_format", "angle_unit"):
        if getattr(args, key) is not None:
            cfg[key] = getattr(args, key)
    if args.column:
        pairs = [c.partition("=") for c in args.column]
        cfg["columns"] = {k: v for k, _, v in pairs}
    try:
        return TrackingSource.model_validate(cfg)
    except ValidationError as e:
        msgs = [f"--{k.split('.')[0].replace('_', '-')}: {m}" for k, m in problems_from(e)]
        raise TraceError(args.input, "; ".join(msgs)) from e


@_guard
def cmd_tracking(args: argparse.Namespace) -> int:
    from traces.tracking import read_tracking, resample, write_tracking_csv
    from traces.tracking_gen import SPEEDS_DEG_S, synthetic_tracking

    if args.synthetic is not None:
        if args.input is not None:
            raise TraceError(args.input, "give an input trace or --synthetic, not both")
        spd = SPEEDS_DEG_S.get(args.synthetic)
        if spd is None:
            try:
                spd = float(args.synthetic)
            except ValueError:
                raise TraceError(
                    None, f"--synthetic {args.synthetic!r}; allowed slow, moderate, fast or deg/s"
                ) from None
        t = synthetic_tracking(spd, args.duration_s or 60.0, args.seed, args.rate_hz)
    else:
        if args.input is None:
            raise TraceError(None, "give an input trace or --synthetic SPEED")
        src = tracking_source(args)
        t = resample(
            read_tracking(args.input, src), args.rate_hz, args.duration_s, not args.no_loop
        )
    write_tracking_csv(t, args.output)
    return 0


@_guard
def cmd_video(args: argparse.Namespace) -> int:
    from traces.frames import encode_trace, write_frame_csv

    f = encode_trace(
        args.bitrate_mbps, args.fps, args.duration_s, args.width, args.height, args.bufsize_frames
    )
    write_frame_csv(f, args.output)
    print(
        f"{len(f.size_bytes)} frames, {int(f.is_key.sum())} key, "
        f"{f.mean_bitrate_mbps(args.fps):.3f} Mbit/s"
    )
    return 0


@_guard
def cmd_gop(args: argparse.Namespace) -> int:
    from traces.frames import encode_gop_trace, write_frame_csv

    f = encode_gop_trace(
        args.bitrate_mbps, args.fps, args.duration_s, args.gop_frames, args.b_frames,
        args.width, args.height, args.noise,
    )  # fmt: skip
    write_frame_csv(f, args.output)
    assert f.gop is not None
    counts = {t: f.gop.pict_type.count(t) for t in ("I", "P", "B")}
    print(f"{len(f.size_bytes)} frames {counts}, {f.mean_bitrate_mbps(args.fps):.3f} Mbit/s")
    return 0


# --------------------------------------------------------------------------- wiring


def _add_to(p: argparse.ArgumentParser, what: str) -> None:
    """`--to mahimahi|schedule`, schedule by default."""
    p.add_argument(
        "--to",
        choices=["mahimahi", "schedule"],
        default="schedule",
        help=f"{what} (default: schedule)",
    )


def _add_encode(
    p: argparse.ArgumentParser, bitrate_mbps: float, fps: int, duration_s: float
) -> None:
    """The options of a real libx264 encode (`video`, `gop`), with their defaults."""
    p.add_argument(
        "--bitrate-mbps",
        type=float,
        default=bitrate_mbps,
        help=f"the encoder's target (default: {bitrate_mbps:g})",
    )
    p.add_argument("--fps", type=int, default=fps, help=f"frames per second (default: {fps})")
    p.add_argument(
        "--duration-s",
        type=float,
        default=duration_s,
        help=f"seconds of video (default: {duration_s:g})",
    )
    p.add_argument("--width", type=int, default=1280, help="frame width in pixels (default: 1280)")
    p.add_argument("--height", type=int, default=720, help="frame height in pixels (default: 720)")


def register(subparsers: argparse._SubParsersAction) -> None:
    trace = subparsers.add_parser("trace", help="throughput, head-movement and frame-size traces")
    sub = trace.add_subparsers(dest="trace_command", required=True)

    p = sub.add_parser("info", help="summary statistics of a trace (any kind)")
    _add_input(p)
    p.add_argument("--below-mbps", type=float, help="also: fraction of time under this rate")
    p.add_argument("--bin-s", type=float, default=1.0, help="Mahimahi: bin for min/max/median")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("convert", help="convert between Mahimahi and schedule; cut a window")
    _add_input(p)
    p.add_argument("output", type=Path, help="the converted trace")
    p.add_argument(
        "--to", choices=["mahimahi", "schedule"], required=True, help="the output's format"
    )
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("scale", help="scale by a factor or to a target mean")
    _add_input(p)
    p.add_argument("output", type=Path, help="the scaled trace")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--factor", type=float, help="multiply every rate by this factor")
    g.add_argument(
        "--target-mean-mbps", type=float, help="scale so that the mean rate is this (Mbit/s)"
    )
    p.add_argument("--to", choices=["mahimahi", "schedule"], help="default: the input's form")
    p.set_defaults(func=cmd_scale)

    p = sub.add_parser("generate", help="constant, step or Markov-modulated throughput trace")
    p.add_argument(
        "kind",
        choices=["constant", "steps", "markov"],
        help="constant (--rate-mbps), steps (--spec) or markov (--model)",
    )
    p.add_argument("output", type=Path, help="the generated trace")
    p.add_argument("--duration-s", type=float, required=True, help="its length in seconds")
    p.add_argument("--rate-mbps", type=float, help="constant")
    p.add_argument("--spec", help='steps: "start_s:rate_mbps,...", e.g. "0:1,30:0.5,60:1"')
    p.add_argument("--model", type=Path, help="markov: model JSON (default: DEFAULT_CELLULAR)")
    p.add_argument("--seed", type=int, default=1, help="markov: the random seed (default: 1)")
    _add_to(p, "the output's format")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("fit", help="fit the Markov model to a trace (and write a twin)")
    _add_input(p)
    p.add_argument("--states", type=int, default=4, help="the model's states (default: 4)")
    p.add_argument(
        "--fit-step-s",
        type=float,
        default=1.0,
        help="the rate is fitted on bins of this many seconds (default: 1)",
    )
    p.add_argument("--out", type=Path, help="model JSON (default: print)")
    p.add_argument("--twin", type=Path, help="also write a synthetic twin here")
    p.add_argument("--twin-duration-s", type=float, help="default: the input's duration")
    p.add_argument("--seed", type=int, default=1, help="the twin's random seed (default: 1)")
    _add_to(p, "the twin's format")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("plot", help="plot a trace (any kind) as PNG")
    _add_input(p)
    p.add_argument("output", type=Path, help="the PNG to write")
    p.add_argument(
        "--bin-s", type=float, default=1.0, help="Mahimahi: the rate's bin in seconds (default: 1)"
    )
    p.set_defaults(func=cmd_plot)

    p = sub.add_parser("tracking", help="head movement: convert/resample, or generate")
    p.add_argument("input", type=Path, nargs="?", help="any head-movement trace (README)")
    p.add_argument("output", type=Path, help="time_s,yaw_rad,pitch_rad,roll_rad CSV")
    p.add_argument(
        "--rate-hz", type=float, default=60.0, help="samples per second of the output (default: 60)"
    )
    p.add_argument("--duration-s", type=float, help="default: the input's length (synthetic 60)")
    p.add_argument("--no-loop", action="store_true", help="cut at the end instead of looping")
    p.add_argument("--synthetic", help="slow|moderate|fast or a speed in deg/s")
    p.add_argument("--seed", type=int, default=1, help="--synthetic: the random seed (default: 1)")
    p.add_argument("--layout", choices=["auto", "rows", "wide"], help="table: rows or wide")
    p.add_argument("--time-unit", choices=["s", "ms", "us", "ns"], help="numeric time unit")
    p.add_argument("--time-format", help="strptime format of a date-time time column")
    p.add_argument("--angle-unit", choices=["deg", "rad"], help="Euler angle unit")
    p.add_argument(
        "--column",
        action="append",
        metavar="SIGNAL=NAME",
        help="name a signal's column (time, yaw, pitch, roll, w, x, y, z); repeatable",
    )
    p.set_defaults(func=cmd_tracking)

    p = sub.add_parser("video", help="frame-size trace from a real ffmpeg/libx264 encode")
    p.add_argument("output", type=Path, help="frame_type,size_bytes CSV")
    _add_encode(p, bitrate_mbps=10.0, fps=30, duration_s=10.0)
    p.add_argument("--bufsize-frames", type=float, default=10.0, help="VBV size in frames")
    p.set_defaults(func=cmd_video)

    p = sub.add_parser("gop", help="I/P/B GoP trace (types, sizes, pts/dts, refs) from libx264")
    p.add_argument("output", type=Path, help="GoP CSV (traces/README.md)")
    _add_encode(p, bitrate_mbps=2.7, fps=25, duration_s=20.0)
    p.add_argument("--gop-frames", type=int, default=50, help="key frame interval (-g)")
    p.add_argument("--b-frames", type=int, default=2, help="B frames between references")
    p.add_argument("--noise", type=int, default=6, help="temporal noise strength, 0 = none")
    p.set_defaults(func=cmd_gop)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="traces")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
