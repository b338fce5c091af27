"""The run-directory layout: the one place that spells it.

A run of a scenario's matrix point lives in

    <results>/<scenario>/<setting>/<scheme>/<speed>/r<rep>/
        metadata.json      the resolved run, provenance, the verdict (engine.judge)
        plan.json          what every node was to do (engine.plan)
        node-<node>.json   what each node's agent did (engine/agent.py)
        linkem-stats.jsonl the link's counters (linkem, or the sim's link)
        linkem.json        (userspace backend, sim) linkem's config
        linkem-packets.log (link.packet_log) one line per packet
        .node-<node>.tar.gz (testbed) a node's outputs, until the controller unpacks them
        tc-applied.json    (tc backend) the qdiscs applied
        capture-<node>.pcap (capture:) each endpoint's packets, beside tls-keys.log
        <endpoint>/qlog/   (qlog: true) one qlog trace per QUIC connection of that endpoint
        logs/              <process>.stdout / .stderr of every planned process
        tables/            parquet tables analysis writes (analysis.tables, analysis.metrics)
        metrics.json       per-run metrics (analysis.metrics)
        figure-data.json   the compact data the scenario's figures draw (analysis.metrics)
        sim-spec.json      (sim site) what priolab-sim was asked to run (engine/sim_spec.py)
        sim-report.json    (sim site) what priolab-sim reports: times, exit codes, counters

and is written as `<dir>.partial/`, renamed to `<dir>` only once complete, so a directory
named `<dir>` always holds a finished run (valid or invalid, with reasons). The Snakefile,
rules/, analysis/, priolab/ and netem/ ask this module for paths and patterns (it lives in
ground/ so that every one of them can: tests/test_engine_rundir.py keeps the names here).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PARTIAL_SUFFIX = ".partial"
METADATA = "metadata.json"
PLAN = "plan.json"
LOGS = "logs"
TABLES = "tables"
METRICS = "metrics.json"
FIGURE_DATA = "figure-data.json"
"""The compact per-run data figures draw (analysis/figure_data.py), beside metrics.json."""
INPUTS = "inputs"
SIM_SPEC = "sim-spec.json"
SIM_REPORT = "sim-report.json"
NODE_REPORT_PREFIX = "node-"
LINK_STATS = "linkem-stats.jsonl"
TC_APPLIED = "tc-applied.json"
LINKEM_CONFIG = "linkem.json"
LINKEM_READY = "linkem.ready"
LINKEM_STDOUT, LINKEM_STDERR = "linkem.stdout", "linkem.stderr"
"""linkem's own output, beside its stats (not under logs/: the userspace backend's layout)."""
"""linkem's --ready-file: created once it forwards."""
PACKET_LOG = "linkem-packets.log"
"""(link.packet_log) linkem's --packet-log: one line per packet (analysis.microbursts)."""
NODE_ARCHIVE_PREFIX = ".node-"
ARCHIVE_SUFFIX = ".tar.gz"
TLS_KEYLOG = "tls-keys.log"
"""(captured runs) the TLS keys of a pair's connector, SSLKEYLOGFILE format, beside the pcaps."""
CAPTURE_PREFIX = "capture-"
"""(capture:) `capture-<node>.pcap` of each endpoint: tcpdump's on the real sites, the sim's
own (simnet's capture) on the sim site."""
CAPTURE_SUFFIX = ".pcap"
QLOG_DIR = "qlog"
"""(qlog: true) a folder in each QUIC endpoint's log folder (host/, guest/, host-2/, ...) with
one JSON-SEQ qlog trace per connection, `<program>-<role>-<n>.sqlog` (quicsetup's qlog)."""
QLOG_SUFFIX = ".sqlog"
STOP_FILE = ".stop"
"""Created in a node's run folder when the run is over (nodes with only servers); removed
before the run is promoted."""
TC_STATS_PREFIX = "tc-stats-"
"""(tc backend) `tc-stats-<node>.json`: a node's qdisc counters before the reset, read once by
the judge (engine/judge.py), which removes them."""
TC_REPLAY_PREFIX = "tc-replay-"
"""(tc backend, trace) `tc-replay-<direction>`: the trace replayer's process name, and with
.json its schedule."""
REP_PREFIX = "r"
LEVELS = ("setting", "scheme", "speed")
"""The levels below a scenario's folder, before the repetition."""


@dataclass(frozen=True)
class RunCoords:
    """Where a run sits in its scenario's matrix."""

    scenario: str
    setting: str
    scheme: str
    speed: str
    rep: int


def rel_dir(scenario: str, setting: str, scheme: str, speed: str, rep: int | str) -> Path:
    """The run's folder relative to the results folder."""
    return Path(scenario, setting, scheme, speed, f"{REP_PREFIX}{rep}")


def run_dir(
    results: Path | str, scenario: str, setting: str, scheme: str, speed: str, rep: int | str
) -> Path:
    return Path(results) / rel_dir(scenario, setting, scheme, speed, rep)


