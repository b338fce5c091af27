"""Synthetic 3DoF head movement: seeded, smooth, at a given angular speed.

Model (same idea as the `rise` endpoint's built-in synthetic tracking): the view direction d
moves along a great circle at a constant angular speed ω (deg/s) in the direction of a heading
h (a unit tangent of the sphere at d). The heading turns about d at a turn rate κ that follows
an Ornstein–Uhlenbeck process (mean 0, standard deviation `turn_sigma_deg_s`, correlation time
`turn_tau_s`), so the path curves smoothly and never jumps. When the elevation exceeds
0.8 × `max_pitch_deg`, an extra turn rate proportional to the excess (gain 30 + 200·ω rad/s per
rad, ω in rad/s) steers the heading back to the horizon, so |pitch| stays near or below
`max_pitch_deg`. Roll is 0. Yaw and pitch are read off d (traces.orientation convention).

Default speeds are ASSUMPTIONS (the paper does not give them). They come from the angular
speed of the view in the Corbillon et al. MMSys'18 traces (3 users, 60 Hz resampled, speed
over 0.5 s windows, pooled): 25th/50th/75th/90th percentiles ≈ 4 / 13 / 40 / 88 deg/s.
slow = 10 deg/s (about the median: a viewer mostly looking around a scene),
moderate = 40 deg/s (about the 75th percentile: active exploration),
fast = 90 deg/s (about the 90th percentile: quick head turns, sustained).
"""

from __future__ import annotations

import math

import numpy as np

from traces.errors import TraceError
from traces.orientation import euler_to_quat
from traces.tracking import TrackingTrace

SPEEDS_DEG_S: dict[str, float] = {"slow": 10.0, "moderate": 40.0, "fast": 90.0}


def synthetic_tracking(
    speed_deg_s: float,
    duration_s: float,
    seed: int,
    rate_hz: float = 60.0,
    turn_sigma_deg_s: float = 60.0,
    turn_tau_s: float = 1.0,
    max_pitch_deg: float = 60.0,
) -> TrackingTrace:
    """Samples at k / rate_hz for k = 0 … ceil(duration_s·rate_hz) − 1."""
    if not (speed_deg_s >= 0 and math.isfinite(speed_deg_s)):
        raise TraceError(None, f"speed_deg_s must be >= 0, not {speed_deg_s}")
    if not (duration_s > 0 and rate_hz > 0):
        raise TraceError(None, "duration_s and rate_hz must be > 0")
    rng = np.random.default_rng(seed)
    n = max(1, math.ceil(duration_s * rate_hz - 1e-9))
    dt = 1.0 / rate_hz
    step = math.radians(speed_deg_s) * dt
    sigma = math.radians(turn_sigma_deg_s)
    alpha = math.exp(-dt / turn_tau_s)
    kick = sigma * math.sqrt(1 - alpha * alpha)
    max_el = math.radians(max_pitch_deg)
    soft_el = 0.8 * max_el  # steering starts here; its gain grows with the speed
    gain = 30.0 + 200.0 * math.radians(speed_deg_s)
    # start looking at the horizon, yaw 0, with a random heading
    d = np.array([0.0, 0.0, 1.0])
    a0 = rng.uniform(-math.pi, math.pi)
    h = np.array([math.cos(a0), math.sin(a0), 0.0])
    kappa = rng.normal(0.0, sigma)
    yaw = np.empty(n)
    pitch = np.empty(n)
    for k in range(n):
        yaw[k] = math.atan2(d[0], d[2])
        pitch[k] = math.asin(max(-1.0, min(1.0, -d[1])))
        # turn the heading about d
        side = np.cross(d, h)
        el = math.asin(max(-1.0, min(1.0, d[1])))
        steer = 0.0
        if abs(el) > soft_el and side[1] != 0.0:
            # turning by +phi changes h_y at rate side_y; push h_y against the elevation
            sign = -math.copysign(1.0, el) * math.copysign(1.0, side[1])
            steer = sign * gain * (abs(el) - soft_el)
        phi = (kappa + steer) * dt
        h = h * math.cos(phi) + side * math.sin(phi)
        # move d along the great circle towards h
        d, h = d * math.cos(step) + h * math.sin(step), h * math.cos(step) - d * math.sin(step)
        d /= np.linalg.norm(d)
        h -= d * float(np.dot(h, d))
        h /= np.linalg.norm(h)
        kappa = alpha * kappa + kick * rng.normal()
    return TrackingTrace(np.arange(n) * dt, euler_to_quat(yaw, pitch, np.zeros(n)))
