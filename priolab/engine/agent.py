#!/usr/bin/env python3
"""priolab's node agent: runs one node's share of one run plan (priolab/engine/plan.py).

Standard library only. The same file runs on every site: in each Mininet host of a local run
(priolab/engine/sites/mininet.py starts it inside the host's namespaces) and on each
testbed node (Ansible's endpoints role installs this very file as priolab_node.py). The
planner computes everything — argv lists, environments, start offsets, output paths — so the
agent only executes a spec:

    agent.py run SPEC.json --t0 EPOCH_S
    agent.py run SPEC.json --go FILE     (wait for FILE, which holds t0)
    agent.py clean RUN_ROOT

Every process starts at t0 + start_at_s (after its wait_for_file exists, if any) with the
spec's `env` added to the agent's environment, writes stdout/stderr to the files the spec
names, and is waited for. The node stops when all its `runs_to_end` processes have exited,
or when `stop_file` appears (nodes with only servers, e.g. the emulator node running
linkem), or at the deadline t0 + deadline_s. Live processes then get SIGTERM, and SIGKILL
after term_wait_s. While it runs the agent samples the machine's CPU (/proc/stat) and each
of its processes' CPU time (/proc/PID/stat), so a report shows what the link emulator costs
beside each endpoint, and reads the kernel's UDP drop counters (/proc/net/snmp and snmp6 of
the node's network namespace) before the first process starts and after the last ends. It
writes the spec's `report` (the run folder's `node-<node>.json`: what ran, exit codes, times,
CPU, UDP counters, tool versions, clock state) into the run directory and, if the spec names
an `archive`, packs the spec's outputs into it for the controller to fetch.

While it runs, the agent lists itself and every process it started in
`<registry_dir>/<node>-<pid>.json`; `clean` stops exactly those processes (if their command
line still matches: no pid reuse accidents) when a killed run left them, and nothing else.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path
from typing import Any

POLL_S = 0.05
GO_TIMEOUT_S = 120.0
CPU_INTERVAL_S = 0.5
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _machine_cpu() -> tuple[int, int]:
    """(total, idle) jiffies of the whole machine; idle includes iowait."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields), idle


def process_cpu_s(pid: int) -> float | None:
    """CPU time (user + system) a process has used, in seconds; None once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) ": state is field 3
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14, 15)


UDP_COUNTERS = ("InErrors", "RcvbufErrors", "SndbufErrors")
"""The kernel's UDP drop counters kept in a report: RcvbufErrors are datagrams dropped because
a socket's receive buffer was full (the endpoint did not read in time, not the link)."""


def parse_snmp_udp(snmp: str) -> dict[str, int]:
    """UDP_COUNTERS from /proc/net/snmp's text: a `Udp:` header line of names, then a `Udp:`
    line of values (UdpLite's lines are other counters)."""
    rows = [line.split()[1:] for line in snmp.splitlines() if line.startswith("Udp:")]
    if len(rows) < 2:
        return {}
    values = dict(zip(rows[0], rows[1], strict=False))
    return {k: int(values[k]) for k in UDP_COUNTERS if k in values}


def parse_snmp6_udp(snmp6: str) -> dict[str, int]:
    """UDP_COUNTERS from /proc/net/snmp6's text (`Udp6RcvbufErrors  N` lines)."""
    out: dict[str, int] = {}
    for line in snmp6.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].startswith("Udp6") and parts[0][4:] in UDP_COUNTERS:
            out[parts[0][4:]] = int(parts[1])
    return out


def udp_counters(proc_net: Path = Path("/proc/net")) -> dict[str, Any]:
    """This network namespace's UDP counters (IPv4 and IPv6), each None if unreadable."""

    def read(name: str) -> str | None:
        try:
            return (proc_net / name).read_text()
        except OSError:
            return None

    v4, v6 = read("snmp"), read("snmp6")
    return {
        "time": time.time(),
        "udp": None if v4 is None else parse_snmp_udp(v4),
        "udp6": None if v6 is None else parse_snmp6_udp(v6),
    }


