"""The probe workload's analysis: a probe run's outputs → figures, and the calibration's
verdicts against its one table of targets (`TARGETS`).

Every reader takes a finished run folder (engine/rundir.py's layout); the arithmetic is
pure and tested on hand-made data (tests/test_netem_calibrate.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ground import rundir
from priolab.workloads.probe import FRAME_OVERHEAD_BYTES, PAYLOAD_BYTES, PROBE_FILE


@dataclass(frozen=True)
class Target:
    """One calibration target: how a figure is judged and how the rule reads."""

    kind: Literal["within_pct", "abs_le", "ge", "true"]
    limit: float | None = None

    @property
    def wanted(self) -> str:
        return {
            "within_pct": f"within ±{self.limit} %",
            "abs_le": f"<= {self.limit}",
            "ge": f">= {self.limit}",
            "true": "true",
        }[self.kind]

    def passes(self, value: float | bool | None) -> bool:
        if self.kind == "true":
            return bool(value)
        if value is None or self.limit is None:
            return False
        if self.kind == "ge":
            return float(value) >= self.limit
        return abs(float(value)) <= self.limit


TARGETS: dict[str, Target] = {
    "rate_error_pct_1_to_500": Target("within_pct", 2),
    "rate_fraction_above_500": Target("ge", 0.95),
    "delay_median_error_ms": Target("abs_le", 0.2),
    "delay_p99_error_ms": Target("abs_le", 1.0),
    "loss_rel_error_pct": Target("abs_le", 5),
    "burst_rel_error_pct": Target("abs_le", 10),
    "same_seed_same_pattern": Target("true"),
    "trace_correlation": Target("ge", 0.98),
}
"""The calibration's targets, the one table every verdict reads (netem/README.md gives the
reasons for each)."""


class ProbeOutputError(RuntimeError):
    """A probe run left no readable output (names the run folder and the file)."""


def _log(run: Path, process: str) -> tuple[str, str]:
    out, err = rundir.log_files(process)
    read = lambda rel: (run / rel).read_text() if (run / rel).is_file() else ""  # noqa: E731
    return read(out), read(err)


def iperf3_result(run: Path) -> dict[str, Any]:
    """iperf3 UDP's figures on the wire: the receiver's steady state (its intervals after the
    first second, no start/end effects) and whole test, the client's offered rate."""
    srv_out, _ = _log(run, "iperf3-server")
    cli_out, cli_err = _log(run, "iperf3-client")
    try:
        srv_json = json.loads(srv_out)
        srv_end = srv_json["end"]
        steady = [
            iv["sum"] for iv in srv_json.get("intervals", [])[1:] if iv["sum"]["seconds"] >= 0.5
        ]
        srv, srv_rx = srv_end["sum"], srv_end["sum_received"]
        cli = json.loads(cli_out)["end"]["sum"]
    except (json.JSONDecodeError, KeyError) as e:
        raise ProbeOutputError(f"iperf3 failed in {run}: {e}: {cli_err[-500:]}") from e
    wire = (PAYLOAD_BYTES + FRAME_OVERHEAD_BYTES) / PAYLOAD_BYTES
    return {
        "offered_mbps": cli["bits_per_second"] * wire / 1e6,
        "achieved_mbps": (
            sum(iv["bytes"] for iv in steady) * 8 / sum(iv["seconds"] for iv in steady)
            if steady
            else srv_rx["bits_per_second"]
        )
        * wire
        / 1e6,
        "achieved_whole_test_mbps": srv_rx["bits_per_second"] * wire / 1e6,
        "loss_pct": float(srv.get("lost_percent", 0.0)),
        "packets": int(srv.get("packets", 0)),
    }


def lkprobe_result(run: Path, seconds: float, flows: int) -> dict[str, Any]:
    """lkprobe's figures: the receiver's wire rate over the send span, loss, the sender's."""
    sent_out, sent_err = _log(run, "lkprobe-send")
    recv_out, recv_err = _log(run, "lkprobe-recv")
    try:
        sent, got = json.loads(sent_out), json.loads(recv_out)
    except json.JSONDecodeError as e:
        raise ProbeOutputError(
            f"lkprobe failed in {run}: send {sent_err[-300:]!r}, recv {recv_err[-300:]!r}"
        ) from e
    n_sent = int(sent["sent_packets"])
    span_s = max(seconds, float(sent["elapsed_s"]))
    return {
        "offered_mbps": float(sent["offered_mbps"]),
        "achieved_mbps": got["received_wire_bytes"] * 8 / span_s / 1e6,
        "loss_pct": 100.0 * (1 - got["received_packets"] / n_sent) if n_sent else 100.0,
        "packets": n_sent,
        "send_errors": int(sent["send_errors"]),
        "sender_elapsed_s": float(sent["elapsed_s"]),
        "flows": flows,
        "probe": "lkprobe",
    }


