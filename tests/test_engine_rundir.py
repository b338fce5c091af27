"""engine.rundir: the one owner of the run-directory layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from ground import rundir


def test_path_pattern_and_coords_agree(tmp_path: Path) -> None:
    d = rundir.run_dir(tmp_path, "sc", "FB-4K", "pri", "moderate", 3)
    assert d == tmp_path / "sc" / "FB-4K" / "pri" / "moderate" / "r3"
    assert rundir.coords(d) == rundir.RunCoords("sc", "FB-4K", "pri", "moderate", 3)
    pat = rundir.pattern("results", rundir.METADATA)
    assert pat == "results/{scenario}/{setting}/{scheme}/{speed}/r{rep}/metadata.json"
    filled = pat.format(scenario="sc", setting="FB-4K", scheme="pri", speed="moderate", rep=3)
    assert Path(filled) == rundir.run_dir("results", "sc", "FB-4K", "pri", "moderate", 3) / (
        rundir.METADATA
    )
    with pytest.raises(ValueError, match="not a run folder"):
        rundir.coords(tmp_path / "sc" / "FB-4K" / "pri" / "moderate" / "x3")


def test_partial_begin_promote_and_find(tmp_path: Path) -> None:
    out = rundir.run_dir(tmp_path, "sc", "a", "nopri", "slow", 1)
    work = rundir.begin(out)
    assert work.name == "r1.partial" and (work / rundir.LOGS).is_dir()
    # an interrupted run is not a finished run
    assert rundir.find_runs(tmp_path / "sc") == []
    (work / rundir.METADATA).write_text("{}")
    assert rundir.promote(work) == out and not work.exists()
    # a rerun replaces the older run only once complete
    work = rundir.begin(out)
    assert (out / rundir.METADATA).is_file()
    rundir.promote(work)
    assert not (out / rundir.METADATA).exists()
    other = rundir.run_dir(tmp_path, "sc", "a", "pri", "slow", 12)
    rundir.promote(rundir.begin(other))
    assert rundir.find_runs(tmp_path / "sc") == [out, other]
    with pytest.raises(ValueError, match="partial"):
        rundir.final(out)


def test_log_files_live_under_logs() -> None:
    out, err = rundir.log_files("rise-guest")
    assert out == f"{rundir.LOGS}/rise-guest.stdout" and err == f"{rundir.LOGS}/rise-guest.stderr"


def test_the_ansible_roles_spell_the_names_rundir_gives() -> None:
    """YAML cannot ask rundir: the two run-folder names the testbed's roles write are checked
    against it here (a node's archive, tc's counters before the reset)."""
    roles = Path(__file__).resolve().parent.parent / "ansible" / "roles"
    one = (roles / "run" / "tasks" / "one.yml").read_text()
    reset = (roles / "link" / "tasks" / "reset.yml").read_text()
    assert rundir.node_archive("{{ priolab_role }}") in one
    assert rundir.tc_stats("{{ priolab_role }}") in reset


def test_qlog_traces_are_found_in_each_endpoints_qlog_folder(tmp_path: Path) -> None:
    for rel in ("host/qlog/rise-host-1.sqlog", "guest/qlog/rise-guest-1.sqlog",
                "guest/qlog/notes.txt", "guest/rise-guest-2.sqlog"):  # fmt: skip
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert rundir.qlog_dir(tmp_path / "host") == tmp_path / "host" / rundir.QLOG_DIR
    assert [str(p.relative_to(tmp_path)) for p in rundir.qlog_files(tmp_path)] == [
        "guest/qlog/rise-guest-1.sqlog", "host/qlog/rise-host-1.sqlog"]  # fmt: skip
