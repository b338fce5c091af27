"""The rise predictor map (priolab.workloads.rise.predictor_map): cells and ratios from
rise-sim grid lines, and the figure."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from priolab.workloads.rise.predictor_map import cells, load_grid, main


def _line(
    loss: float, queue: float, scheme: str, seed: int, mtp: float | None, stall: float
) -> str:
    guest = {"mtp_median_ms": mtp, "stall_s": stall, "displayed_fps": 30.0 if mtp else 0.0}
    return json.dumps(
        {
            "up_loss_pct": loss,
            "up_queue_bdp": queue,
            "scheme": scheme,
            "seed": seed,
            "metrics": {"guest": guest},
        }
    )


def _grid(tmp_path: Path) -> Path:
    lines = []
    for seed in (1, 2):
        lines += [
            _line(0.0, 1.0, "pri", seed, 28.0, 0.0),
            _line(0.0, 1.0, "nopri-tail", seed, 28.0, 0.0),
            _line(0.0, 1.0, "nopri-head", seed, 28.0, 0.0),
            _line(0.05, 1.0, "pri", seed, 30.0, 0.0),
            _line(0.05, 1.0, "nopri-tail", seed, 300.0 if seed == 1 else 150.0, 2.0),
            _line(0.05, 1.0, "nopri-head", seed, 60.0, 0.0),
            _line(0.5, 1.0, "pri", seed, None, 27.0),
            _line(0.5, 1.0, "nopri-tail", seed, 500.0, 9.0),
            _line(0.5, 1.0, "nopri-head", seed, 250.0, 27.0),
        ]
    p = tmp_path / "grid.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_ratios_are_means_over_seeds_and_zero_stalls_are_named(tmp_path: Path) -> None:
    c = cells(load_grid(_grid(tmp_path))).set_index(["loss_pct", "queue_bdp"])
    assert c.loc[(0.0, 1.0), "mtp_ratio_nopri-tail"] == pytest.approx(1.0)
    assert c.loc[(0.0, 1.0), "stall_ratio_nopri-tail"] == 1.0  # neither stalls
    assert c.loc[(0.05, 1.0), "mtp_ratio_nopri-tail"] == pytest.approx(225.0 / 30.0)
    assert c.loc[(0.05, 1.0), "mtp_ratio_nopri-head"] == pytest.approx(2.0)
    assert math.isinf(c.loc[(0.05, 1.0), "stall_ratio_nopri-tail"])  # only the baseline stalls
    # w/ Pri displays nothing: no median to divide by, and its stall shows the collapse
    assert math.isnan(c.loc[(0.5, 1.0), "mtp_ratio_nopri-tail"])
    assert c.loc[(0.5, 1.0), "stall_ratio_nopri-tail"] == pytest.approx(9.0 / 27.0)
    assert c.loc[(0.5, 1.0), "displayed_fps_pri"] == 0.0


def test_main_writes_figure_and_cells(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main([str(_grid(tmp_path)), str(out)]) == 0
    for name in (
        "predictor_map.png",
        "predictor_map.pdf",
        "predictor_map.txt",
        "predictor_map.csv",
    ):
        assert (out / name).stat().st_size > 0


def test_a_line_that_is_not_a_grid_line_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text('{"scheme": "pri"}\n')
    with pytest.raises(SystemExit, match="bad.jsonl:1"):
        load_grid(p)
