#!/bin/sh
# Real runs behind the predictor's agreement table (endpoints/README.md, "The predictor").
# Derives three scenarios from scenarios/quick.yaml (as is; uplink iid loss 0.05 %; uplink queue
# 0.1 BDP), runs w/ and w/o Pri REPS times each under the netns lock, analyses each run, and
# `python -m analysis.predictor_agreement OUT_DIR` compares them with the predictor.
# Usage (from the repo root): [REPS=2] sh endpoints/rise-sim/validate.sh [OUT_DIR]
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
}
for name, up in variants.items():
    sc = yaml.safe_load(yaml.safe_dump(base))
    sc["name"] = name
    sc["link"]["uplink"].update(up)
    (out / f"{name}.yaml").write_text(yaml.safe_dump(sc, sort_keys=False))
PY
# inside the lock: wait up to 60 s for a quiet machine (other jobs' CPU makes a run invalid)
QUIET='for i in $(seq 12); do [ "$(cut -d. -f1 /proc/loadavg)" -lt 2 ] && break; sleep 5; done; cat /proc/loadavg; exec "$@"'
for rep in $(seq 1 "$REPS"); do
  for name in quick quick-loss005 quick-q01; do
    for scheme in nopri pri; do
      dir="$OUT/$name/$scheme/r$rep"
      # a valid run is kept; an invalid one (e.g. CPU saturated by other jobs) is redone
      grep -qs '"valid": true' "$dir/metrics.json" && continue
      rm -rf "$dir"
      flock /tmp/priolab-netns.lock sh -c "$QUIET" quiet .venv/bin/priolab run-one \
        "$OUT/scenarios/$name.yaml" --setting FB-4K-Low --scheme "$scheme" --speed moderate \
        --rep "$rep" --out "$dir" || true
      .venv/bin/python -m analysis.tables "$dir" && .venv/bin/python -m analysis.metrics "$dir" || true
    done
  done
done
