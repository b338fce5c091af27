"""The predictor's agreement with real runs: a markdown table, two rows (real, predicted) per
point and scheme, each cell the mean over runs with its 95 % bootstrap CI across runs.

    python -m priolab.workloads.rise.predictor_agreement ROOT [ROOT ...] \
        [--rise-sim PATH] [--seeds 5]

Every real rise run under the ROOTs (a folder holding metrics.json, e.g. what
endpoints/rise-sim/validate.sh or a scenario's snakemake results write) is a sample of the point
its own metrics.json records (`run`: the resolved link and workload). Runs of the same point
and scheme are pooled whichever scenario they came from; only runs the harness judged valid
count. The predictor (`rise-sim`) runs each point and scheme with seeds 1..--seeds. A run whose
point the predictor cannot express (not FB/4K/Low's rates and delays, a trace, jitter, downlink
loss, a loss model other than iid or mean-burst Gilbert) is listed as skipped, with the reason.
Figures are the Guest's view after the run's warm-up unless named; `runload` is the 1-minute
load average when the run started (validate.sh's `r<rep>.loadavg`), where recorded; "Guest
socket drops" are the kernel's UDP RcvbufErrors in the Guest's namespace during the run
(validate.sh's `r<rep>.udp`, else metadata.json's `udp_drops.guest`; the predictor has no
socket, so "–"). Invalid runs are counted and their judge's reasons listed under the table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from analysis.stats import bootstrap_ci
from priolab.engine import rundir
from priolab.engine.reasons import from_metadata, kind

# metric key -> column title
COLUMNS = {
    "mtp_median_ms": "MTP p50 (ms)",
    "mtp_p99_ms": "MTP p99 (ms)",
    "stall_pct": "stall (% of run)",
    "displayed_fps": "displayed fps",
    "cwnd_guest_kb": "Guest cwnd p50 (kB)",
    "ack_evicted_guest": "Guest ACKs evicted",
    "video_dropped_guest": "Guest video dropped at B",
    "deadline_exp_host": "Host deadline expirations",
    "lost_pkts_host": "Host packets lost",
    "rcvbuf_drops_guest": "Guest socket drops",
    "cwnd_host_kb": "Host cwnd p50 (kB)",
}
# what the predictor models (endpoints/rise-sim/src/scenario.rs, FB-4K-Low)
SIM_SETTING = {"up_mbps": 70.0, "down_mbps": 1000.0, "delay_ms": 10.5, "video_mbps": 30.0}
SIM_SETTING_NAME = "FB-4K-Low"


class Unsupported(ValueError):
    """The run's point is outside what rise-sim models."""


def _scheme(w: dict[str, Any]) -> str:
    g, h = bool(w["prio_guest"]), bool(w["prio_host"])
    if g and h:
        return "pri"
    if g or h:
        return "pri-u" if g else "pri-d"
    return "nopri-tail" if w.get("fifo_drop") == "tail" else "nopri"


