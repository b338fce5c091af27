"""What each of MoQ's headline metrics could hide, and what catches it (analysis/guards.py;
the definitions are in this folder's README and otdr.py)."""

from analysis.guards import MetricGuard as G

GUARDS = (
    G("otdr_700ms", "on-time display ratio of all frames at a 700 ms budget",
      "a publisher that sends few frames: the ratio counts sent frames only",
      ("frames_sent", "received_pct"), "frames_sent against duration x fps"),
    G("otdr_I_700ms", "on-time display ratio of I frames at a 700 ms budget",
      "a scheme that puts I frames first and lets every P and B frame miss",
      ("otdr_P_700ms", "otdr_B_700ms")),
    G("i_all_on_time_budget_ms", "the smallest budget at which every I frame is on time",
      "one lost I frame makes it NaN, which a mean over runs would drop silently",
      ("lost_I_pct", "received_pct")),
    G("latency_I_median_ms", "median publish-to-arrival latency of I frames",
      "lost I frames have no latency", ("lost_I_pct", "otdr_I_700ms")),
    G("received_pct", "frames that arrived at the subscriber",
      "frames that arrive long after they could be displayed",
      ("otdr_700ms", "latency_I_p95_ms")),
)  # fmt: skip
