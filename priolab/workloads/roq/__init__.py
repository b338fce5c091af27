"""The `roq` workload ([RoQ]): RTP over QUIC with application-level congestion control.

- `workload.py`: `RoqParams` and the `Roq` plug-in (check, prepare, plan: the sender in the
  host, the receiver in the guest);
- `source.py`: the raw source, cached: natural (`photos.py`: pans and zooms over photographs
  of a Debian package) or synthetic (ffmpeg);
- `span.py`: the source's SSIM across bitrates, encoded offline by the endpoint's encoder;
- `quality.py`: SSIM and PSNR of two luma planes (the numpy definition);
- `kernel.py`: the same scores from the Rust kernel (endpoints/roq-score), bit for bit, for
  many pairs at once: what the analysis scores with; `bench_scoring.py`: two checkouts'
  metrics step on the same runs (time, same bytes);
- `analysis.py`: a run's logs → `tables/roq_frames.parquet`, `tables/roq_rate.parquet` and
  its metrics (SSIM/PSNR per source frame aligned by RTP timestamp);
- `figures.py`: the target-bitrate figures (Figs. 4-7 style) and the SSIM table.
"""

from priolab.workloads.roq.workload import Roq, RoqParams

__all__ = ["WORKLOAD", "Roq", "RoqParams"]

WORKLOAD = Roq()
