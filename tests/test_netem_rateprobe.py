"""What limited the calibrator's loss-free ceiling (netem/rateprobe.py), without a network."""

from __future__ import annotations

from netem.rateprobe import limited_by


def step(target: float, offered: float, achieved: float, loss: float) -> dict:
    return {"offered_target_mbps": target, "offered_mbps": offered, "achieved_mbps": achieved,
            "loss_pct": loss}  # fmt: skip


def test_emulator_is_the_limit_when_the_direct_path_goes_clearly_higher() -> None:
    emu = [step(500, 500, 500, 0.0), step(1000, 1000, 900, 10.0)]
    direct = [step(500, 500, 500, 0.0), step(1000, 1000, 1000, 0.0)]
    assert limited_by(500, 1000, emu, direct) == "emulator"


def test_sender_short_of_its_target_is_named() -> None:
    emu = [step(1000, 610, 600, 0.0)]
    direct = [step(1000, 620, 615, 0.0)]
    v = limited_by(600, 615, emu, direct)
    assert v.startswith("probe:") and "620" in v


def test_both_at_the_top_of_the_ladder() -> None:
    steps = [step(2000, 2000, 2000, 0.0)]
    assert limited_by(2000, 2000, steps, steps).startswith("probe ladder")


def test_path_loses_with_full_offer() -> None:
    emu = [step(700, 700, 700, 0.0), step(1000, 1000, 990, 1.0)]
    direct = [step(700, 700, 700, 0.0), step(1000, 1000, 990, 1.0)]
    assert limited_by(700, 700, emu, direct).startswith("path:")