def probe_arrays(run: Path) -> dict[str, np.ndarray]:
    """udpprobe's receiver record: seq, size, send_ns, recv_ns per datagram received."""
    f = run / PROBE_FILE
    if not f.is_file():
        _, err = _log(run, "udpprobe-recv")
        raise ProbeOutputError(f"udpprobe recv failed in {run}: {err[-500:]}")
    with np.load(f) as z:
        return {k: z[k] for k in z.files}


def process_start_ns(run: Path, name: str) -> int | None:
    """When a planned process of the run started (its node's report), ns since the epoch."""
    for f in sorted(run.glob(rundir.NODE_REPORTS_GLOB)):
        for p in json.loads(f.read_text()).get("processes", []):
            if p["name"] == name and p.get("start_time"):
                return int(p["start_time"] * 1e9)
    return None


def link_started_ns(run: Path) -> int:
    """When the emulated link was in place: linkem's ready time, else the tc trace
    replayer's start, else the run's t0 (node reports of the run folder)."""
    best: float | None = None
    t0: float | None = None
    for f in sorted(run.glob(rundir.NODE_REPORTS_GLOB)):
        rep = json.loads(f.read_text())
        t0 = t0 or rep.get("t0")
        for p in rep.get("processes", []):
            if p["name"] == "linkem" and p.get("ready_time"):
                best = p["ready_time"]
            elif p["name"] == rundir.tc_replay("uplink") and p.get("start_time") and best is None:
                best = p["start_time"]
    return int((best or t0 or 0.0) * 1e9)


def trace_started_ns(run: Path, meta: dict[str, Any]) -> int:
    """When the link's trace reached its time 0: the link's start plus the lead the plan gave
    the trace (metadata `link_applied.trace_lead_ms`, netem.trace_lead; 0 in older runs)."""
    lead_ms = (meta.get("link_applied") or {}).get("trace_lead_ms") or 0
    return link_started_ns(run) + int(lead_ms * 1_000_000)


def owd_stats(owd_ms: np.ndarray) -> dict[str, Any]:
    return {
        "median_ms": float(np.median(owd_ms)),
        "p99_ms": float(np.percentile(owd_ms, 99)),
        "samples": int(len(owd_ms)),
    }


def delay_row(z: dict[str, np.ndarray], configured_ms: float, load_pct: float,
              sent: int) -> dict[str, Any]:  # fmt: skip
    err_ms = (z["recv_ns"] - z["send_ns"]) / 1e6 - configured_ms
    return {
        "configured_ms": configured_ms,
        "load_pct": load_pct,
        "median_error_ms": float(np.median(err_ms)) if len(err_ms) else None,
        "p99_error_ms": float(np.percentile(err_ms, 99)) if len(err_ms) else None,
        "min_error_ms": float(err_ms.min()) if len(err_ms) else None,
        "samples": int(len(err_ms)),
        "sent": sent,
    }


def received_pattern(z: dict[str, np.ndarray], count: int) -> np.ndarray:
    got = np.zeros(count, dtype=bool)
    got[z["seq"][z["seq"] < count]] = True
    return got


def loss_figures(patterns: list[np.ndarray]) -> dict[str, Any]:
    """Measured loss rate and mean burst length of the first pattern; whether the second
    (same seed) lost the same packets."""
    lost = ~patterns[0]
    starts = int(np.count_nonzero(lost[1:] & ~lost[:-1]) + int(lost[0]))
    n = len(patterns[1])
    return {
        "measured_loss_pct": float(lost.mean() * 100),
        "measured_burst_pkts": float(lost.sum() / starts) if starts else 0.0,
        "packets": int(len(lost)),
        "same_seed_same_pattern": bool(np.array_equal(patterns[0][:n], patterns[1])),
        "same_seed_compared_packets": n,
    }


def first_whole_second(send_offset_s: float) -> int:
    """The first whole second of the schedule at least 0.25 s after the probe started
    sending (the start-up transient is left out)."""
    return max(1, math.ceil(send_offset_s + 0.25))


