"""Where a rise run's MTP tail goes, and what set the Guest's uplink: one row per run.

    python -m priolab.workloads.rise.tail_split [--csv OUT] [--by site,commit] RUN_DIR [...]

prints one CSV row per run, then the mean of every column per scenario, setting, scheme and
the `--by` columns: by default site (metadata.json `site.kind`) and commit (`git.commit`,
`+dirty` when the tree was), so runs of two sites, or of two versions of the code, compare
side by side and are never pooled; `--by site` pools commits known to run the same code.
Everything is over the Guest's analysed window (metrics.json `analysis.windows_us.guest`).

**The MTP split** (`mtp_parts`), per frame displayed at the Guest and rendered from one of its
samples: MTP = `up` (the sample's uplink delay: its first receipt at the Host − its
generation) + `phase` (the wait for the Host's next frame tick) + `stale` (ticks that passed
with no newer sample) + `deliver` (the frame: the Host's encode tick → the Guest's display).
`tail_<part>_ms` is the part's mean over the frames at or above the run's MTP p95 (the frames
that make the tail), `all_<part>_ms` its median over every frame. `tail_up_share` is the
share of the tail frames' MTP that is uplink delay.

**The Guest's uplink** (`uplink`), from the first to the last path_stats.csv row in the window
(quinn's own counters) and channels.csv (1 s rows): `up_pkts_per_s` and `up_mbps` (UDP
payloads quinn sent), `bytes_per_pkt`, `cev_per_10k_pkts` and `cev_per_10mb` (quinn's
congestion events per 10,000 packets and per 10 MB sent), `cwnd_mean_bytes` (mean of the
100 ms rows), `video_mbps` (video datagram bytes handed to quinn), and `small_per_video` =
(packets − video datagrams) / video datagrams: a video datagram is full size and fills a
packet alone, so the rest are the packets that carry QUIC ACK frames, the Guest's ACK
datagrams and tracking. docs/investigations/2026-11-27-rise-nopri-tail-gap.md uses it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ground import rundir
from priolab.workloads.rise.logs import read_log_csv
from priolab.workloads.rise.mtp_phase import frame_ticks

PARTS = ("up", "phase", "stale", "deliver")
PLACE = ("scenario", "setting", "scheme")
BY = ("site", "commit")


def mtp_parts(
    shown: pd.DataFrame, host_sent: pd.DataFrame, host_recv: pd.DataFrame
) -> pd.DataFrame:
    """Per displayed frame rendered from a sample (frames_displayed rows `shown`, already cut
    to the window): `mtp`, `up`, `phase`, `stale`, `deliver` in ms (their sum is `mtp`, up to
    the µs rounding of the log) and `display_time_us`. A frame whose tick or sample the Host's
    logs lack is an error: leaving it out could leave out exactly the slowest frames."""
    f, enc, recv, nxt = frame_ticks(shown, host_sent, host_recv)
    gen = f["tracking_gen_time_us"].to_numpy(np.int64)
    disp = f["display_time_us"].to_numpy(np.int64)
    return pd.DataFrame(
        {
            "display_time_us": disp,
            "mtp": f["mtp_ms"].to_numpy(np.float64),
            "up": (recv - gen) / 1e3,
            "phase": (nxt - recv) / 1e3,
            "stale": (enc - nxt) / 1e3,
            "deliver": (disp - enc) / 1e3,
        }
    )


def tail_means(parts: pd.DataFrame, q: float = 95.0) -> dict[str, float]:
    """The parts' means over the frames with MTP at or above its `q`-th percentile (numpy's
    linear interpolation, as `mtp_p95_ms`), their medians over all frames, and the p95."""
    out: dict[str, float] = {"frames": float(len(parts))}
    if parts.empty:
        return out | {"mtp_p95_ms": float("nan")}
    p = float(np.percentile(parts["mtp"], q))
    tail = parts[parts["mtp"] >= p]
    out["mtp_p95_ms"] = p
    out["tail_frames"] = float(len(tail))
    out["tail_mtp_ms"] = float(tail["mtp"].mean())
    for c in PARTS:
        out[f"tail_{c}_ms"] = float(tail[c].mean())
        out[f"all_{c}_ms"] = float(parts[c].median())
    out["tail_up_share"] = out["tail_up_ms"] / out["tail_mtp_ms"]
    return out


def uplink(
    path_stats: pd.DataFrame, channels: pd.DataFrame, start_us: int, end_us: int
) -> dict[str, float]:
    """The Guest's uplink over [start_us, end_us] from its path_stats.csv and channels.csv."""
    ps = path_stats[(path_stats["time_us"] >= start_us) & (path_stats["time_us"] <= end_us)]
    nan = float("nan")
    if len(ps) < 2:
        return {"cwnd_mean_bytes": nan}
    a, b = ps.iloc[0], ps.iloc[-1]
    dt_s = (b["time_us"] - a["time_us"]) / 1e6
    pkts = float(b["sent_packets"] - a["sent_packets"])
    nbytes = float(b["bytes_sent"] - a["bytes_sent"])
    cev = float(b["congestion_events"] - a["congestion_events"])
    out = {
        "up_pkts_per_s": pkts / dt_s,
        "up_mbps": nbytes * 8 / dt_s / 1e6,
        "bytes_per_pkt": nbytes / pkts if pkts else nan,
        "cev_per_10k_pkts": cev / pkts * 1e4 if pkts else nan,
        "cev_per_10mb": cev / nbytes * 1e7 if nbytes else nan,
        "cwnd_mean_bytes": float(ps["cwnd_bytes"].mean()),
        "lost_packets": float(b["lost_packets"] - a["lost_packets"]),
    }
    v = channels[channels["channel"] == "video"]
    v = v[(v["time_us"] >= start_us) & (v["time_us"] <= end_us)]
    if len(v) >= 2:
        va, vb = v.iloc[0], v.iloc[-1]
        vdt = (vb["time_us"] - va["time_us"]) / 1e6
        out["video_mbps"] = float(vb["bytes_sent"] - va["bytes_sent"]) * 8 / vdt / 1e6
        # packets over the same span as the video rows (path_stats rows nearest them)
        t = ps["time_us"].to_numpy(np.int64)
        i0 = int(np.argmin(np.abs(t - va["time_us"])))
        i1 = int(np.argmin(np.abs(t - vb["time_us"])))
        vid = float(vb["sent"] - va["sent"])
        span_pkts = float(ps["sent_packets"].iloc[i1] - ps["sent_packets"].iloc[i0])
        out["small_per_video"] = (span_pkts - vid) / vid if vid else nan
    return out