def sim_point(run: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """(scheme, rise-sim arguments of the point) from a metrics.json `run` record."""
    up, down, w = run["link"]["uplink"], run["link"]["downlink"], run["workload"]
    if w.get("kind") != "rise":
        raise Unsupported(f"workload {w.get('kind')!r}")
    for d, name in ((up, "uplink"), (down, "downlink")):
        if d.get("trace") or d.get("unlimited") or d.get("jitter_ms"):
            raise Unsupported(f"{name}: trace, unlimited or jitter")
        if d.get("delay_ms") != SIM_SETTING["delay_ms"]:
            raise Unsupported(f"{name}: delay_ms {d.get('delay_ms')}")
    if down.get("rate_mbps") != SIM_SETTING["down_mbps"] or down["loss"]["model"] != "none":
        raise Unsupported("downlink: not 1 Gbit/s without loss")
    if (down.get("queue") or {}).get("bdp_factor") != 1.0:
        raise Unsupported("downlink: queue not 1 BDP")
    if w["video_bitrate_mbps"] != SIM_SETTING["video_mbps"] or w["fps"] != 30:
        raise Unsupported("video: not 30 Mbit/s at 30 fps")
    if w.get("frame_trace") or w.get("tracking_trace") or w.get("processing_delay_ms"):
        raise Unsupported("frame or tracking trace, or a processing delay")
    args: list[str] = []
    loss = up["loss"]
    if loss["model"] == "iid":
        args += ["--loss-pct", f"{loss['loss_pct']:g}"]
    elif loss["model"] == "gilbert_elliott_mean":
        args += [
            "--loss-pct",
            f"{loss['loss_pct']:g}",
            "--ge-burst-pkts",
            f"{loss['burst_pkts']:g}",
        ]
    elif loss["model"] != "none":
        raise Unsupported(f"uplink loss model {loss['model']!r}")
    pol = up.get("policer")
    if pol:
        if pol["rate_mbps"] != SIM_SETTING["up_mbps"]:
            raise Unsupported(f"policer rate {pol['rate_mbps']} Mbit/s")
        args += ["--policer-burst-bytes", str(pol["burst_bytes"])]
    else:
        if up.get("rate_mbps") != SIM_SETTING["up_mbps"]:
            raise Unsupported(f"uplink rate {up.get('rate_mbps')} Mbit/s")
        q = up["queue"]
        if q.get("bdp_factor") is None or q.get("limit_bytes") or q.get("limit_packets"):
            raise Unsupported("uplink queue not given as bdp_factor")
        if q["bdp_factor"] != 1.0:
            args += ["--queue-bdp", f"{q['bdp_factor']:g}"]
        if q.get("drop") == "head":
            args += ["--queue-drop", "head"]
    if w["buffer_bytes"] != 1 << 20:
        args += ["--buffer-bytes", str(w["buffer_bytes"])]
    if w["keyframe_factor"] != 9:
        args += ["--keyframe-factor", f"{w['keyframe_factor']:g}"]
    if w["cc"] != "cubic":
        if w["cc"] != "newreno":
            raise Unsupported(f"cc {w['cc']!r}")
        args += ["--cc", "newreno"]
    args += ["--speed-deg-s", f"{w['tracking_speed_deg_s']:g}"]
    args += ["--duration-s", f"{run['duration_s']:g}", "--warmup-s", f"{w['warmup_s']:g}"]
    return _scheme(w), tuple(args)


def label(args: tuple[str, ...]) -> str:
    """A short name of a point from its rise-sim arguments."""
    a = dict(zip(args[::2], args[1::2], strict=True))
    parts = []
    if "--policer-burst-bytes" in a:
        parts.append(f"policer {int(a['--policer-burst-bytes']) / 1000:g} kB")
    else:
        parts.append(f"queue {a.get('--queue-bdp', '1')} BDP")
    if "--loss-pct" in a:
        kind = f"GE burst {a['--ge-burst-pkts']}" if "--ge-burst-pkts" in a else "iid"
        parts.append(f"loss {a['--loss-pct']} % {kind}")
    for key in ("--buffer-bytes", "--keyframe-factor", "--cc", "--queue-drop"):
        if key in a:
            parts.append(f"{key[2:]} {a[key]}")
    return ", ".join(parts)


def real_metrics(met: dict[str, Any]) -> dict[str, float]:
    return {
        "mtp_median_ms": float(met["mtp_median_ms"]),
        "mtp_p99_ms": float(met["mtp_p99_ms"]),
        "stall_pct": float(met["stall_pct"]),
        "displayed_fps": float(met["displayed_fps"]),
        "cwnd_guest_kb": float(met["cwnd_median_bytes_guest"]) / 1000,
        "ack_evicted_guest": float(met["evicted_ack_guest"]),
        "video_dropped_guest": float(met["dropped_ingress_video_guest"]),
        "deadline_exp_host": float(met["deadline_expirations_host"]),
        "lost_pkts_host": float(met["lost_packets_host"]),
        "cwnd_host_kb": float(met["cwnd_median_bytes_host"]) / 1000,
    }


# /proc/net/snmp's Udp values: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors ...
RCVBUF_ERRORS_FIELD = 4


def rcvbuf_drops(run_dir: Path, role: str = "guest") -> float:
    """The role's UDP RcvbufErrors during the run: the last sample of validate.sh's
    `r<rep>.udp` where it exists, else the growth the engine's agent recorded for the node
    (metadata.json `udp_drops`, since a612a1d); NaN if neither."""
    f = run_dir.with_name(run_dir.name + ".udp")
    last = float("nan")
    try:
        lines = f.read_text().splitlines()
    except OSError:
        return _recorded_rcvbuf_drops(run_dir, role)
    for line in lines:
        parts = line.split()
        if len(parts) > RCVBUF_ERRORS_FIELD + 2 and parts[0] == role and parts[1] == "Udp:":
            try:
                last = float(parts[2 + RCVBUF_ERRORS_FIELD])
            except ValueError:
                continue
    return last


def _recorded_rcvbuf_drops(run_dir: Path, node: str) -> float:
    """metadata.json's `udp_drops[node].RcvbufErrors` (the engine's agent), NaN if absent."""
    try:
        meta = json.loads((run_dir / rundir.METADATA).read_text())
        return float(meta["udp_drops"][node]["RcvbufErrors"])
    except (OSError, ValueError, KeyError, TypeError):
        return float("nan")


def invalid_reasons(run_dir: Path) -> list[str]:
    """Why the judge marked the run invalid, as the kinds of its reasons (metadata.json
    `invalid` codes; an older run folder's prose whole) so that equal causes group;
    ['unrecorded'] if absent."""
    try:
        meta = json.loads((run_dir / rundir.METADATA).read_text())
    except (OSError, ValueError):
        return ["unrecorded"]
    return [kind(r) for r in from_metadata(meta if isinstance(meta, dict) else {})] or [
        "unrecorded"
    ]


def _commit(run_dir: Path) -> str:
    """`@<short commit>` of the checkout the run came from (metadata.json), or ''."""
    try:
        meta = json.loads((run_dir / rundir.METADATA).read_text())
        return "@" + str(meta["git"]["commit"])[:7]
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def run_load(run_dir: Path) -> float | None:
    """The 1-minute load average when the run started (validate.sh's `r<rep>.loadavg`)."""
    f = run_dir.with_name(run_dir.name + ".loadavg")
    try:
        return float(f.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def predicted(rise_sim: Path, args: tuple[str, ...], scheme: str, seed: int) -> dict[str, float]:
    argv = [str(rise_sim), "--setting", SIM_SETTING_NAME, "--scheme", scheme]
    argv += ["--seed", str(seed), *args]
    out = subprocess.run(argv, check=True, capture_output=True, text=True)
    doc: dict[str, Any] = json.loads(out.stdout)
    m = doc["metrics"]
    g, ge, h = m["guest"], m["guest_endpoint"], m["host"]
    window_s = float(doc["duration_s"]) - float(m["warmup_s"])

    def num(x: float | None) -> float:
        return float("nan") if x is None else float(x)

    return {
        "mtp_median_ms": num(g["mtp_median_ms"]),
        "mtp_p99_ms": num(g["mtp_p99_ms"]),
        "stall_pct": 100 * float(g["stall_s"]) / window_s,
        "displayed_fps": float(g["displayed_fps"]),
        "cwnd_guest_kb": float(ge["cwnd_bytes_p50"]) / 1000,
        "ack_evicted_guest": float(ge["channels"]["ack"]["evicted"]),
        "video_dropped_guest": float(ge["channels"]["video"]["dropped_ingress"]),
        "deadline_exp_host": float(h["deadline_expirations"]),
        "lost_pkts_host": float(h["lost_packets"]),
        "rcvbuf_drops_guest": float("nan"),
        "cwnd_host_kb": float(h["cwnd_bytes_p50"]) / 1000,
    }


def _num(x: float) -> str:
    if not np.isfinite(x):
        return "–"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def cell(values: list[float]) -> str:
    """Mean and 95 % bootstrap CI across runs: `m [lo, hi]`, or `m` for one run."""
    mean, lo, hi, n = bootstrap_ci(values)
    if n == 0:
        return "–"
    if n == 1 or lo == hi:
        return _num(mean)
    return f"{_num(mean)} [{_num(lo)}, {_num(hi)}]"


class Group:
    def __init__(self) -> None:
        self.valid: list[dict[str, float]] = []
        self.invalid = 0
        self.invalid_why: dict[str, int] = defaultdict(int)
        self.loads: list[float] = []
        self.sources: set[str] = set()


def collect(roots: list[Path]) -> tuple[dict[tuple[tuple[str, ...], str], Group], list[str]]:
    """Real runs under `roots`, grouped by (point arguments, scheme); and the skipped ones."""
    groups: dict[tuple[tuple[str, ...], str], Group] = defaultdict(Group)
    skipped: list[str] = []
    for root in roots:
        for path in sorted(root.rglob(rundir.METRICS)):
            doc = json.loads(path.read_text())
            if "run" not in doc:
                continue
            try:
                scheme, args = sim_point(doc["run"])
            except (Unsupported, KeyError) as e:
                skipped.append(f"{path.parent}: {e}")
                continue
            grp = groups[(args, scheme)]
            if not doc.get("valid") or "metrics" not in doc:
                grp.invalid += 1
                for why in invalid_reasons(path.parent):
                    grp.invalid_why[why] += 1
                continue
            grp.sources.add(
                f"{doc['run']['scenario']}/{doc['run']['setting']}{_commit(path.parent)}"
            )
            grp.valid.append(
                {**real_metrics(doc["metrics"]), "rcvbuf_drops_guest": rcvbuf_drops(path.parent)}
            )
            if (load := run_load(path.parent)) is not None:
                grp.loads.append(load)
    return groups, skipped


def table(roots: list[Path], rise_sim: Path, seeds: int) -> str:
    groups, skipped = collect(roots)
    head = "| point | scheme | source | runs | " + " | ".join(COLUMNS.values()) + " |"
    lines = [head, "|" + "---|" * (4 + len(COLUMNS))]
    notes = []
    for (args, scheme), grp in sorted(groups.items(), key=lambda kv: (label(kv[0][0]), kv[0][1])):
        sim = [predicted(rise_sim, args, scheme, s) for s in range(1, seeds + 1)]
        n_real = f"{len(grp.valid)} valid of {len(grp.valid) + grp.invalid}"
        if grp.loads:
            n_real += f", load {min(grp.loads):.2f}–{max(grp.loads):.2f}"
        for source, rows, n in (
            ("real", grp.valid, n_real),
            ("predicted", sim, f"seeds 1–{seeds}"),
        ):
            cells = [cell([r[k] for r in rows]) for k in COLUMNS]
            lines.append(
                f"| {label(args)} | {scheme} | {source} | {n} | " + " | ".join(cells) + " |"
            )
        if grp.sources:
            notes.append(
                f"- {label(args)}, {scheme}: valid real runs from {', '.join(sorted(grp.sources))}"
            )
        if grp.invalid:
            why = "; ".join(f"{w} ({n}×)" for w, n in sorted(grp.invalid_why.items()))
            notes.append(f"- {label(args)}, {scheme}: {grp.invalid} invalid, left out: {why}")
    out = "\n".join(lines) + "\n\n" + "\n".join(notes)
    if skipped:
        out += "\n\nskipped (the predictor cannot express the point):\n" + "\n".join(
            f"- {s}" for s in skipped
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m priolab.workloads.rise.predictor_agreement", description=__doc__
    )
    ap.add_argument("roots", type=Path, nargs="+", help="folders holding analysed real runs")
    ap.add_argument("--rise-sim", type=Path, default=Path("target/release/rise-sim"))
    ap.add_argument("--seeds", type=int, default=5, help="predictor runs per point and scheme")
    a = ap.parse_args(argv)
    for root in a.roots:
        if not root.is_dir():
            print(f"error: {root}: not a directory", file=sys.stderr)
            return 2
    if not a.rise_sim.is_file():
        hint = "cargo build --release -p rise-sim"
        print(f"error: {a.rise_sim}: no rise-sim binary ({hint})", file=sys.stderr)
        return 2
    if a.seeds < 1:
        print(f"error: --seeds {a.seeds}: allowed >= 1", file=sys.stderr)
        return 2
    print(table(a.roots, a.rise_sim, a.seeds))
    print(
        "\ncells: mean [95 % bootstrap CI across runs]; the Guest's view after the warm-up"
        " unless named; the predictor runs each point with seeds 1..n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
