#!/bin/sh
# Real runs behind the predictor's agreement table (endpoints/README.md, "The predictor").
# Derives four scenarios from scenarios/quick.yaml (as is; uplink iid loss 0.05 %; uplink queue
# 0.1 BDP; uplink policer at 70 Mbit/s with a 25 kB bucket instead of the shaper), runs w/ and
# w/o Pri REPS times each (one rep of all of them is one batch under the netns lock, released
# between batches), analyses
# each run, and `python -m analysis.predictor_agreement OUT_DIR` compares them with the predictor.
# The load average when each run started is kept beside it (`r<rep>.loadavg`), and the
# endpoints' UDP counters during it (`r<rep>.udp`, the last line per role is the latest).
# Usage (from the repo root): [REPS=2] [POINTS='quick ...'] sh endpoints/rise-sim/validate.sh [OUT_DIR]
set -eu
OUT=${1:-/tmp/rise-sim-validation}
REPS=${REPS:-2}
mkdir -p "$OUT/scenarios"
.venv/bin/python - "$OUT/scenarios" <<'PY'
import sys
from pathlib import Path

import yaml

out = Path(sys.argv[1])
base = yaml.safe_load(Path("scenarios/quick.yaml").read_text())
variants = {
    "quick": {},
    "quick-loss005": {"loss": {"model": "iid", "loss_pct": 0.05}},
    "quick-q01": {"queue": {"bdp_factor": 0.1}},
    "quick-pol25k": {"policer": {"rate_mbps": 70, "burst_bytes": 25000}},
}
for name, up in variants.items():
    sc = yaml.safe_load(yaml.safe_dump(base))
    sc["name"] = name
    if "policer" in up:  # a policer replaces the shaper's rate and has no queue
        for key in ("rate_mbps", "queue"):
            sc["link"]["uplink"].pop(key)
    sc["link"]["uplink"].update(up)
    (out / f"{name}.yaml").write_text(yaml.safe_dump(sc, sort_keys=False))
PY
if [ -z "${BATCH_REP:-}" ]; then
  # one rep of every point and scheme is one batch under the netns lock, released between batches
  for rep in $(seq 1 "$REPS"); do
    flock /tmp/priolab-netns.lock env BATCH_REP="$rep" sh "$0" "$OUT"
  done
  exit 0
fi
rep=$BATCH_REP
# The endpoints' UDP counters while a run lasts (read-only, from each rise process's
# /proc/PID/net/snmp, i.e. its namespace's): `role Udp: <values>` every 0.5 s. RcvbufErrors are
# packets the kernel dropped because the endpoint's socket buffer was full (not the link).
# CPU idle over the next 3 s, % of all cores (from /proc/stat)
idle_pct() {
  a=$(head -1 /proc/stat)
  sleep 3
  b=$(head -1 /proc/stat)
  echo "$a
$b" | awk '{idle[NR] = $5 + $6; tot[NR] = 0; for (i = 2; i <= NF; i++) tot[NR] += $i}
    END {d = tot[2] - tot[1]; print (d > 0 ? int(100 * (idle[2] - idle[1]) / d) : 0)}'
}
udp_sampler() {
  while :; do
    for pid in $(pgrep -f "rise --role (guest|host)"); do
      role=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | sed -n 's/.*--role \([a-z]*\).*/\1/p')
      line=$(grep '^Udp:' "/proc/$pid/net/snmp" 2>/dev/null | tail -1)
      [ -n "$role" ] && [ -n "$line" ] && echo "$role $line"
    done
    sleep 0.5
  done
}
for name in ${POINTS:-quick quick-loss005 quick-q01 quick-pol25k}; do
  for scheme in nopri pri; do
    dir="$OUT/$name/$scheme/r$rep"
    # a valid run is kept; an invalid one (e.g. CPU saturated by other jobs) is redone
    grep -qs '"valid": true' "$dir/metrics.json" && continue
    rm -rf "$dir"
    mkdir -p "$(dirname "$dir")"
    # wait up to 3 min for a quiet machine (other jobs' CPU makes a run invalid): ≥ 70 % of the
    # CPU idle over 3 s and a load average below 2; keep the load at the start
    for _ in $(seq 45); do
      [ "$(idle_pct)" -ge 70 ] && [ "$(cut -d. -f1 /proc/loadavg)" -lt 2 ] && break
      sleep 1
    done
    tee "$dir.loadavg" < /proc/loadavg
    udp_sampler > "$dir.udp" &
    sampler=$!
    .venv/bin/priolab run-one "$OUT/scenarios/$name.yaml" --setting FB-4K-Low --scheme "$scheme" \
      --speed moderate --rep "$rep" --out "$dir" || true
    kill "$sampler"
    .venv/bin/python -m analysis.tables "$dir" && .venv/bin/python -m analysis.metrics "$dir" || true
  done
done