class CpuSampler:
    """Samples the machine's CPU utilisation (fraction of all cores busy, with the time.time()
    each interval ended) and, for each watched process, the share of one core it used over
    each interval. The project's one sampler: every node's agent, and the VM site for the
    machine the VM runs on (priolab/cpu.py judges the samples)."""

    def __init__(self, interval_s: float = CPU_INTERVAL_S) -> None:
        self.interval_s = interval_s
        self.samples: list[float] = []
        self.times: list[float] = []
        self.per_process: dict[int, list[float]] = {}
        self._last_cpu: dict[int, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> CpuSampler:
        self._thread.start()
        return self

    def __enter__(self) -> CpuSampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def watch(self, pid: int) -> None:
        with self._lock:
            self.per_process.setdefault(pid, [])
            self._last_cpu[pid] = process_cpu_s(pid) or 0.0

    def _loop(self) -> None:
        total0, idle0 = _machine_cpu()
        while not self._stop.wait(self.interval_s):
            total, idle = _machine_cpu()
            dt = total - total0
            if dt > 0:
                self.times.append(time.time())
                self.samples.append(1.0 - (idle - idle0) / dt)
            total0, idle0 = total, idle
            with self._lock:
                for pid, last in list(self._last_cpu.items()):
                    now = process_cpu_s(pid)
                    if now is None:
                        del self._last_cpu[pid]
                        continue
                    self.per_process[pid].append((now - last) / self.interval_s)
                    self._last_cpu[pid] = now

    def stop(self) -> list[float]:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        return self.samples


def first_line(argv: list[str]) -> str | None:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (r.stdout or r.stderr).strip()
    return text.splitlines()[0] if text else None


def clock_state() -> dict[str, Any]:
    """chrony's view of this node's clock, if chrony runs here (one-way delays need it)."""
    try:
        r = subprocess.run(
            ["chronyc", "-c", "tracking"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return {"chrony": None, "note": "chronyc not available"}
    if r.returncode != 0:
        return {"chrony": None, "note": r.stderr.strip()[:200]}
    f = r.stdout.strip().split(",")
    # chronyc -c tracking: ref id, ref name, stratum, ref time, system offset (s), last
    # offset, rms offset, frequency, residual freq, skew, root delay, root dispersion, ...
    try:
        return {
            "chrony": {"reference": f[1], "stratum": int(f[2]), "system_offset_s": float(f[4]),
                       "rms_offset_s": float(f[6]), "root_delay_s": float(f[10]),
                       "root_dispersion_s": float(f[11])},
        }  # fmt: skip
    except (IndexError, ValueError):
        return {"chrony": None, "note": f"unparsed: {r.stdout.strip()[:200]}"}


class Proc:
    def __init__(self, spec: dict[str, Any], run_dir: Path) -> None:
        self.spec = spec
        self.run_dir = run_dir
        self.popen: subprocess.Popen[bytes] | None = None
        self.start_time: float | None = None
        self.end_time: float | None = None
        self.signalled: str | None = None
        self.error: str | None = None
        self.ready_time: float | None = None
        self.cpu_s: float | None = None

    def start(self) -> None:
        out_path = self.run_dir / self.spec["stdout"]
        err_path = self.run_dir / self.spec["stderr"]
        out_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **self.spec.get("env", {})}
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                self.popen = subprocess.Popen(
                    self.spec["argv"], stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
                    start_new_session=True,
                )  # fmt: skip
            except OSError as e:
                self.error = f"cannot start: {e}"
                err.write(f"{self.error}\n".encode())
        self.start_time = time.time()

    def poll(self) -> bool:
        """True once the process has ended (or never started)."""
        if self.popen is None:
            return self.start_time is not None
        if self.end_time is None:
            cpu = process_cpu_s(self.popen.pid)  # last reading before it is reaped
            self.cpu_s = cpu if cpu is not None else self.cpu_s
        code = self.popen.poll()
        if code is not None and self.end_time is None:
            self.end_time = time.time()
        ready = self.spec.get("ready_file")
        if ready and self.ready_time is None and os.path.exists(ready):
            self.ready_time = time.time()
        return code is not None

    def to_json(self, node: str, cpu_samples: list[float]) -> dict[str, Any]:
        wall = (self.end_time or time.time()) - (self.start_time or time.time())
        return {
            "name": self.spec["name"],
            "node": node,
            "argv": self.spec["argv"],
            "pid": self.popen.pid if self.popen else None,
            "planned_start_time": self.spec.get("_planned"),
            "start_time": self.start_time,
            "end_time": self.end_time,
            "ready_time": self.ready_time,
            "exit_code": self.popen.returncode if self.popen else None,
            "stopped_by_harness": self.signalled,
            "start_error": self.error,
            "stdout": self.spec["stdout"],
            "stderr": self.spec["stderr"],
            "cpu": {
                "cpu_s": None if self.cpu_s is None else round(self.cpu_s, 3),
                "core_mean_pct": (
                    round(100 * self.cpu_s / wall, 2)
                    if self.cpu_s is not None and wall > 0
                    else None
                ),
                "core_max_pct": round(100 * max(cpu_samples), 2) if cpu_samples else None,
                "note": "share of one core; the process itself, not its children",
            },
        }


def cmdline(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [a.decode(errors="replace") for a in raw.split(b"\0")[:-1]]


class Registry:
    """The file that lists the agent and its children while a run is live."""

    def __init__(self, directory: str | None, node: str) -> None:
        self.path = Path(directory) / f"{node}-{os.getpid()}.json" if directory else None
        self.entries = [{"pid": os.getpid(), "cmdline": cmdline(os.getpid())}]

    def add(self, pid: int, argv: list[str]) -> None:
        self.entries.insert(0, {"pid": pid, "cmdline": argv})
        self._write()

    def _write(self) -> None:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.entries))
            tmp.replace(self.path)

    def remove(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def clean(run_root: Path) -> dict[str, Any]:
    """Stop what registries under run_root list (children first), then remove them."""
    killed: list[dict[str, Any]] = []
    registries = sorted((run_root / ".pids").glob("*.json"))
    for reg in registries:
        try:
            entries = json.loads(reg.read_text())
        except (OSError, json.JSONDecodeError):
            entries = []
        for e in entries:
            if e["pid"] != os.getpid() and cmdline(e["pid"]) == e["cmdline"]:
                try:
                    os.kill(e["pid"], signal.SIGTERM)
                except ProcessLookupError:
                    continue
                killed.append(e)
        deadline = time.time() + 3.0
        for e in killed:
            while cmdline(e["pid"]) == e["cmdline"] and time.time() < deadline:
                time.sleep(0.05)
            if cmdline(e["pid"]) == e["cmdline"]:
                os.kill(e["pid"], signal.SIGKILL)
        reg.unlink(missing_ok=True)
    stops = list(run_root.rglob(".stop")) if run_root.is_dir() else []
    for f in stops:
        f.unlink(missing_ok=True)
    return {"killed": killed, "registries": len(registries), "stop_files": len(stops)}


def stop_all(procs: list[Proc], term_wait_s: float) -> None:
    live = [p for p in procs if p.popen is not None and p.popen.poll() is None]
    for p in live:
        p.signalled = "SIGTERM"
        p.popen.send_signal(signal.SIGTERM)  # type: ignore[union-attr]
    deadline = time.time() + term_wait_s
    for p in live:
        assert p.popen is not None
        try:
            p.popen.wait(timeout=max(0.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.signalled = "SIGKILL"
            p.popen.kill()
            p.popen.wait()
    for p in procs:
        p.poll()
        if p.start_time is not None and p.end_time is None:
            p.end_time = time.time()


def run(spec: dict[str, Any], t0: float) -> dict[str, Any]:
    run_dir = Path(spec["run_dir"])
    run_dir.mkdir(parents=True, exist_ok=True)
    for name, content in spec.get("files", {}).items():
        (run_dir / name).write_text(json.dumps(content))
    stop_file = spec.get("stop_file")
    if stop_file:
        Path(stop_file).unlink(missing_ok=True)
    procs = [Proc(p, run_dir) for p in spec["processes"]]
    for p in procs:
        p.spec["_planned"] = t0 + float(p.spec.get("start_at_s", 0.0))
    deadline = t0 + float(spec["deadline_s"])
    errors: list[str] = []
    aborted: list[str] = []

    def on_signal(signum: int, frame: object) -> None:
        aborted.append(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    registry = Registry(spec.get("registry_dir"), spec["node"])
    registry._write()
    udp_start = udp_counters()
    sampler = CpuSampler().start()
    pending = list(procs)
    while not aborted and time.time() < deadline:
        for p in procs:
            p.poll()
        # start what is due, in order: a process waits for the ones before it
        while pending and time.time() >= pending[0].spec["_planned"]:
            wf = pending[0].spec.get("wait_for_file")
            if wf and not os.path.exists(wf):
                break
            p = pending.pop(0)
            p.start()
            if p.popen is not None:
                registry.add(p.popen.pid, p.spec["argv"])
                sampler.watch(p.popen.pid)
        enders = [p for p in procs if p.spec.get("runs_to_end", True)]
        if not pending and enders and all(p.poll() for p in enders):
            break
        if stop_file and os.path.exists(stop_file):
            break
        time.sleep(POLL_S)
    for p in pending:
        errors.append(f"{p.spec['name']} never started (wait_for_file or deadline)")
    if aborted:
        errors.append(f"agent aborted by {aborted[0]}")
    stop_all(procs, float(spec.get("term_wait_s", 5.0)))
    samples = sampler.stop()
    udp_end = udp_counters()
    registry.remove()
    result = {
        "node": spec["node"],
        "hostname": platform.node(),
        "t0": t0,
        "processes": [
            p.to_json(spec["node"], sampler.per_process.get(p.popen.pid if p.popen else -1, []))
            for p in procs
        ],
        "cpu_samples": samples,
        "cpu_interval_s": sampler.interval_s,
        # this node's namespace (the whole machine on a testbed node), before and after
        "udp_counters": {"start": udp_start, "end": udp_end},
        "versions": {Path(a[0]).name: first_line(a) for a in spec.get("tools", [])},
        "kernel": platform.release(),
        "clock": clock_state()
        if spec.get("check_clock", True)
        else {"chrony": None, "note": "one clock"},
        "errors": errors,
    }
    (run_dir / spec["report"]).write_text(json.dumps(result, indent=1))
    if spec.get("archive"):
        pack(run_dir, [*spec.get("outputs", []), spec["report"]], spec["archive"])
    return result


def pack(run_dir: Path, outputs: list[str], archive: str) -> None:
    with tarfile.open(archive, "w:gz") as tar:
        for rel in outputs:
            path = run_dir / rel
            if path.exists():
                tar.add(str(path), arcname=rel)


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "clean":
        print(json.dumps(clean(Path(argv[1]))))
        return 0
    if len(argv) != 4 or argv[0] != "run" or argv[2] not in ("--t0", "--go"):
        print(
            "usage: agent.py run SPEC.json --t0 EPOCH_S | --go FILE; clean RUN_ROOT",
            file=sys.stderr,
        )
        return 2
    spec = json.loads(Path(argv[1]).read_text())
    if argv[2] == "--go":
        go = Path(argv[3])
        deadline = time.time() + GO_TIMEOUT_S
        while not go.exists() or not go.read_text().strip():
            if time.time() > deadline:
                print(f"no {go} after {GO_TIMEOUT_S} s", file=sys.stderr)
                return 1
            time.sleep(POLL_S)
        # the file is left for whoever wrote it to remove (run.yml does): unlinking it here
        # raced Ansible's copy module, which stats its destination after the rename (under
        # TCG the agent won: "No such file or directory" and run.yml failed on that node)
        t0 = float(go.read_text())
    else:
        t0 = float(argv[3])
    result = run(spec, t0)
    print(json.dumps({"node": result["node"], "errors": result["errors"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
