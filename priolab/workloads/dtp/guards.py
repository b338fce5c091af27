"""What each of DTP's metrics could hide, and what catches it (analysis/guards.py; the
definitions are in this folder's README, "Metrics")."""

from analysis.guards import MetricGuard as G

GUARDS = (
    G("deadline_ratio", "blocks complete at the receiver by release + deadline / released",
      "a sender that releases few blocks (or stops) has few to miss",
      ("blocks_released", "pending_pct"),
      "blocks_released against the scenario's rounds; blocks still queued at the end count late"),
    G("deadline_ratio_p1", "the deadline ratio of the most important blocks",
      "a scheme that sacrifices every other priority to it",
      ("deadline_ratio", "good_bytes_ratio")),
    G("good_bytes_ratio", "bytes of on-time blocks / bytes handed to QUIC",
      "dropping late blocks before sending saves bytes and raises the ratio",
      ("deadline_ratio", "dropped_pct")),
    G("window_ratio_min", "the worst 1 s window's deadline ratio",
      "a run shorter than a window has one window", ("blocks_released", "deadline_ratio")),
    G("completion_median_ms", "median time from release to completion of completed blocks",
      "blocks never completed have no completion time", ("deadline_ratio", "pending_pct")),
    G("completion_p95_ms", "95th percentile of completion time of completed blocks",
      "blocks never completed have no completion time", ("deadline_ratio", "pending_pct")),
)  # fmt: skip
