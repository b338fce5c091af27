"""Scenario files: validation errors name the file and the key; the matrix expands."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest

from ground import data as ground_data
from ground.errors import ScenarioError
from priolab.scenario import deep_merge, expand, input_files, json_schema, load, run_seed
from tests.conftest import REPO


def _errors(write_scenario, data: dict) -> ScenarioError:
    path = write_scenario(data)
    with pytest.raises(ScenarioError) as ei:
        load(path)
    assert str(path) in str(ei.value)
    return ei.value


def test_every_shipped_scenario_is_valid() -> None:
    files = sorted((REPO / "scenarios").glob("*.yaml"))
    assert len(files) >= 10
    files += sorted((REPO / "scenarios" / "agreement").glob("*.yaml"))  # snakemake agreement
    files += sorted((REPO / "scenarios" / "maps").glob("*.yaml"))  # the maps, by folder
    absent = []
    for f in files:
        missing = [p for p in input_files(f) if not p.is_file()]
        if missing and all(ground_data.DATA_DIR in p.parents for p in missing):
            absent.append(f.name)  # a dataset's file, not fetched (tests/test_data.py)
            continue
        sc = load(f)
        assert expand(sc, f), f
    if absent:
        pytest.skip(f"not loaded, a dataset is absent: {absent}; see `priolab data list`")


def test_scenarios_naming_an_absent_dataset_say_how_to_fetch_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(ground_data, "DATA_DIR", tmp_path)  # empty data folder, no PRIOLAB_DATA
    monkeypatch.delenv(ground_data.ENV, raising=False)
    with pytest.raises(ScenarioError) as ei:
        load(REPO / "scenarios" / "ablation-4g-trace.yaml")
    problems = dict(ei.value.problems)
    msg = problems["settings.4G-trace.link.uplink.trace.file"]
    assert "`priolab data fetch sigcomm21-5g-variegated`" in msg


def test_unknown_key_is_named(write_scenario, standin_dict) -> None:
    standin_dict["link"]["uplink"]["delay_msec"] = 3
    err = _errors(write_scenario, standin_dict)
    assert ("link.uplink.delay_msec", "unknown key (not allowed here)") in err.problems


def test_negative_rate_is_named(write_scenario, standin_dict) -> None:
    standin_dict["link"]["uplink"]["rate_mbps"] = -1
    err = _errors(write_scenario, standin_dict)
    keys = [k for k, _ in err.problems]
    assert "link.uplink.rate_mbps" in keys
    assert "greater than 0" in dict(err.problems)["link.uplink.rate_mbps"]


def test_missing_trace_file_is_named(write_scenario, standin_dict) -> None:
    up = standin_dict["link"]["uplink"]
    del up["rate_mbps"]
    up["trace"] = {"file": "no-such-trace.txt", "format": "schedule"}
    err = _errors(write_scenario, standin_dict)
    (key, msg), *_ = err.problems
    assert key == "link.uplink.trace.file"
    assert "no-such-trace.txt" in msg and "not found" in msg


def test_loss_out_of_range_is_named(write_scenario, standin_dict) -> None:
    standin_dict["link"]["uplink"]["loss"] = {"model": "iid", "loss_pct": 101}
    err = _errors(write_scenario, standin_dict)
    key, msg = err.problems[0]
    assert key.startswith("link.uplink.loss") and key.endswith("loss_pct")
    assert "100" in msg


def test_setting_override_error_names_setting(write_scenario, standin_dict) -> None:
    standin_dict["settings"]["bad"] = {"link": {"downlink": {"delay_ms": -3}}}
    err = _errors(write_scenario, standin_dict)
    assert any(
        k.startswith("settings.bad.link") and k.endswith("delay_ms") for k, _ in err.problems
    )


def test_workload_param_error_names_variant(write_scenario, standin_dict) -> None:
    standin_dict["schemes"] = {"fast": {"workload": {"udp_rate_mbps": 0}}}
    err = _errors(write_scenario, standin_dict)
    assert any("schemes.fast" in k and k.endswith("udp_rate_mbps") for k, _ in err.problems)


def test_matrix_names_must_exist(write_scenario, standin_dict) -> None:
    standin_dict["matrix"] = {"setting": ["nope"]}
    err = _errors(write_scenario, standin_dict)
    assert err.problems[0][0] == "matrix.setting"
    assert "'nope'" in err.problems[0][1]


def test_only_settings_change_the_link(write_scenario, standin_dict) -> None:
    standin_dict["speeds"] = {"x": {"link": {"uplink": {"delay_ms": 1}}}}
    err = _errors(write_scenario, standin_dict)
    assert any("only settings may change the link" in m for _, m in err.problems)


def test_check_cli_fails_and_builds_nothing(write_scenario, standin_dict) -> None:
    standin_dict["link"]["uplink"]["rate_mbps"] = -1
    path = write_scenario(standin_dict)
    before = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    r = subprocess.run(
        [sys.executable, "-m", "priolab.cli", "check", str(path)], capture_output=True, text=True
    )
    after = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert r.returncode == 2
    assert f"{path}: link.uplink.rate_mbps" in r.stderr
    assert before == after


def test_matrix_expansion_and_run_dirs(write_scenario, standin_dict) -> None:
    d = copy.deepcopy(standin_dict)
    d["repetitions"] = 2
    d["settings"] = {"a": {}, "b": {"link": {"uplink": {"rate_mbps": 5}}}}
    d["schemes"] = {"s1": {}, "s2": {"workload": {"udp_rate_mbps": 2}}}
    d["speeds"] = {"slow": {}}
    path = write_scenario(d)
    runs = expand(load(path), path)
    assert len(runs) == 2 * 2 * 1 * 2
    dirs = {str(r.rel_dir) for r in runs}
    assert "standin/b/s2/slow/r2" in dirs
    b = next(r for r in runs if r.setting == "b" and r.scheme == "s2")
    assert b.link.uplink.rate_mbps == 5
    assert b.link.uplink.delay_ms == 10.5  # kept from the base link
    assert b.params.udp_rate_mbps == 2
    # schemes share a seed (common random numbers); repetitions do not
    same = [r.seed for r in runs if r.setting == "a" and r.rep == 1]
    assert len(set(same)) == 1
    assert run_seed(1, "a", "slow", 1) != run_seed(1, "a", "slow", 2)


def test_setting_may_swap_rate_for_trace(tmp_path, write_scenario, standin_dict) -> None:
    (tmp_path / "t.txt").write_text("0 10\n1 20\n")
    standin_dict["settings"]["tr"] = {
        "link": {"uplink": {"trace": {"file": "t.txt", "format": "schedule"}}}
    }
    path = write_scenario(standin_dict)
    runs = expand(load(path), path)
    tr = next(r for r in runs if r.setting == "tr")
    assert tr.link.uplink.rate_mbps is None and tr.link.uplink.trace is not None


def test_deep_merge_replaces_loss_whole() -> None:
    base = {"uplink": {"loss": {"model": "iid", "loss_pct": 1}, "delay_ms": 1}}
    out = deep_merge(base, {"uplink": {"loss": {"model": "gilbert_elliott", "p_pct": 1}}})
    assert out["uplink"]["loss"] == {"model": "gilbert_elliott", "p_pct": 1}
    assert out["uplink"]["delay_ms"] == 1


def test_deep_merge_policer_replaces_the_rate_and_the_queue() -> None:
    base = {"uplink": {"rate_mbps": 70, "delay_ms": 10.5, "queue": {"bdp_factor": 1.0}}}
    out = deep_merge(base, {"uplink": {"policer": {"rate_mbps": 70, "burst_bytes": 25000}}})
    assert out["uplink"] == {"delay_ms": 10.5, "policer": {"rate_mbps": 70, "burst_bytes": 25000}}
    back = deep_merge(out, {"uplink": {"rate_mbps": 70}})
    assert back["uplink"] == {"delay_ms": 10.5, "rate_mbps": 70}


def test_json_schema_validates_shipped_scenarios() -> None:
    import jsonschema
    import yaml

    schema = json_schema()
    for f in (
        sorted((REPO / "scenarios").glob("*.yaml"))
        + sorted((REPO / "scenarios" / "agreement").glob("*.yaml"))
        + sorted((REPO / "scenarios" / "maps").glob("*.yaml"))
    ):
        jsonschema.validate(yaml.safe_load(f.read_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "x", "bogus": 1}, schema)


def test_committed_schema_is_current() -> None:
    import json

    committed = json.loads((REPO / "scenarios" / "scenario.schema.json").read_text())
    assert committed == json_schema(), "run: priolab schema --out scenarios/scenario.schema.json"


def test_qlog_needs_a_workload_that_opens_quic_connections(write_scenario, standin_dict) -> None:
    """`qlog: true` is refused, naming `qlog`, for a workload with no QUIC endpoint."""
    standin_dict["qlog"] = True
    err = _errors(write_scenario, standin_dict)
    (msg,) = [m for k, m in err.problems if k == "qlog"]
    assert "'iperf-ping' opens no QUIC connection" in msg and "rise" in msg, msg


def test_qlog_names_the_variant_whose_parameters_open_no_quic_connection(
    write_scenario, standin_dict
) -> None:
    """roq over plain UDP (here one scheme of two) has no QUIC connection to trace: the error
    names that variant's key; roq over QUIC alone is fine."""
    data = standin_dict
    data["qlog"] = True
    data["workload"] = {"kind": "roq", "params": {}}
    data["schemes"] = {"quic": {"workload": {"transport": "quic"}},
                       "udp": {"workload": {"transport": "udp"}}}  # fmt: skip
    err = _errors(write_scenario, data)
    keys = [k for k, m in err.problems if "opens no QUIC connection" in m]
    assert keys and all("schemes.udp" in k and k.endswith("workload.transport") for k in keys)
    assert not any("schemes.quic" in k for k, _ in err.problems), err.problems
    del data["schemes"]["udp"]
    path = write_scenario(data, "ok.yaml")
    runs = expand(load(path), path)
    assert runs and all(r.qlog for r in runs)
    assert runs[0].to_json()["qlog"] is True
    data.pop("qlog")
    path = write_scenario(data, "plain.yaml")
    assert "qlog" not in expand(load(path), path)[0].to_json()  # without it: the JSON it had
