"""The `dtp` workload ([DTP]): deadline-aware block delivery over QUIC.

- `workload.py`: `DtpParams` and the `Dtp` plug-in (check, prepare, plan: the sender in the
  host, the receiver in the guest);
- `analysis.py`: a run's logs → `tables/dtp_blocks.parquet` and its metrics (`ANALYSIS`);
- `figures.py`: Figs. 3-5 of the paper and the deadline table of a scenario.
"""

from priolab.workloads.dtp.workload import Dtp

WORKLOAD = Dtp()
