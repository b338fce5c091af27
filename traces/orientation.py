"""3DoF orientation maths: Euler angles, unit quaternions, slerp, geodesic angle.

Convention (used everywhere in priolab, and by the `rise` endpoint's tracking CSV):
- Frame: x right, y up, z forward (the viewing direction of the identity orientation).
- Euler angles are intrinsic yaw, then pitch, then roll, in radians:
  R = Ry(yaw) · Rx(pitch) · Rz(roll), with the usual right-handed rotation matrices
  (Ry(a) = [[cos a, 0, sin a], [0, 1, 0], [-sin a, 0, cos a]], and so on).
  Yaw turns about the vertical axis, pitch about the lateral axis (positive pitch looks down:
  forward = (sin yaw · cos pitch, −sin pitch, cos yaw · cos pitch)), roll about the viewing axis.
  This is Unity's order (Z, then X, then Y extrinsically = Y, X', Z'' intrinsically); Unity's
  frame is left-handed, but a change of handedness does not change any geodesic angle.
- Quaternions are (w, x, y, z), unit norm; q and −q are the same orientation.
- The geodesic angle between two orientations is the angle of the rotation R1ᵀ·R2, in [0, π]:
  2·acos(|q1·q2|).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "euler_to_quat",
    "forward_vector",
    "geodesic_angle",
    "geodesic_angle_euler",
    "quat_mul",
    "quat_to_euler",
    "quat_to_matrix",
    "slerp",
    "wrap_pi",
]


def wrap_pi(a: np.ndarray | float) -> np.ndarray:
    """Wrap angles to (−π, π]."""
    a = np.asarray(a, dtype=np.float64)
    w = np.mod(a + np.pi, 2 * np.pi) - np.pi
    return np.where(w == -np.pi, np.pi, w)


def _axis_quat(angle: np.ndarray, axis: int) -> np.ndarray:
    q = np.zeros(np.shape(angle) + (4,))
    q[..., 0] = np.cos(np.asarray(angle) / 2)
    q[..., 1 + axis] = np.sin(np.asarray(angle) / 2)
    return q


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a ⊗ b (rotation b first, then a), broadcasting over leading axes."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a, dtype=np.float64), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, dtype=np.float64), -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def euler_to_quat(yaw: np.ndarray, pitch: np.ndarray, roll: np.ndarray) -> np.ndarray:
    """q = q_y(yaw) ⊗ q_x(pitch) ⊗ q_z(roll); shape (..., 4)."""
    return quat_mul(quat_mul(_axis_quat(yaw, 1), _axis_quat(pitch, 0)), _axis_quat(roll, 2))


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=-2,
    )


def quat_to_euler(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inverse of euler_to_quat: yaw, roll in (−π, π], pitch in [−π/2, π/2]. At gimbal lock
    (pitch = ±π/2) roll is set to 0 and the whole turn goes to yaw."""
    r = quat_to_matrix(q)
    pitch = np.arcsin(np.clip(-r[..., 1, 2], -1.0, 1.0))
    lock = np.abs(r[..., 1, 2]) > 1 - 1e-12
    yaw_lock = np.arctan2(-r[..., 2, 0], r[..., 0, 0])
    yaw = np.where(lock, yaw_lock, np.arctan2(r[..., 0, 2], r[..., 2, 2]))
    roll = np.where(lock, 0.0, np.arctan2(r[..., 1, 0], r[..., 1, 1]))
    return wrap_pi(yaw), pitch, wrap_pi(roll)


def forward_vector(yaw: np.ndarray, pitch: np.ndarray) -> np.ndarray:
    """The viewing direction R·(0, 0, 1); roll does not move it."""
    cp = np.cos(pitch)
    return np.stack([np.sin(yaw) * cp, -np.sin(pitch), np.cos(yaw) * cp], axis=-1)


def geodesic_angle(q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Angle (rad, in [0, π]) of the rotation taking orientation q1 to q2."""
    q1 = np.asarray(q1, dtype=np.float64)
    q2 = np.asarray(q2, dtype=np.float64)
    n = np.linalg.norm(q1, axis=-1) * np.linalg.norm(q2, axis=-1)
    d = np.abs(np.sum(q1 * q2, axis=-1)) / n
    return 2 * np.arccos(np.clip(d, 0.0, 1.0))


def geodesic_angle_euler(e1: np.ndarray, e2: np.ndarray) -> np.ndarray:
    """Geodesic angle between two (..., 3) arrays of (yaw, pitch, roll)."""
    e1 = np.asarray(e1, dtype=np.float64)
    e2 = np.asarray(e2, dtype=np.float64)
    return geodesic_angle(
        euler_to_quat(e1[..., 0], e1[..., 1], e1[..., 2]),
        euler_to_quat(e2[..., 0], e2[..., 1], e2[..., 2]),
    )


def slerp(q0: np.ndarray, q1: np.ndarray, u: np.ndarray | float) -> np.ndarray:
    """Spherical linear interpolation along the shorter arc; u in [0, 1] (broadcasts)."""
    q0 = np.asarray(q0, dtype=np.float64)
    q1 = np.asarray(q1, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)[..., None]
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0, -q1, q1)
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    s = np.sin(theta)
    small = s < 1e-9
    safe = np.where(small, 1.0, s)
    a = np.where(small, 1 - u, np.sin((1 - u) * theta) / safe)
    b = np.where(small, u, np.sin(u * theta) / safe)
    out = a * q0 + b * q1
    return out / np.linalg.norm(out, axis=-1, keepdims=True)
