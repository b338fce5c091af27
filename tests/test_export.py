"""`priolab export` (analysis/export.py): one tidy table of every run of a scenario, from
hand-made run folders: matrix point, site, validity and reasons, provenance, metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from analysis import export
from ground import rundir
from priolab import cli

LOCK = "b" * 64


def _run(
    results: Path,
    setting: str,
    scheme: str,
    rep: int,
    metrics: dict[str, float | None] | None,
    site: str = "sim",
    invalid: list[dict] | None = None,
) -> Path:
    """A finished run folder of scenario `toy`: metadata.json as the engine writes it (the
    keys the export reads), metrics.json for a valid run."""
    d = rundir.run_dir(results, "toy", setting, scheme, "none", rep)
    d.mkdir(parents=True)
    meta = {
        "run": {"scenario": "toy", "setting": setting, "scheme": scheme, "speed": "none",
                "rep": rep, "seed": 1000 + rep, "workload": {"kind": "dtp"}},
        "site": {"kind": site}, "backend": {"requested": "auto", "used": "userspace"},
        "git": {"commit": "c" * 40, "dirty": rep == 2},
        "python_packages": {"lock": "requirements.lock", "lock_sha256": LOCK},
        "valid": invalid is None, "invalid": invalid or [],
    }  # fmt: skip
    (d / rundir.METADATA).write_text(json.dumps(meta))
    if metrics is not None:
        m = {"run": meta["run"], "valid": True, "invalid": [], "metrics": metrics}
        (d / rundir.METRICS).write_text(json.dumps(m))
    return d


@pytest.fixture
def results(tmp_path: Path) -> Path:
    res = tmp_path / "results"
    _run(res, "3MBps", "dtp", 1, {"deadline_ratio": 0.8, "goodput_mbps": 2.5})
    _run(res, "3MBps", "dtp", 2, {"deadline_ratio": 0.7, "goodput_mbps": None})
    _run(res, "3MBps", "quic", 1, {"deadline_ratio": 0.2})
    cpu = {"code": "cpu_saturated", "detail": "guest CPU 97 %", "node": "guest"}
    _run(res, "3MBps", "quic", 2, None, site="mininet", invalid=[cpu])
    return res


def test_one_row_per_run_with_point_site_validity_provenance_and_metrics(results) -> None:
    t = export.tidy_table(results, "toy")
    assert list(t.columns) == [*export.FIXED, "deadline_ratio", "goodput_mbps"]
    assert len(t) == 4
    rows = {(r.scheme, r.rep): r for r in t.itertuples()}
    ok = rows[("dtp", 1)]
    assert (ok.scenario, ok.setting, ok.speed, ok.seed, ok.site) == ("toy", "3MBps", "none",
                                                                     1001, "sim")  # fmt: skip
    assert ok.backend == "userspace" and ok.valid and ok.reasons == "" and ok.reason_codes == ""
    assert (ok.commit, ok.dirty, ok.lock_sha256) == ("c" * 40, False, LOCK)
    assert ok.path == "toy/3MBps/dtp/none/r1"
    assert (ok.deadline_ratio, ok.goodput_mbps) == (0.8, 2.5)
    assert rows[("dtp", 2)].dirty
    assert math.isnan(rows[("dtp", 2)].goodput_mbps)  # null in metrics.json: missing
    assert math.isnan(rows[("quic", 1)].goodput_mbps)  # not measured by this run
    bad = rows[("quic", 2)]
    assert not bad.valid and bad.site == "mininet"
    assert bad.reason_codes == "cpu_saturated" and "guest CPU 97 %" in bad.reasons
    assert math.isnan(bad.deadline_ratio)  # an invalid run has no metrics, as in the aggregates


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_writes_the_table_and_reads_back_the_same(results, tmp_path, fmt, capsys) -> None:
    out = tmp_path / f"out.{fmt}"
    argv = ["export", "toy", "--format", fmt, "--results", str(results), "--out", str(out)]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.startswith(f"{out}: 4 runs (3 valid), 2 metrics")
    back = pd.read_parquet(out) if fmt == "parquet" else pd.read_csv(out)
    want = export.tidy_table(results, "toy")
    assert list(back.columns) == list(want.columns)
    assert back["deadline_ratio"].tolist() == pytest.approx(want["deadline_ratio"].tolist(),
                                                            nan_ok=True)  # fmt: skip
    assert back["valid"].tolist() == want["valid"].tolist()
    if fmt == "parquet":  # types survive: a notebook filters on them as they are
        assert back["valid"].dtype == bool and back["rep"].dtype == "int64"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file


def test_a_scenario_file_names_its_results_folder(results, tmp_path) -> None:
    sc = tmp_path / "toy.yaml"
    sc.write_text("name: toy\n")
    assert cli.main(["export", str(sc), "--format", "csv", "--results", str(results)]) == 0
    assert (results / "toy" / "runs-tidy.csv").is_file()


def test_a_metric_named_like_a_column_is_refused(tmp_path) -> None:
    run = _run(tmp_path, "s", "a", 1, {"site": 1.0, "goodput_mbps": 2.0})
    with pytest.raises(export.ExportError) as ei:
        export.tidy_table(tmp_path, "toy")
    assert ei.value.file == str(run / rundir.METRICS)
    assert ei.value.problems == [("metrics", "named like a fixed column: ['site']")]


def test_no_runs_is_a_clear_error(tmp_path, capsys) -> None:
    argv = ["export", "nothing", "--format", "csv", "--results", str(tmp_path)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'nothing'}" in err and "no run folders" in err
    assert not (tmp_path / "nothing").exists()
