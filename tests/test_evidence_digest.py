"""The evidence store's code digest (priolab/evidence/digest.py): the Rust crates a workload's
runs link, read from the Cargo files; the Python its runs import, read by `ast`; the inputs,
normalised. Each part changes when a file in its set changes and not when one outside does:
checked on a copy of the checkout's sources in tmp."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from priolab.evidence import crates, digest, pyimports
from tests.conftest import REPO, copy_rust_sources

KINDS = ("rise", "dtp", "qpr", "moq", "roq")


@pytest.fixture
def rust_copy(tmp_path: Path) -> Path:
    """The workspace's manifests and crate sources, nothing else."""
    copy_rust_sources(tmp_path)
    return tmp_path


@pytest.fixture
def python_copy(tmp_path: Path) -> Path:
    """The checkout's Python packages."""
    for pkg in pyimports.TOP_PACKAGES:
        shutil.copytree(REPO / pkg, tmp_path / pkg,
                        ignore=shutil.ignore_patterns("__pycache__", "linkem"))  # fmt: skip
    return tmp_path


def _changes_only(
    part: Callable[[Path, str, str], str], repo: Path, rel: str, kind: str
) -> dict[str, str]:
    """Change the file `rel` of the copy `repo`: `part`'s digest changes for `kind` alone;
    return every kind's digest after the change."""
    before = {k: part(repo, k, "sim") for k in KINDS}
    f = repo / rel
    f.write_text(f.read_text() + ("\n// changed\n" if f.suffix == ".rs" else "\n# changed\n"))
    digest.forget()  # digests are cached per process
    after = {k: part(repo, k, "sim") for k in KINDS}
    assert after[kind] != before[kind]
    assert all(after[k] == before[k] for k in KINDS if k != kind)
    return after


def test_the_crate_graph_comes_from_the_manifests() -> None:
    m = crates.members(REPO)
    assert crates.package_of_binary(REPO, "rise") == "rise"
    assert crates.package_of_binary(REPO, "priolab-sim") == "priolab-sim"
    assert crates.package_of_binary(REPO, "iperf3") is None
    assert "priochan" in m["rise-core"].path_deps
    c = crates.closure(REPO, ["rise"])
    assert {"rise", "rise-core", "priochan", "quicsetup"} <= set(c.workspace)
    assert "moq" not in c.workspace and "proctest" not in c.workspace  # proctest: a dev-dep
    assert "quinn" in {x.name for x in c.external}
    sim = crates.closure(REPO, ["linkem"], shallow=("priolab-sim",))
    assert set(sim.workspace) == {"linkem", "priolab-sim"}  # not every endpoint it links


def test_each_workload_digests_its_own_endpoint(rust_copy: Path) -> None:
    files = {k: {f.relative_to(REPO).as_posix() for f in digest.rust_files(REPO, k, "sim")}
             for k in KINDS}  # fmt: skip
    assert any(f.startswith("endpoints/rise/src/") for f in files["rise"])
    assert not any(f.startswith("endpoints/rise/") for f in files["dtp"])
    for k in KINDS:  # the emulator and the sim's network count for every workload
        assert any(f.startswith("netem/linkem/src/") for f in files[k])
        assert any(f.startswith("endpoints/simnet/src/") for f in files[k])
    after = _changes_only(digest.rust_digest, rust_copy, "endpoints/moq/src/main.rs", "moq")
    t = rust_copy / "endpoints" / "moq" / "tests"
    t.mkdir(exist_ok=True)
    (t / "extra.rs").write_text("// a test: not in the binary\n")
    digest.forget()
    assert digest.rust_digest(rust_copy, "moq", "sim") == after["moq"]
    lk = rust_copy / "netem" / "linkem" / "src" / "lib.rs"
    lk.write_text(lk.read_text() + "\n// changed\n")
    digest.forget()
    assert all(digest.rust_digest(rust_copy, k, "sim") != after[k] for k in KINDS)


def test_the_python_set_follows_imports_and_leaves_the_figures_out() -> None:
    rel = {f.relative_to(REPO).as_posix() for f in digest.python_files(REPO, "rise", "sim")}
    for needed in ("priolab/scenario.py", "priolab/engine/plan.py", "priolab/engine/sim_spec.py",
                   "analysis/metrics.py", "priolab/workloads/rise/metrics.py",
                   "priolab/workloads/rise/figure_data.py", "traces/tracking.py"):  # fmt: skip
        assert needed in rel, needed
    for outside in ("priolab/workloads/rise/figures.py", "priolab/workloads/dtp/analysis.py",
                    "book/results.py", "analysis/figures.py"):  # fmt: skip
        assert outside not in rel, outside


