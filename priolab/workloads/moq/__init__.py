"""The `moq` workload ([MoQ]): prioritised Media-over-QUIC live streaming.

- `workload.py`: `MoqParams` and the `Moq` plug-in (check, prepare, plan: the publisher in
  the host, the subscriber in the guest);
- `otdr.py`: the on-time display ratio from the GoP dependency model (traces/gop.py) and a
  receive log;
- `analysis.py`: a run's logs → `tables/moq_frames.parquet` and its metrics;
- `figures.py`: Figs. 6-10 and the OTDR table of a scenario.
"""

from priolab.workloads.moq.workload import Moq

WORKLOAD = Moq()
