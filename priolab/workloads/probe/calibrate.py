"""`priolab calibrate`: measure how faithfully a backend emulates the link model.

Calibration is an experiment on the engine: every measurement is one run of the probe
workload (this folder's __init__.py), planned by the engine (engine/plan.py) and carried out
on the Mininet site by the node agents (engine/sites/mininet.py's `session` + `execute`: the
access topology guest — emu — host, IPv6 off and static ARP so the only packets crossing the
link are the measurement's own), one after the other on one network. Each run's folder
(plan.json, node reports, logs, probe outputs, metadata.json with the judge's verdict) is kept
under the work folder the JSON names; analysis.py reads them and judges every figure against
its one table of targets.

Rates are counted on the wire as the emulator counts them: UDP payload + 8 (UDP) + 20 (IP) +
14 (Ethernet) bytes. iperf3 offers AT the configured rate (its -b is payload bit/s, scaled by
payload/frame so the frames arrive at exactly the configured rate): an offer above the rate
would measure the queue's drops, not the rate's accuracy.

    priolab calibrate [--quick] [--backend auto|tc|userspace] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ground import machine_lock, rundir
from ground.reasons import Code, Reason, first_abort, from_metadata
from netem.model import Link
from netem.probe import choose_backend, probe_kernel
from netem.rateprobe import limited_by
from netem.resolve import expected_burst_len, expected_loss_rate, resolve_loss
from priolab import provenance
from priolab.engine.finish import finish
from priolab.engine.sites.mininet import RunAborted, execute, on_signal, session
from priolab.scenario import RunSpec, Topology
from priolab.workloads.probe import FRAME_OVERHEAD_BYTES, PAYLOAD_BYTES, ProbeParams
from priolab.workloads.probe.analysis import (
    delay_row,
    first_whole_second,
    iperf3_result,
    lkprobe_result,
    loss_figures,
    owd_stats,
    print_table,
    probe_arrays,
    process_start_ns,
    received_pattern,
    trace_correlation,
    trace_started_ns,
    verdicts,
)

FRAME_BYTES = PAYLOAD_BYTES + FRAME_OVERHEAD_BYTES
PROCESS_FAILED = frozenset({Code.EXIT_CODE, Code.NOT_SELF_EXIT, Code.NODE_ERROR})
"""Invalid-run reasons that mean a calibration step's tools failed (a node error: e.g. a
process never started), not that the link was busy: the step stops with them."""
RATES_MBPS = [1, 10, 70, 200, 500, 1000]
MAX_RATE_LADDER_MBPS = [100, 200, 350, 500, 700, 1000, 1500, 2000, 3000]
QUICK_LADDER_MBPS = [100, 200, 350, 500, 700, 1000, 1500, 2000]
DELAY_MS = 10.5
DELAY_LINK_MBPS = 100.0
GE_LOSS_PCT, GE_BURST_PKTS = 2.0, 3.0
LOSS_PACKETS = 200_000
LOSS_PPS = 10_000
TRACE_STEPS_MBPS: list[float] = [10, 30, 20, 40, 5, 25, 35, 15, 40, 20]
QUEUE_RATE_MBPS, QUEUE_LIMIT_BYTES, QUEUE_DELAY_MS = 10.0, 62_500, 5.0
UNLIMITED = {d: {"unlimited": True, "queue": {"limit_packets": 10_000}}
             for d in ("uplink", "downlink")}  # fmt: skip


class Calibration:
    """The probe runs of one calibration, on one Mininet network, each through the engine."""

    def __init__(
        self, backend: tuple[str, str, str], quick: bool, workdir: Path,
        log: Callable[[str], None], network: Any,
    ) -> None:  # fmt: skip
        self.backend, self.quick, self.workdir, self.log = backend, quick, workdir, log
        self.network = network

    def run(
        self, tag: str, link: dict[str, Any], params: dict[str, Any], seed: int = 1,
        direct: bool = False,
    ) -> tuple[Path, dict[str, Any]]:  # fmt: skip
        """One probe run on the link `link` (`direct`: a plain bridge, no emulation); its
        finished folder and metadata. A run whose processes failed raises RuntimeError."""
        p = ProbeParams.model_validate(params)
        from priolab.workloads.probe import probe_seconds

        spec = RunSpec(
            scenario="calibrate", setting=tag, scheme=self.backend[1], speed="probe", rep=1,
            seed=seed, duration_s=probe_seconds(p), topology=Topology(kind="access"),
            link=Link.model_validate(link), workload_kind="probe", params=p,
            base_dir=self.workdir,
        )  # fmt: skip
        out_dir = self.workdir / tag
        work = rundir.begin(out_dir)
        requested, used, why = self.backend
        errors: list[Reason] = []
        backend = (requested, "bridge", "the direct path") if direct else self.backend
        run_plan, inputs = execute(self.network, spec, work, out_dir, backend, errors)
        if run_plan is None:
            raise RuntimeError(f"{tag}: {'; '.join(e.prose() for e in errors)}")
        meta = finish(work, run_plan, site_errors=errors, extra={"inputs": inputs})
        abort = first_abort(errors)
        if abort is not None:
            raise KeyboardInterrupt(abort.detail)
        failed = [r for r in from_metadata(meta) if r.code in PROCESS_FAILED]
        if errors or failed:
            why = "; ".join(r.prose() for r in errors + failed)
            raise RuntimeError(f"{tag}: {why} (run folder {out_dir})")
        return out_dir, meta

    def iperf_udp(self, tag: str, link: dict[str, Any], wire_mbps: float, seconds: float
                  ) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
        run, meta = self.run(tag, link, {"tool": "iperf3", "wire_mbps": wire_mbps,
                                         "seconds": seconds})  # fmt: skip
        return iperf3_result(run), meta

    def blast(self, tag: str, link: dict[str, Any], wire_mbps: float, seconds: float,
              direct: bool = False) -> dict[str, Any]:  # fmt: skip
        params = {"tool": "lkprobe", "wire_mbps": wire_mbps, "seconds": seconds}
        run, _ = self.run(tag, link, params, direct=direct)
        return lkprobe_result(run, seconds, ProbeParams.model_validate(params).flows)

    def probe(self, tag: str, link: dict[str, Any], pps: float, count: int, size: int,
              idle_s: float = 2.0, seed: int = 1, load_mbps: float = 0.0, direct: bool = False,
              ) -> tuple[dict[str, np.ndarray], Path, dict[str, Any]]:  # fmt: skip
        params = {"tool": "udpprobe", "pps": pps, "count": count, "size_bytes": size,
                  "idle_s": idle_s, "load_mbps": load_mbps}  # fmt: skip
        run, meta = self.run(tag, link, params, seed=seed, direct=direct)
        return probe_arrays(run), run, meta

    # ----------------------------------------------------------------- measurements

    def measure_rate(self) -> list[dict[str, Any]]:
        seconds = 4 if self.quick else 10
        rows = []
        for mbps in RATES_MBPS:
            limit = max(64_000, int(mbps * 1e6 / 8 * 0.1))  # 100 ms of the rate
            cfg = {d: {"rate_mbps": mbps, "queue": {"limit_bytes": limit}}
                   for d in ("uplink", "downlink")}  # fmt: skip
            r, meta = self.iperf_udp(f"rate-{mbps}", cfg, mbps, seconds)
            r["configured_mbps"] = mbps
            r["oversized_frames"] = meta["link_final"].get("oversized_frames")
            r["emulator_uplink"] = meta["link_final"].get("uplink")  # where the drops happened
            self.log(f"rate {mbps:>5} Mbit/s: achieved {r['achieved_mbps']:.2f}, "
                     f"offered {r['offered_mbps']:.2f}, loss {r['loss_pct']:.3f} %")  # fmt: skip
            rows.append(r)
        return rows

    def ladder(self, run: Callable[[float], dict[str, Any]]) -> tuple[float, list[Any]]:
        """Step the offered load up; the best receiver rate with < 0.1 % loss. Steps go on
        while loss < 10 % so the record shows where it breaks."""
        best, steps = 0.0, []
        for mbps in QUICK_LADDER_MBPS if self.quick else MAX_RATE_LADDER_MBPS:
            r = run(mbps)
            r["offered_target_mbps"] = mbps
            steps.append(r)
            self.log(f"  offered {mbps:>5}: achieved {r['achieved_mbps']:.1f}, "
                     f"loss {r['loss_pct']:.3f} %")  # fmt: skip
            if r["loss_pct"] < 0.1:
                best = max(best, r["achieved_mbps"])
            if r["loss_pct"] >= 10.0:
                break
        return best, steps

    def measure_max_rate(self) -> tuple[float, list[Any]]:
        seconds = 3 if self.quick else 5
        self.log("max rate through the emulator (unlimited):")
        return self.ladder(lambda mbps: self.blast(f"max-{mbps}", UNLIMITED, mbps, seconds))

    def measure_direct(self) -> tuple[float, list[Any], dict[str, Any]]:
        """Max rate over a plain bridge, and the one-way delay of that path (the noise floor
        of the delay measurement: same probe, no emulator)."""
        seconds = 3 if self.quick else 5
        self.log("direct path (Linux bridge, no emulator):")
        best, steps = self.ladder(
            lambda mbps: self.blast(f"direct-{mbps}", UNLIMITED, mbps, seconds, direct=True)
        )
        z, _, _ = self.probe("direct-delay", UNLIMITED, 200, 1000 if self.quick else 4000, 64,
                             idle_s=1.0, direct=True)  # fmt: skip
        floor = owd_stats((z["recv_ns"] - z["send_ns"]) / 1e6)
        self.log(f"direct path one-way delay: median {floor['median_ms']:.3f} ms, "
                 f"p99 {floor['p99_ms']:.3f} ms")  # fmt: skip
        return best, steps, floor

    def measure_delay(self) -> list[dict[str, Any]]:
        count = 1000 if self.quick else 4000
        cfg = {d: {"rate_mbps": DELAY_LINK_MBPS, "delay_ms": DELAY_MS}
               for d in ("uplink", "downlink")}  # fmt: skip
        rows = []
        for load_pct in (0, 50):
            z, _, _ = self.probe(f"delay-{load_pct}", cfg, 200, count, 64, idle_s=1.0,
                                 load_mbps=DELAY_LINK_MBPS * load_pct / 100)  # fmt: skip
            row = delay_row(z, DELAY_MS, load_pct, count)
            self.log(
                f"delay {DELAY_MS} ms at {load_pct} % load: median error "
                f"{row['median_error_ms']:.3f} ms, p99 {row['p99_error_ms']:.3f} ms"
            )
            rows.append(row)
        return rows

    def measure_loss(self) -> dict[str, Any]:
        loss_cfg = {"model": "gilbert_elliott_mean", "loss_pct": GE_LOSS_PCT,
                    "burst_pkts": GE_BURST_PKTS}  # fmt: skip
        cfg = {
            "uplink": {"unlimited": True, "loss": loss_cfg, "queue": {"limit_packets": 10_000}},
            "downlink": {"unlimited": True, "queue": {"limit_packets": 10_000}},
        }
        second = 50_000 if self.quick else LOSS_PACKETS
        patterns, arrivals = [], []
        for i, count in enumerate((LOSS_PACKETS, second)):
            z, _, meta = self.probe(f"loss-{i}", cfg, LOSS_PPS, count, 64, seed=1234)
            got = received_pattern(z, count)
            patterns.append(got)
            uplink = meta["link_final"].get("uplink")
            arrivals.append((uplink or {}).get("arrivals"))
            self.log(f"loss run {i}: {count} sent, {int(got.sum())} received; "
                     f"emulator: {uplink}")  # fmt: skip
        rl = resolve_loss(Link.model_validate(cfg).uplink.loss)
        fig = loss_figures(patterns)
        return {
            "model": loss_cfg,
            "expected_loss_pct": expected_loss_rate(rl) * 100,
            "measured_loss_pct": fig["measured_loss_pct"],
            "expected_burst_pkts": expected_burst_len(rl),
            "measured_burst_pkts": fig["measured_burst_pkts"],
            "packets": fig["packets"],
            "same_seed_same_pattern": fig["same_seed_same_pattern"],
            "same_seed_compared_packets": fig["same_seed_compared_packets"],
            "emulator_arrivals": arrivals,
            "sent": [LOSS_PACKETS, second],
        }

    def measure_trace(self) -> dict[str, Any]:
        steps = TRACE_STEPS_MBPS
        trace_file = self.workdir / "calib-trace.txt"
        trace_file.write_text("".join(f"{i} {r}\n" for i, r in enumerate(steps)))
        cfg = {
            "uplink": {"trace": {"file": str(trace_file), "format": "schedule"},
                       "queue": {"limit_bytes": 100_000}},
            "downlink": {"unlimited": True, "queue": {"limit_packets": 1000}},
        }  # fmt: skip
        pps = 1.25 * max(steps) * 1e6 / (FRAME_BYTES * 8)
        n_s = len(steps) if self.quick else 2 * len(steps)
        z, run, meta = self.probe("trace", cfg, pps, int(pps * (n_s + 1.5)), PAYLOAD_BYTES,
                                  idle_s=1.0)  # fmt: skip
        t0_ns = trace_started_ns(run, meta)
        sent_ns = process_start_ns(run, "udpprobe-send") or t0_ns
        skip_s = first_whole_second((sent_ns - t0_ns) / 1e9)
        best = trace_correlation(z, t0_ns, steps, n_s, skip_s)
        if best is None:
            raise RuntimeError("trace: nothing received")
        self.log(f"trace: correlation {best['correlation']:.4f}, mean error "
                 f"{best['mean_error_pct']:.2f} % (lag {best['lag_ms']} ms)")  # fmt: skip
        return best

    def measure_queue(self) -> dict[str, Any]:
        cfg = {
            "uplink": {"rate_mbps": QUEUE_RATE_MBPS, "delay_ms": QUEUE_DELAY_MS,
                       "queue": {"limit_bytes": QUEUE_LIMIT_BYTES}},
            "downlink": {"rate_mbps": QUEUE_RATE_MBPS, "delay_ms": QUEUE_DELAY_MS},
        }  # fmt: skip
        pps = 2 * QUEUE_RATE_MBPS * 1e6 / (FRAME_BYTES * 8)
        z, _, _ = self.probe("queue", cfg, pps, int(pps * 3), PAYLOAD_BYTES, idle_s=1.0)
        owd_ms = (z["recv_ns"] - z["send_ns"]) / 1e6
        r = {
            "expected_max_ms": QUEUE_LIMIT_BYTES * 8 / (QUEUE_RATE_MBPS * 1e6) * 1000,
            "measured_max_ms": float(owd_ms.max() - QUEUE_DELAY_MS),
            "measured_p99_ms": float(np.percentile(owd_ms, 99) - QUEUE_DELAY_MS),
            "measured_p50_ms_second_half": float(
                np.median(owd_ms[len(owd_ms) // 2 :]) - QUEUE_DELAY_MS
            ),
            "offered_mbps": 2 * QUEUE_RATE_MBPS,
        }
        self.log(f"queue: expected max {r['expected_max_ms']:.2f} ms, "
                 f"measured {r['measured_max_ms']:.2f} ms")  # fmt: skip
        return r


def calibrate_session(workdir: Path) -> Any:
    """The network every probe run of a calibration shares: the access topology, quiet."""
    return session(Topology(kind="access"), f"calibrate-{os.getpid()}", quiet=True,
                   run_dir=workdir)  # fmt: skip


def calibrate(backend: str, quick: bool, log: Callable[[str], None] = print) -> dict[str, Any]:
    support = probe_kernel()
    name, reason = choose_backend(backend, support)  # type: ignore[arg-type]
    log(f"backend: {name} ({reason})")
    git = provenance.git_info()
    res: dict[str, Any] = {
        "backend": name,
        "backend_reason": reason,
        "host": platform.node(),
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "git_commit": (git.get("commit") or "unknown") + ("-dirty" if git.get("dirty") else ""),
        "quick": quick,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "loadavg_start": os.getloadavg(),
    }
    workdir = Path(tempfile.mkdtemp(prefix="ne-calib-"))
    res["workdir"] = str(workdir)
    t_start = time.monotonic()
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with calibrate_session(workdir) as network:
            bench = Calibration((backend, name, reason), quick, workdir, log, network)
            res["rate"] = bench.measure_rate()
            res["max_rate_mbps"], res["max_rate_steps"] = bench.measure_max_rate()
            res["direct_path_mbps"], res["direct_path_steps"], res["direct_path_delay"] = (
                bench.measure_direct()
            )
            res["max_rate_limited_by"] = limited_by(
                res["max_rate_mbps"], res["direct_path_mbps"], res["max_rate_steps"],
                res["direct_path_steps"],
            )  # fmt: skip
            res["delay"] = bench.measure_delay()
            res["loss"] = bench.measure_loss()
            res["trace"] = bench.measure_trace()
            res["queue"] = bench.measure_queue()
    except RunAborted as e:
        raise KeyboardInterrupt(str(e)) from None
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        res["duration_s"] = round(time.monotonic() - t_start, 1)
        res["loadavg_end"] = os.getloadavg()
    res["verdicts"] = verdicts(res)
    return res


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--json", type=Path, help="write the results to this JSON file")
    ap.add_argument("--quick", action="store_true", help="shorter runs (about 2-3 minutes)")
    ap.add_argument(
        "--backend",
        choices=["auto", "tc", "userspace"],
        default="auto",
        help="the link backend to calibrate (default: auto, as a run would pick)",
    )


def run_args(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("calibrate needs root (Mininet)", file=sys.stderr)
        return 2
    missing = [t for t in ("iperf3", "ethtool", "tc", "mnexec") if shutil.which(t) is None]
    if missing:
        print(f"calibrate needs these tools on PATH: {', '.join(missing)}", file=sys.stderr)
        return 2
    machine_lock.hold_until_exit("priolab calibrate")
    try:
        res = calibrate(args.backend, args.quick)
    except RuntimeError as e:
        print(f"calibrate: {e}", file=sys.stderr)
        return 1
    print_table(res)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=1))
        print(f"wrote {args.json}")
    return 0


def register(subparsers: Any) -> None:
    """Add the `calibrate` sub-command to priolab's CLI (dispatch: args.func(args) -> int)."""
    ap = subparsers.add_parser("calibrate", help="measure the link emulator's accuracy")
    add_arguments(ap)
    ap.set_defaults(func=run_args)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m priolab.workloads.probe.calibrate",
                                 description=__doc__)  # fmt: skip
    add_arguments(ap)
    return run_args(ap.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