def test_python_digest_changes_with_a_file_in_its_set_only(python_copy: Path) -> None:
    inside = "priolab/workloads/rise/metrics.py"
    after = _changes_only(digest.python_digest, python_copy, inside, "rise")
    for outside in ("priolab/workloads/rise/figures.py", "book/results.py"):
        f = python_copy / outside
        f.write_text(f.read_text() + "\n# changed\n")
    digest.forget()
    assert {k: digest.python_digest(python_copy, k, "sim") for k in KINDS} == after
    shared = python_copy / "priolab" / "scenario.py"  # resolves every run's inputs
    shared.write_text(shared.read_text() + "\n# changed\n")
    digest.forget()
    assert all(digest.python_digest(python_copy, k, "sim") != after[k] for k in KINDS)


def test_inputs_are_normalised_and_hash_the_files_read(tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    trace.write_text("0 10\n1 20\n")
    run = {"scenario": "s", "seed": 3, "base_dir": str(REPO / "scenarios")}
    elsewhere = dict(run, base_dir="/some/other/checkout/scenarios")
    a = digest.inputs_digest(run, [trace], REPO)
    assert digest.inputs_digest(elsewhere, [trace], REPO) == a  # another checkout, same run
    assert digest.checkout_dir("/some/other/checkout/scenarios/agreement", REPO) == (
        "scenarios/agreement"
    )
    assert digest.checkout_dir("/tmp/x/y", REPO).startswith(digest.OUTSIDE)
    assert digest.inputs_digest(dict(run, seed=4), [trace], REPO) != a
    trace.write_text("0 10\n1 21\n")
    assert digest.inputs_digest(run, [trace], REPO) != a
    assert digest.inputs_digest(run, [tmp_path / "gone.txt"], REPO) != a


def test_the_code_digest_hashes_its_three_parts() -> None:
    run = {"scenario": "s", "seed": 1, "base_dir": str(REPO / "scenarios")}
    d = digest.digests(run, [], "dtp", "sim", REPO)
    assert d.rust == digest.rust_digest(REPO, "dtp", "sim")
    assert d.python == digest.python_digest(REPO, "dtp", "sim")
    assert d.code != digest.digests(run, [], "dtp", "mininet", REPO).code
    assert len({d.code, d.inputs, d.rust, d.python}) == 4


def test_a_recorded_run_reads_the_files_its_point_reads() -> None:
    """The files of a record come from its run block as metadata.json dumps it (a trace link's
    dump does not validate again); they are the files the scenario's point reads."""
    from priolab.scenario import expand, load, run_input_files, trace_names

    f = REPO / "scenarios" / "dtp-quick.yaml"
    spec = next(s for s in expand(load(f), f) if s.setting == "12-4-12MBps")
    want = run_input_files(trace_names(spec.link), spec.params, spec.base_dir)
    assert [p.name for p in want] == ["steps-dtp-12-4-12MBps-3s-10s.txt"]
    dumped = json.loads(json.dumps(spec.to_json()))  # as metadata.json holds it
    assert digest.run_files(dumped, REPO) == want
    assert digest.run_files(digest.normalised_run(dumped, REPO), REPO) == want


def test_a_dataset_file_is_named_by_its_reference_wherever_its_copy_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scenario resolves `data:<dataset>/<file>` to this machine's copy (PRIOLAB_DATA, then
    data/); the record names the file by its reference again, so a point made with the data
    in one folder is the same point, with the same inputs digest, with the data in another."""
    from ground import data
    from priolab.scenario import expand, load, run_input_files, trace_names

    ds = data.read_manifest()["sigcomm21-5g-variegated"]
    f = REPO / "scenarios" / "qpr-quick.yaml"  # its downlinks name the dataset's traces
    blocks, inputs = [], []
    for copy in ("one", "two"):
        d = tmp_path / copy / ds.dir
        d.mkdir(parents=True)
        for entry in ds.files:
            (d / entry.name).write_text("0 10\n1 20\n")
        monkeypatch.setenv("PRIOLAB_DATA", str(tmp_path / copy))
        spec = next(s for s in expand(load(f), f) if s.setting == "driving-loss0")
        dumped = json.loads(json.dumps(spec.to_json()))  # as metadata.json holds it
        name = "5g_trace_1_driving.txt"
        assert dumped["link"]["downlink"]["trace"]["file"] == str(d / name)
        block = digest.normalised_run(dumped, REPO)
        assert block["link"]["downlink"]["trace"]["file"] == f"data:{ds.name}/{name}"
        files = digest.run_files(block, REPO)
        assert d / name in files
        assert files == run_input_files(trace_names(spec.link), spec.params, spec.base_dir)
        blocks.append(block)
        inputs.append(digest.inputs_digest(dumped, files, REPO))
    assert blocks[0] == blocks[1] and inputs[0] == inputs[1]
