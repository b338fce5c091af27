"""The `qpr` workload ([QPR]): adaptive partially reliable delivery of volumetric media
over QUIC.

- `workload.py`: `QprParams` and the `Qpr` plug-in (check, prepare, plan: the segment server
  in the host, the headless player in the guest);
- `analysis.py`: a run's logs → `tables/qpr_segments.parquet`, `tables/qpr_objects.parquet`
  and its metrics;
- `figures.py`: per-segment throughput CDFs (Figs. 12-15), quality per priority rank
  (Figs. 13c/d, 16) and Table 3 (freezes, total freeze duration) of a scenario.
"""

from priolab.workloads.qpr.workload import Qpr

WORKLOAD = Qpr()
