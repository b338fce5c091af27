"""What each of RoQ's core metrics could hide, and what catches it (analysis/guards.py; the
definitions are in this folder's README, "What the analysis measures")."""

from analysis.guards import MetricGuard as G

GUARDS = (
    G("ssim_mean", "SSIM of the picture on screen at each sent frame's time vs its source",
      "synthetic content whose SSIM hardly changes with bitrate, or a frozen picture of a "
      "static scene scores high", ("decoded_pct", "frozen_pct", "target_mean_kbps"),
      "lost frames are scored (the last decoded picture or black), never skipped"),
    G("psnr_mean_db", "PSNR of the picture on screen vs its source, capped",
      "as SSIM: a frozen static picture", ("decoded_pct", "frozen_pct")),
    G("decoded_pct", "sent frames the receiver decoded",
      "a sender that sends few frames (a low frame rate) loses few",
      ("send_rate_mean_kbps", "frames_sent")),
    G("rtp_loss_pct", "RTP packets sent but never received",
      "a congestion controller that sends almost nothing loses almost nothing",
      ("send_rate_mean_kbps", "ssim_mean")),
    G("latency_median_ms", "decode minus capture time of decoded frames",
      "frames never decoded have no latency", ("decoded_pct", "frozen_pct")),
    G("target_mean_kbps", "the congestion controller's mean target bitrate",
      "a target the encoder does not reach", ("send_rate_mean_kbps",)),
    G("send_rate_mean_kbps", "the sender's mean send rate",
      "sending fast into a queue that drops", ("rtp_loss_pct", "latency_median_ms")),
)  # fmt: skip