def split(run_dir: Path) -> dict[str, object]:
    """One run's row: its place, site, the MTP split and the Guest's uplink."""
    m = json.loads((run_dir / rundir.METRICS).read_text())
    meta = json.loads((run_dir / rundir.METADATA).read_text())
    _, win_start, end = m["analysis"]["windows_us"]["guest"]
    run = m["run"]
    row: dict[str, object] = {
        "run": str(run_dir),
        "scenario": run["scenario"],
        "setting": run["setting"],
        "scheme": run["scheme"],
        "rep": run["rep"],
        "site": meta.get("site", {}).get("kind", "mininet"),
        "commit": _commit(meta),
    }
    shown = read_log_csv(run_dir / "guest" / "frames_displayed.csv")
    shown = shown[(shown["display_time_us"] >= win_start) & (shown["display_time_us"] <= end)]
    parts = mtp_parts(
        shown,
        read_log_csv(run_dir / "host" / "frames_sent.csv"),
        read_log_csv(run_dir / "host" / "tracking_received.csv"),
    )
    row |= tail_means(parts)
    row |= uplink(
        read_log_csv(run_dir / "guest" / "path_stats.csv"),
        read_log_csv(run_dir / "guest" / "channels.csv"),
        win_start,
        end,
    )
    return row


def _commit(meta: dict) -> str:
    git = meta.get("git") or {}
    return str(git.get("commit") or "unknown")[:7] + ("+dirty" if git.get("dirty") else "")


def by_site(rows: pd.DataFrame, by: tuple[str, ...] = BY) -> pd.DataFrame:
    """Mean of every numeric column and the run count per scenario, setting, scheme and `by`."""
    num = rows.select_dtypes("number").columns.drop("rep", errors="ignore")
    g = rows.groupby([*PLACE, *by], sort=True)
    out = g[list(num)].mean()
    out.insert(0, "n", g.size())
    return out.reset_index()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m priolab.workloads.rise.tail_split", description=__doc__
    )
    ap.add_argument("runs", type=Path, nargs="+")
    ap.add_argument("--csv", type=Path, help="also write the per-run rows here")
    ap.add_argument("--by", default=",".join(BY), help="group columns besides the place")
    a = ap.parse_args(argv)
    by = tuple(c for c in a.by.split(",") if c)
    if not set(by) <= set(BY):
        print(f"error: --by {a.by!r}: allowed columns are {', '.join(BY)}", file=sys.stderr)
        return 2
    rows = []
    for run in a.runs:
        if not (run / rundir.METRICS).is_file():
            print(f"error: {run}: no {rundir.METRICS} (run python -m analysis.metrics)",
                  file=sys.stderr)  # fmt: skip
            return 2
        try:
            rows.append(split(run))
        except ValueError as e:
            print(f"error: {run}: {e}", file=sys.stderr)
            return 2
    df = pd.DataFrame(rows)
    if a.csv:
        df.to_csv(a.csv, index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 60):
        print(df.drop(columns=["run"]).round(3).to_string(index=False))
        print()
        print(by_site(df, by).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