def trace_correlation(
    z: dict[str, np.ndarray], t0_ns: int, steps: list[float], n_s: int, skip_s: int = 1
) -> dict[str, Any] | None:
    """The received wire rate per second (n_s - 1 one-second bins from `skip_s` s after the
    schedule started at t0_ns) against the schedule, at the lag (±300 ms, 10 ms steps) that
    correlates best."""
    t_s = (z["recv_ns"] - t0_ns) / 1e9
    wire_bits = (z["size"] + FRAME_OVERHEAD_BYTES) * 8
    best: dict[str, Any] | None = None
    for lag_ms in range(-300, 301, 10):
        edges = np.arange(skip_s, skip_s + n_s) + lag_ms / 1000.0
        meas = np.histogram(t_s, bins=edges, weights=wire_bits)[0] / 1e6
        exp = np.array([steps[int(k) % len(steps)] for k in np.arange(skip_s, skip_s + n_s - 1)],
                       dtype=float)  # fmt: skip
        if meas.std() == 0:
            continue
        corr = float(np.corrcoef(meas, exp)[0, 1])
        if best is None or corr > best["correlation"]:
            best = {
                "correlation": corr,
                "mean_error_pct": float(np.mean(np.abs(meas - exp) / exp) * 100),
                "lag_ms": lag_ms,
                "measured_mbps": meas.round(3).tolist(),
                "expected_mbps": exp.tolist(),
            }
    return best


# --------------------------------------------------------------------------- verdicts


def verdicts(res: dict[str, Any]) -> list[dict[str, Any]]:
    """Every figure of a calibration against its target in TARGETS."""
    out = []

    def add(name: str, key: str, value: float | None, judged: float | bool | None) -> None:
        t = TARGETS[key]
        out.append({"name": name, "target": t.wanted, "value": value, "pass": t.passes(judged)})

    for r in res.get("rate", []):
        err = (r["achieved_mbps"] - r["configured_mbps"]) / r["configured_mbps"] * 100
        if r["configured_mbps"] <= 500:
            add(f"rate {r['configured_mbps']} Mbit/s error %", "rate_error_pct_1_to_500",
                round(err, 3), err)  # fmt: skip
        else:
            frac = r["achieved_mbps"] / r["configured_mbps"]
            add(f"rate {r['configured_mbps']} Mbit/s fraction", "rate_fraction_above_500",
                round(frac, 4), frac)  # fmt: skip
    for d in res.get("delay", []):
        add(f"delay median error ms (load {d['load_pct']} %)", "delay_median_error_ms",
            d["median_error_ms"], d["median_error_ms"])  # fmt: skip
        add(f"delay p99 error ms (load {d['load_pct']} %)", "delay_p99_error_ms",
            d["p99_error_ms"], d["p99_error_ms"])  # fmt: skip
    if "loss" in res:
        lo = res["loss"]
        rel = abs(lo["measured_loss_pct"] / lo["expected_loss_pct"] - 1) * 100
        add("GE loss rate rel. error %", "loss_rel_error_pct", round(rel, 2), rel)
        relb = abs(lo["measured_burst_pkts"] / lo["expected_burst_pkts"] - 1) * 100
        add("GE burst length rel. error %", "burst_rel_error_pct", round(relb, 2), relb)
        add("same seed, same pattern", "same_seed_same_pattern", None,
            lo["same_seed_same_pattern"])  # fmt: skip
    if "trace" in res:
        c = res["trace"]["correlation"]
        add("trace correlation", "trace_correlation", round(c, 4), c)
    return out


def print_table(res: dict[str, Any], log: Callable[[str], None] = print) -> None:
    log("")
    log(f"{'target':<42} {'wanted':<12} {'value':>10}  verdict")
    for v in res["verdicts"]:
        val = "" if v["value"] is None else f"{v['value']:.4g}"
        log(f"{v['name']:<42} {v['target']:<12} {val:>10}  {'PASS' if v['pass'] else 'FAIL'}")

    def best_any(key: str) -> float:
        return max((s["achieved_mbps"] for s in res.get(key, [])), default=0.0)

    log(f"max rate with < 0.1 % loss: emulator {res.get('max_rate_mbps'):.1f} Mbit/s, "
        f"direct path {res.get('direct_path_mbps'):.1f} Mbit/s (highest at any loss: "
        f"{best_any('max_rate_steps'):.1f} / {best_any('direct_path_steps'):.1f})")  # fmt: skip
    if "max_rate_limited_by" in res:
        log(f"the emulator's loss-free ceiling was limited by: {res['max_rate_limited_by']}")
    if "direct_path_delay" in res:
        dd = res["direct_path_delay"]
        log(f"direct path one-way delay (noise floor): median {dd['median_ms']:.3f} ms, "
            f"p99 {dd['p99_ms']:.3f} ms")  # fmt: skip
    log(f"load average at start/end: {res.get('loadavg_start')} / {res.get('loadavg_end')}")
    if "queue" in res:
        q = res["queue"]
        log(f"queue: expected max {q['expected_max_ms']:.2f} ms, "
            f"measured {q['measured_max_ms']:.2f} ms")  # fmt: skip