def pattern(results: Path | str, file: str | None = None) -> str:
    """A Snakemake pattern of a run folder (or a file in it) with the wildcards
    {scenario}, {setting}, {scheme}, {speed} and {rep}."""
    base = str(run_dir(results, "{scenario}", "{setting}", "{scheme}", "{speed}", "{rep}"))
    return f"{base}/{file}" if file else base


def partial(out_dir: Path) -> Path:
    """The folder a run writes into until it is complete."""
    return out_dir.with_name(out_dir.name + PARTIAL_SUFFIX)


def final(partial_dir: Path) -> Path:
    """The folder a `.partial` folder becomes."""
    name = partial_dir.name
    if not name.endswith(PARTIAL_SUFFIX):
        raise ValueError(f"{partial_dir}: not a {PARTIAL_SUFFIX} run folder")
    return partial_dir.with_name(name[: -len(PARTIAL_SUFFIX)])


def begin(out_dir: Path) -> Path:
    """A fresh `.partial` folder (with logs/) for a run into `out_dir`; returns it."""
    work = partial(out_dir)
    shutil.rmtree(work, ignore_errors=True)
    (work / LOGS).mkdir(parents=True)
    return work


def promote(partial_dir: Path) -> Path:
    """Rename a complete `.partial` folder to its final name (replacing an older run)."""
    out = final(partial_dir)
    if out.exists():
        shutil.rmtree(out)
    partial_dir.rename(out)
    return out


def node_report(node: str) -> str:
    """The report a node's agent writes (engine/agent.py), relative to the run folder."""
    return f"{NODE_REPORT_PREFIX}{node}.json"


NODE_REPORTS_GLOB = f"{NODE_REPORT_PREFIX}*.json"
"""Every node report of a run folder (`Path.glob`)."""


def node_archive(node: str) -> str:
    """(testbed) the archive a node's outputs arrive in, relative to the run folder."""
    return f"{NODE_ARCHIVE_PREFIX}{node}{ARCHIVE_SUFFIX}"


NODE_ARCHIVES_GLOB = node_archive("*")


def capture(node: str) -> str:
    return f"{CAPTURE_PREFIX}{node}{CAPTURE_SUFFIX}"


def qlog_dir(endpoint_dir: Path) -> Path:
    """Where a QUIC endpoint whose logs go to `endpoint_dir` writes its qlog traces."""
    return endpoint_dir / QLOG_DIR


def qlog_files(run: Path) -> list[Path]:
    """Every qlog trace of a run folder, sorted."""
    return sorted(run.glob(f"*/{QLOG_DIR}/*{QLOG_SUFFIX}"))


def tc_stats(node: str) -> str:
    return f"{TC_STATS_PREFIX}{node}.json"


TC_STATS_GLOB = tc_stats("*")


def tc_replay(direction: str) -> str:
    """The tc trace replayer of `direction` (uplink, downlink): its process's name."""
    return f"{TC_REPLAY_PREFIX}{direction}"


def write_metadata(run: Path, meta: dict[str, Any]) -> None:
    """Write a run folder's metadata.json whole (a temporary file renamed over it)."""
    tmp = run / (METADATA + ".tmp")
    tmp.write_text(json.dumps(meta, indent=2, default=str) + "\n")
    tmp.replace(run / METADATA)


def read_metadata(run: Path) -> dict[str, Any]:
    meta = json.loads((run / METADATA).read_text())
    if not isinstance(meta, dict):
        raise ValueError(f"{run / METADATA}: not a JSON object")
    return meta


def log_files(process: str) -> tuple[str, str]:
    """(stdout, stderr) of a planned process, relative to the run folder."""
    return f"{LOGS}/{process}.stdout", f"{LOGS}/{process}.stderr"


def find_runs(scenario_dir: Path) -> list[Path]:
    """Every finished run folder of a scenario (`.partial` folders of interrupted runs are
    skipped)."""
    out = []
    for p in sorted(scenario_dir.glob("/".join(["*"] * len(LEVELS) + [f"{REP_PREFIX}*"]))):
        if p.is_dir() and is_rep(p.name):
            out.append(p)
    return out


def is_rep(name: str) -> bool:
    return name.startswith(REP_PREFIX) and name[len(REP_PREFIX) :].isdigit()


def coords(path: Path) -> RunCoords:
    """The matrix coordinates a run folder's path spells."""
    parts = path.parts[-(len(LEVELS) + 2) :]
    if len(parts) != len(LEVELS) + 2 or not is_rep(parts[-1]):
        raise ValueError(f"{path}: not a run folder <scenario>/<setting>/<scheme>/<speed>/r<rep>")
    scenario, setting, scheme, speed, rep = parts
    return RunCoords(scenario, setting, scheme, speed, int(rep[len(REP_PREFIX) :]))
