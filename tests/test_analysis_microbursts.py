"""analysis.microbursts: 1 ms throughput windows from a hand-made linkem packet log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis.logs import AnalysisError
from analysis.microbursts import main
from analysis.packet_log import default_start_s, read_packet_log, throughput_windows


def rec(d: str, t_in: float, t_out: float, b: int, fate: str = "sent") -> str:
    return json.dumps({"dir": d, "t_in_us": t_in, "t_out_us": t_out, "bytes": b, "fate": fate})


LOG = [
    rec("a_to_b", 1000.0, 1000.5, 1500),  # window 1 ms: 1500 + 1000 B sent
    rec("a_to_b", 1100.0, 1200.0, 1000),
    rec("a_to_b", 1500.0, 1500.0, 1000, "drop_police"),  # dropped at 1.5 ms
    rec("a_to_b", 2999.0, 3000.0, 500),  # arrives in window 2, leaves in window 3
    rec("b_to_a", 500.0, 10_500.0, 1250),  # 10 ms of delay: offered in 0, sent in 10
    '{"dir":"b_to_a","t_in_us":7.0,"t_out_us":7.0,"bytes":0,"fate":"tx_error"}',
]


def write(tmp_path: Path, lines: list[str], tail: str = "\n") -> Path:
    p = tmp_path / "linkem-packets.log"
    p.write_text("\n".join(lines) + tail)
    return p


def test_windows_count_bytes_by_exit_and_arrival_time(tmp_path: Path) -> None:
    log = read_packet_log(write(tmp_path, LOG))
    assert len(log) == 5  # the tx_error line carries no packet
    w = throughput_windows(log, start_s=0.0, span_s=0.012, window_ms=1.0)
    assert len(w) == 2 * 12
    up = w[w["dir"] == "a_to_b"].set_index("t_s")
    down = w[w["dir"] == "b_to_a"].set_index("t_s")
    mbps = 8 / 1000  # one byte per 1 ms window, in Mbit/s
    assert up.loc[0.001, "sent_mbps"] == pytest.approx(2500 * mbps)  # 20 Mbit/s
    assert up.loc[0.001, "offered_mbps"] == pytest.approx(3500 * mbps)
    assert up.loc[0.001, "dropped_mbps"] == pytest.approx(1000 * mbps)
    assert up.loc[0.002, "offered_mbps"] == pytest.approx(500 * mbps)
    assert up.loc[0.002, "sent_mbps"] == 0
    assert up.loc[0.003, "sent_mbps"] == pytest.approx(500 * mbps)
    assert down.loc[0.0, "offered_mbps"] == pytest.approx(1250 * mbps)
    assert down.loc[0.010, "sent_mbps"] == pytest.approx(1250 * mbps)
    assert down["sent_mbps"].sum() == pytest.approx(1250 * mbps)
    # Bytes outside the span do not count: a window starting at 2 ms misses the first burst.
    late = throughput_windows(log, start_s=0.002, span_s=0.002, window_ms=1.0)
    assert late[late["dir"] == "a_to_b"]["sent_mbps"].sum() == pytest.approx(500 * mbps)


def test_bad_and_truncated_lines(tmp_path: Path) -> None:
    cut = read_packet_log(write(tmp_path, LOG + ['{"dir":"a_to_b","t_in'], tail=""))
    assert len(cut) == 5  # a last line without its newline is dropped
    with pytest.raises(AnalysisError, match=r"linkem-packets.log: line 2"):
        read_packet_log(write(tmp_path, [LOG[0], '{"dir": "a_to_b"}']))
    with pytest.raises(AnalysisError, match=r"line 1: dir must be one of"):
        read_packet_log(write(tmp_path, [rec("sideways", 1, 1, 1)]))


def test_default_start_is_the_middle_of_the_log(tmp_path: Path) -> None:
    log = read_packet_log(write(tmp_path, [rec("a_to_b", 0, 0, 1), rec("a_to_b", 4e6, 4e6, 1)]))
    assert default_start_s(log, 0.5) == 1.75


def test_cli_writes_the_figure_and_the_table(tmp_path: Path, capsys) -> None:
    run = tmp_path / "r1"
    run.mkdir()
    write(run, LOG)
    (run / "linkem.json").write_text(
        json.dumps({"a_to_b": {"rate": {"kind": "policer", "rate_bps": 20e6}}})
    )
    assert main([str(run), "--start-s", "0", "--span-s", "0.05"]) == 0
    figs = run / "figures"
    for ext in ("png", "pdf", "txt", "csv"):
        assert (figs / f"microbursts.{ext}").is_file()
    assert "1 ms windows over 0.05 s" in (figs / "microbursts.txt").read_text()
    empty = tmp_path / "r2"
    empty.mkdir()
    assert main([str(empty)]) == 1
    assert "packet_log: true" in capsys.readouterr().err


def test_figures_hook_takes_the_first_run_that_logged_packets(tmp_path: Path) -> None:
    # the scenario logs packets in its second setting only (quick.yaml's window-limited path)
    import pandas as pd

    from analysis import figure_data
    from analysis.microbursts import fig_microbursts
    from analysis.packet_log import windows_data

    plain, logged = tmp_path / "A" / "r1", tmp_path / "B" / "r1"
    plain.mkdir(parents=True)
    logged.mkdir(parents=True)
    write(logged, LOG)
    (logged / "linkem.json").write_text(json.dumps({}))
    # the hook draws from each run's figure data (analysis.metrics writes it from the log)
    figure_data.write(logged, {"microbursts": windows_data(logged)})
    figure_data.write(plain, {})
    runs = pd.DataFrame(
        [
            {"scheme": "pri", "setting_label": s, "rep": 1, "path": str(d)}
            for s, d in (("A", plain), ("B", logged))
        ]  # fmt: skip
    )
    assert fig_microbursts(runs, tmp_path / "figs") == []
    assert (tmp_path / "figs" / "microbursts_pri.png").is_file()
    runs["path"] = str(plain)
    notes = fig_microbursts(runs, tmp_path / "figs2")
    assert notes and "no run has linkem-packets.log" in notes[0]
