"""What each of QPR's headline metrics could hide, and what catches it (analysis/guards.py;
the definitions are in this folder's README)."""

from analysis.guards import MetricGuard as G

GUARDS = (
    G("throughput_mean_mbps", "mean per-segment download throughput",
      "unreliable objects count what arrived: a scheme that loses bytes fast looks fast",
      ("unreliable_bytes_lost_pct", "objects_incomplete_pct")),
    G("freezes", "playback freezes (a stall still going at the end counts)",
      "a player that plays little: few segments, few freezes", ("played_pct", "segments")),
    G("freeze_total_s", "summed freeze time", "as freezes: a player that plays little",
      ("played_pct", "startup_s")),
    G("played_pct", "media seconds played / run duration",
      "played media whose objects were incomplete (undecodable quality)",
      ("decodable_quality_rank1_mean", "objects_incomplete_pct")),
    G("quality_rank1_mean", "mean quality level of the most important objects",
      "quality chosen, not received: incomplete objects keep their level",
      ("decodable_quality_rank1_mean", "objects_incomplete_pct")),
    G("objects_incomplete_pct", "objects that did not arrive whole",
      "a scheme that requests few or small objects", ("throughput_mean_mbps", "played_pct")),
)  # fmt: skip
