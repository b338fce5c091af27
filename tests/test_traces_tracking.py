import math

import numpy as np
import pytest

from ground.data import skip_reason
from tests.conftest import dataset, has_dataset
from traces.errors import TraceError
from traces.orientation import (
    euler_to_quat,
    forward_vector,
    geodesic_angle,
    geodesic_angle_euler,
    quat_to_euler,
    quat_to_matrix,
    slerp,
)
from traces.tracking import (
    TrackingTrace,
    angular_speed_deg_s,
    from_euler,
    read_corbillon,
    read_tracking,
    read_tracking_csv,
    resample,
    write_tracking_csv,
)
from traces.tracking_gen import SPEEDS_DEG_S, synthetic_tracking

H = math.pi / 2

# --------------------------------------------------------------------------- convention


def test_known_rotations_matrices():
    # yaw +90°: forward (0,0,1) turns to +x (right)
    np.testing.assert_allclose(
        quat_to_matrix(euler_to_quat(H, 0, 0)) @ [0, 0, 1], [1, 0, 0], atol=1e-12
    )
    # pitch +90°: looks down (−y)
    np.testing.assert_allclose(
        quat_to_matrix(euler_to_quat(0, H, 0)) @ [0, 0, 1], [0, -1, 0], atol=1e-12
    )
    # roll +90°: the up vector (0,1,0) turns to −x, the view direction stays
    r = quat_to_matrix(euler_to_quat(0, 0, H))
    np.testing.assert_allclose(r @ [0, 1, 0], [-1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(r @ [0, 0, 1], [0, 0, 1], atol=1e-12)
    # intrinsic order: yaw, then pitch about the yawed x axis
    q = euler_to_quat(H, H, 0)
    np.testing.assert_allclose(quat_to_matrix(q) @ [0, 0, 1], [0, -1, 0], atol=1e-12)
    np.testing.assert_allclose(quat_to_matrix(q) @ [1, 0, 0], [0, 0, -1], atol=1e-12)
    np.testing.assert_allclose(forward_vector(H, 0.0), [1, 0, 0], atol=1e-12)


def test_geodesic_angles_of_known_rotations():
    assert geodesic_angle_euler([0.1, 0, 0], [0.4, 0, 0]) == pytest.approx(0.3)
    assert geodesic_angle_euler([0, 0.2, 0], [0, -0.3, 0]) == pytest.approx(0.5)
    assert geodesic_angle_euler([0, 0, 0], [0, 0, 1.0]) == pytest.approx(1.0)
    # same orientation, two Euler spellings: Ry(π) = Rx(π)·Rz(π)
    assert geodesic_angle_euler([math.pi, 0, 0], [0, math.pi, math.pi]) == pytest.approx(
        0, abs=1e-7
    )
    # wrapping: yaw 2π − 0.05 is −0.05
    assert geodesic_angle_euler([2 * math.pi - 0.05, 0, 0], [0.05, 0, 0]) == pytest.approx(0.1)
    # composite: yaw 90° then pitch 90° vs identity is a 120° rotation
    assert geodesic_angle_euler([H, H, 0], [0, 0, 0]) == pytest.approx(2 * math.pi / 3)
    # q and −q
    q = euler_to_quat(0.3, 0.2, 0.1)
    assert geodesic_angle(q, -q) == pytest.approx(0, abs=1e-7)
    assert geodesic_angle_euler([0, 0, 0], [math.pi, 0, 0]) == pytest.approx(math.pi)


def test_euler_quaternion_round_trip():
    rng = np.random.default_rng(7)
    e = np.stack(
        [rng.uniform(-3.1, 3.1, 500), rng.uniform(-1.5, 1.5, 500), rng.uniform(-3.1, 3.1, 500)],
        axis=-1,
    )
    back = np.stack(quat_to_euler(euler_to_quat(e[:, 0], e[:, 1], e[:, 2])), axis=-1)
    np.testing.assert_allclose(back, e, atol=1e-9)
    # gimbal lock: orientation preserved even though the angles are not unique
    y, p, r = quat_to_euler(euler_to_quat(0.4, H, 0.3))
    assert geodesic_angle_euler([y, p, r], [0.4, H, 0.3]) == pytest.approx(0, abs=1e-6)


def test_slerp():
    a = euler_to_quat(0.0, 0, 0)
    b = euler_to_quat(H, 0, 0)
    mid = slerp(a, b, 0.5)
    assert quat_to_euler(mid)[0] == pytest.approx(H / 2)
    np.testing.assert_allclose(slerp(a, b, 0.0), a, atol=1e-12)
    assert geodesic_angle(slerp(a, b, 1.0), b) == pytest.approx(0, abs=1e-7)
    # shorter arc even if the second quaternion has the other sign
    assert quat_to_euler(slerp(a, -b, 0.25))[0] == pytest.approx(H / 4)
    # identical inputs
    np.testing.assert_allclose(slerp(a, a, 0.3), a, atol=1e-12)


def test_orientation_at_interpolates_and_holds():
    t = from_euler(np.array([0.0, 1.0]), np.array([[0, 0, 0], [1.0, 0, 0]]))
    assert quat_to_euler(t.orientation_at(0.25))[0] == pytest.approx(0.25)
    assert quat_to_euler(t.orientation_at(5.0))[0] == pytest.approx(1.0)
    assert t.orientation_at(np.array([0.0, 0.5])).shape == (2, 4)


# --------------------------------------------------------------------------- formats


def _w(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_tracking_csv_round_trip(tmp_path):
    e = np.array([[0.1, -0.2, 0.05], [3.0, 1.2, -2.0], [-3.0, 0.0, 0.0]])
    t = from_euler(np.array([0.0, 0.5, 1.25]), e)
    p = tmp_path / "t.csv"
    write_tracking_csv(t, p)
    assert p.read_text().splitlines()[0] == "time_s,yaw_rad,pitch_rad,roll_rad"
    back = read_tracking_csv(p)
    np.testing.assert_allclose(back.times_s, t.times_s)
    np.testing.assert_allclose(back.euler(), e, atol=1e-8)
    assert read_tracking(p).times_s[-1] == 1.25


CORB_E = "timestamp viewpoint yaw pitch roll\n"
CORB_Q = "timestamp viewpoint w x y z\n"


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("", None, "empty file"),
        (CORB_E, None, "no data rows"),
        ("time yaw\n0 1\n", 1, "neither"),
        (CORB_E + "0 0 1 2 3\n1 0 1 2 nan\n", 3, "must be finite"),
        (CORB_E + "0 0 1 2 3\n0.5 0 1 2\n", 3, "4 fields, expected 5"),
        (CORB_E + "0 0 1 2 3\n1 0 1 2 3\n0.5 0 1 2 3\n", 4, "does not increase"),
        (CORB_E + "0 0 x 2 3\n", 2, "not a number"),
        (CORB_Q + "0 0 1 0 0 0\n1 0 2 0 0 0\n", 3, "norm"),
    ],
)
def test_corbillon_bad_input(tmp_path, text, line, problem):
    p = _w(tmp_path, "u.txt", text)
    with pytest.raises(TraceError) as e:
        read_corbillon(p)
    assert str(p) in str(e.value) and problem in str(e.value)
    assert e.value.line == line


def test_tracking_csv_bad_header(tmp_path):
    p = _w(tmp_path, "t.csv", "t,yaw,pitch,roll\n0,0,0,0\n")
    with pytest.raises(TraceError, match="line 1: header must be"):
        read_tracking_csv(p)


def test_resample_rate_loop_and_cut():
    t = from_euler(np.array([0.0, 0.4, 1.0]), np.array([[0, 0, 0], [0.4, 0, 0], [1.0, 0, 0]]))
    r = resample(t, 10.0)
    np.testing.assert_allclose(r.times_s, np.arange(11) / 10)
    np.testing.assert_allclose(r.euler()[:, 0], np.arange(11) / 10, atol=1e-9)
    looped = resample(t, 10.0, duration_s=2.5)
    assert len(looped.times_s) == 25
    # one tick after the end (t = 1.1 s) it is back at the start
    assert looped.euler()[11, 0] == pytest.approx(0.0, abs=1e-9)
    assert looped.euler()[15, 0] == pytest.approx(0.4, abs=1e-9)
    cut = resample(t, 10.0, duration_s=2.5, loop=False)
    assert cut.times_s[-1] == pytest.approx(1.0)
    short = resample(t, 10.0, duration_s=0.5)
    assert len(short.times_s) == 5


def test_tracking_trace_rejects_nonmonotonic():
    with pytest.raises(TraceError, match="strictly increase"):
        TrackingTrace(np.array([0.0, 0.0]), np.array([[1, 0, 0, 0], [1, 0, 0, 0]]))


# --------------------------------------------------------------------------- synthetic


@pytest.mark.parametrize("name", sorted(SPEEDS_DEG_S))
def test_synthetic_speed_and_smoothness(name):
    speed = SPEEDS_DEG_S[name]
    t = synthetic_tracking(speed, 30.0, seed=3)
    assert len(t.times_s) == 1800
    e = t.euler()
    f = forward_vector(e[:, 0], e[:, 1])
    view_deg_s = np.degrees(np.arccos(np.clip(np.sum(f[1:] * f[:-1], axis=1), -1, 1))) * 60
    np.testing.assert_allclose(view_deg_s, speed, rtol=1e-3)
    # no teleports: the whole orientation never turns much faster than the view direction
    assert angular_speed_deg_s(t).max() < 2.0 * speed
    assert np.degrees(np.abs(e[:, 1])).max() < 65.0
    # the generator builds roll = 0; the quaternion → Euler round trip returns it within float64
    # rounding (~1e-17 rad), never exactly (numpy 2.4's kernels do not), so a tolerance far
    # below any real roll (a head's is degrees) and far above the rounding:
    np.testing.assert_allclose(e[:, 2], 0.0, atol=1e-12)
    # it really explores (not a straight great circle): heading changes
    assert np.ptp(np.unwrap(e[:, 0])) > 0


def test_synthetic_is_seeded():
    a = synthetic_tracking(40.0, 5.0, seed=1)
    b = synthetic_tracking(40.0, 5.0, seed=1)
    c = synthetic_tracking(40.0, 5.0, seed=2)
    np.testing.assert_array_equal(a.quats, b.quats)
    assert not np.allclose(a.quats, c.quats)


def test_synthetic_zero_speed_stands_still():
    t = synthetic_tracking(0.0, 1.0, seed=1)
    assert angular_speed_deg_s(t).max() == 0.0


# --------------------------------------------------------------------------- real traces

CORB_SET = "corbillon-multiviewpoint360-mmsys18"
# the dataset's statistics as its curated copy's notes give them: samples, duration
CORB_TABLE = {1: (16053, 272.1), 2: (17379, 296.9), 3: (18052, 306.7)}


@pytest.mark.skipif(not has_dataset(CORB_SET), reason=skip_reason(CORB_SET))
@pytest.mark.parametrize("user", sorted(CORB_TABLE))
def test_real_corbillon_matches_source_md(user):
    n, dur = CORB_TABLE[user]
    e = read_corbillon(dataset(CORB_SET) / f"user{user}_euler.txt")
    q = read_corbillon(dataset(CORB_SET) / f"user{user}_quaternion.txt")
    assert len(e.times_s) == len(q.times_s) == n
    assert e.duration_s == pytest.approx(dur, abs=0.05)
    assert np.median(np.diff(e.times_s)) * 1000 == pytest.approx(17.0, abs=0.5)
    # the two files describe the same orientations (our quaternion axis mapping is right)
    assert geodesic_angle(e.quats, q.quats).max() < 1e-6
    r = resample(e, 60.0)
    assert np.diff(r.times_s) == pytest.approx(1 / 60)
