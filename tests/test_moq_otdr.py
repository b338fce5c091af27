"""OTDR on a hand-made receive log with a known answer ([MoQ Fig. 5] rule)."""

import numpy as np
import pytest

from priolab.workloads.moq.otdr import display_delay_ms, otdr, ready_ms

# decode order I P B B P B B (display I B B P B B P), capture = presentation time
TYPES = ["I", "P", "B", "B", "P", "B", "B"]
CAPTURE = np.array([0, 120, 40, 80, 240, 160, 200], float)
# arrivals (ms): the I arrives late (300), B3 never arrives, B6 arrives at 700
ARRIVAL = np.array([300, 200, 100, np.nan, 260, 250, 700], float)


def test_ready_is_the_latest_arrival_among_what_a_frame_needs():
    refs = [(), (0,), (0, 1), (0, 1), (1,), (1, 4), (1, 4)]
    r = ready_ms(ARRIVAL, refs)
    np.testing.assert_array_equal(r, [300, 300, 300, np.inf, 300, 300, 700])


def test_display_delay_and_otdr_known_answer():
    d = display_delay_ms(TYPES, CAPTURE, ARRIVAL)
    np.testing.assert_array_equal(d, [300, 180, 260, np.inf, 60, 140, 500])
    budgets = np.array([0, 59, 60, 100, 200, 259, 300, 499, 500, 3000])
    want = np.array([0, 0, 1, 1, 3, 3, 5, 5, 6, 6]) / 7
    np.testing.assert_allclose(otdr(d, budgets), want)
    # all I frames on time from a budget of 300 ms on, not before
    i = np.array([t == "I" for t in TYPES])
    assert otdr(d[i], np.array([299, 300])).tolist() == [0.0, 1.0]


def test_a_frame_is_late_if_a_reference_is_late_even_when_it_arrived_itself():
    # the B frame arrived at once, but its future reference P arrived only at 1000 ms
    d = display_delay_ms(["I", "P", "B"], np.array([0, 80, 40.0]), np.array([10, 1000, 45.0]))
    assert d[2] == pytest.approx(960)
    assert otdr(d, np.array([100]))[0] == pytest.approx(1 / 3)


def test_bad_inputs():
    assert otdr(np.array([]), np.array([1.0])).tolist() == [0.0]
    with pytest.raises(ValueError, match="2 arrival times for 1 frames"):
        ready_ms(np.array([1.0, 2.0]), [()])
    with pytest.raises(ValueError, match="frame 0: reference 0"):
        ready_ms(np.array([1.0]), [(0,)])
