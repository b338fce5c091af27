"""Datasets by manifest (data/manifest.toml, ground/data.py, priolab/datasets.py): the manifest
itself, how a `data:` reference resolves (PRIOLAB_DATA, then data/), the errors a scenario
gets when a reference is wrong or its dataset is absent, and `priolab data fetch` against a
local HTTP server on loopback (a good copy, a bad checksum, a missing file, a wrong size)."""

from __future__ import annotations

import hashlib
import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ground import data
from ground.errors import ScenarioError
from priolab import cli, datasets
from priolab.scenario import expand, input_files, load
from tests.conftest import REPO

COMMIT = re.compile(r"/[0-9a-f]{40}/")


# --------------------------------------------------------------------------- the manifest


def test_the_manifest_names_licence_citation_url_and_sha256_of_every_file() -> None:
    sets = data.read_manifest()
    assert set(sets) == {
        "sigcomm21-5g-variegated", "mahimahi-cellular", "corbillon-multiviewpoint360-mmsys18",
    }  # fmt: skip
    for ds in sets.values():
        assert ds.licence and ds.citation and ds.source.startswith("https://")
        assert ds.dir.split("/")[0] in ("traces", "tracking")
        for f in ds.files:
            # pinned to one upstream commit, so the bytes behind the URL cannot change
            assert COMMIT.search(f.url), f.url
            assert re.fullmatch(r"[0-9a-f]{64}", f.sha256) and f.size_bytes > 0


def _scenario_files() -> list[Path]:
    return sorted(
        p for d in ("", "agreement", "maps") for p in (REPO / "scenarios" / d).glob("*.yaml")
    )


def _refs(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from _refs(v)
    elif data.is_ref(value):
        assert isinstance(value, str)
        yield value


def test_every_data_reference_of_the_scenarios_is_in_the_manifest() -> None:
    """Resolution needs no copy of the data: every reference names a listed file."""
    sets = data.read_manifest()
    found = [ref for f in _scenario_files() for ref in _refs(yaml.safe_load(f.read_text()))]
    assert len(found) >= 10  # the QPR, RISE trace and map scenarios
    for ref in found:
        r = data.resolve(ref, sets)
        assert r.path.name == ref.rsplit("/", 1)[1]


def _bad_manifest(tmp_path: Path, text: str) -> data.DataError:
    m = tmp_path / "manifest.toml"
    m.write_text(text)
    with pytest.raises(data.DataError) as ei:
        data.read_manifest(m)
    return ei.value


def test_a_bad_manifest_names_the_key(tmp_path: Path) -> None:
    err = _bad_manifest(
        tmp_path,
        '[[dataset]]\nname = "x"\ndir = "../out"\ntitle = "t"\nsource = "s"\nlicence = "l"\n'
        'citation = ["c"]\n[[dataset.file]]\nname = "a"\nurl = "ftp://h/a"\nsha256 = "abc"\n',
    )
    problems = dict(err.problems)
    assert "relative path inside" in problems["dataset[0].dir"]
    assert "http(s) URL" in problems["dataset[0].file[0].url"]
    assert "64 lowercase hexadecimal" in problems["dataset[0].file[0].sha256"]
    assert "integer" in problems["dataset[0].file[0].size_bytes"]
    assert str(tmp_path / "manifest.toml") in str(err)
    assert "not valid TOML" in str(_bad_manifest(tmp_path, "[[dataset]\n"))
    assert "must be a table" in str(_bad_manifest(tmp_path, "dataset = [1]\n"))


# --------------------------------------------------------------------------- resolution


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(PRIOLAB_DATA, the checkout's data/) as two empty folders of tmp_path, PRIOLAB_DATA
    unset: nothing of this machine's data is seen."""
    ext, own = tmp_path / "ext", tmp_path / "own"
    ext.mkdir()
    own.mkdir()
    monkeypatch.setattr(data, "DATA_DIR", own)
    monkeypatch.delenv(data.ENV, raising=False)
    return ext, own


ATT = "data:mahimahi-cellular/ATT-LTE-driving-2016.up"


def _put(root: Path, ref: str, text: str = "0\n1\n") -> Path:
    name, file = ref.removeprefix("data:").split("/")
    p = root / data.read_manifest()[name].dir / file
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_a_reference_resolves_in_priolab_data_first_then_in_data(roots, monkeypatch) -> None:
    ext, own = roots
    r = data.resolve(ATT)
    assert not r.found and r.path == own / "traces/mahimahi-cellular/ATT-LTE-driving-2016.up"
    mine = _put(own, ATT)
    assert data.resolve(ATT).path == mine and data.resolve(ATT).found
    monkeypatch.setenv(data.ENV, str(ext))
    assert data.resolve(ATT).path == mine  # PRIOLAB_DATA lacks it: data/ still has it
    theirs = _put(ext, ATT)
    assert data.resolve(ATT).path == theirs


@pytest.mark.parametrize(
    ("ref", "says"),
    [
        ("data:no-such-set/x.txt", "no dataset 'no-such-set'"),
        ("data:mahimahi-cellular/nope.up", "has no file 'nope.up'"),
        ("data:mahimahi-cellular", "`data:<dataset>/<file>`"),
        ("data:mahimahi-cellular/a/b", "`data:<dataset>/<file>`"),
    ],
)
def test_a_wrong_reference_is_named_by_its_key(write_scenario, standin_dict, ref, says) -> None:
    standin_dict["link"]["uplink"]["trace"] = {"file": ref, "format": "mahimahi"}
    standin_dict["link"]["uplink"].pop("rate_mbps", None)
    with pytest.raises(ScenarioError) as ei:
        load(write_scenario(standin_dict))
    problems = dict(ei.value.problems)
    assert says in problems["link.uplink.trace.file"]


def _att_scenario(write_scenario, standin_dict) -> Path:
    up = standin_dict["link"]["uplink"]
    up.pop("rate_mbps", None)
    up["trace"] = {"file": ATT, "format": "mahimahi"}
    return write_scenario(standin_dict)


def test_an_absent_dataset_names_the_fetch_command(roots, write_scenario, standin_dict) -> None:
    path = _att_scenario(write_scenario, standin_dict)
    with pytest.raises(ScenarioError) as ei:
        load(path)
    (key, msg), *_ = ei.value.problems
    assert key == "link.uplink.trace.file"
    assert "`priolab data fetch mahimahi-cellular`" in msg and data.ENV in msg
    # check says the same, exit 2
    assert cli.main(["check", str(path)]) == 2


def test_input_lists_name_an_absent_file_where_fetch_puts_it(
    roots, write_scenario, standin_dict, capsys
) -> None:
    """The workflow's input lists need no data: an absent dataset's file is listed at its
    fetch destination, so the workflow sees it is absent and leaves the scenario out."""
    _, own = roots
    path = _att_scenario(write_scenario, standin_dict)
    want = own / "traces/mahimahi-cellular/ATT-LTE-driving-2016.up"
    assert input_files(path) == [want]
    assert cli.main(["check", str(path), "--inputs"]) == 0
    assert capsys.readouterr().out.split() == [str(want)]


def test_a_present_dataset_is_read_from_priolab_data(
    roots, monkeypatch, write_scenario, standin_dict
) -> None:
    ext, _ = roots
    monkeypatch.setenv(data.ENV, str(ext))
    trace = _put(ext, ATT, "".join(f"{t}\n" for t in range(1, 1001)))
    path = _att_scenario(write_scenario, standin_dict)
    run, *_ = expand(load(path), path)
    assert run.link.uplink.trace.file == trace  # type: ignore[union-attr]
    assert input_files(path) == [trace]


# --------------------------------------------------------------------------- fetch


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTP server on loopback serving tmp_path/served: (base URL, the folder)."""
    served = tmp_path / "served"
    served.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, directory=str(served), **kwargs)

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    finally:
        httpd.shutdown()
        httpd.server_close()


def _manifest(tmp_path: Path, base: str, files: dict[str, bytes]) -> Path:
    """A manifest of one dataset `toy` served from `base`: file name → the bytes the manifest
    expects (their sha256 and size)."""
    lines = ['[[dataset]]', 'name = "toy"', 'dir = "traces/toy"', 'title = "t"',
             'source = "https://example.org"', 'licence = "MIT"',
             'citation = ["c"]', ""]  # fmt: skip
    for name, expected in files.items():
        lines += ["[[dataset.file]]", f'name = "{name}"', f'url = "{base}/{name}"',
                  f'sha256 = "{hashlib.sha256(expected).hexdigest()}"',
                  f"size_bytes = {len(expected)}", ""]  # fmt: skip
    m = tmp_path / "manifest.toml"
    m.write_text("\n".join(lines))
    return m


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_fetch_downloads_verifies_and_keeps_a_good_copy(tmp_path, server) -> None:
    base, served = server
    (served / "a.txt").write_bytes(b"1 2\n3 4\n")
    m = _manifest(tmp_path, base, {"a.txt": b"1 2\n3 4\n"})
    into = tmp_path / "data"
    said: list[str] = []
    out = datasets.fetch(list(data.read_manifest(m).values()), into, said.append)
    assert [(o.file, o.state) for o in out] == [("a.txt", "fetched")]
    assert (into / "traces/toy/a.txt").read_bytes() == b"1 2\n3 4\n"
    assert said == ["fetched toy/a.txt (8 bytes, sha256 verified)"]
    assert _leftovers(into) == ["a.txt"]  # no temporary file left
    # a second fetch finds it with the right checksum and downloads nothing
    (served / "a.txt").unlink()
    out = datasets.fetch(list(data.read_manifest(m).values()), into, said.append)
    assert [o.state for o in out] == ["present"]


def test_fetch_refuses_a_bad_checksum_and_writes_nothing(tmp_path, server) -> None:
    base, served = server
    (served / "a.txt").write_bytes(b"1 2\n3 5\n")  # one byte off, same size
    m = _manifest(tmp_path, base, {"a.txt": b"1 2\n3 4\n"})
    into = tmp_path / "data"
    with pytest.raises(datasets.FetchError) as ei:
        datasets.fetch(list(data.read_manifest(m).values()), into, lambda s: None)
    ((key, msg),) = ei.value.problems
    assert key == "toy/a.txt" and "sha256" in msg and "refused" in msg and base in msg
    assert _leftovers(into) == []


def test_fetch_keeps_an_older_copy_when_the_new_download_is_refused(tmp_path, server) -> None:
    """A file present with a wrong checksum is downloaded again; the download is refused as
    well, so the old file stays as it was (never half-replaced)."""
    base, served = server
    (served / "a.txt").write_bytes(b"xxxxxxxx")
    m = _manifest(tmp_path, base, {"a.txt": b"1 2\n3 4\n"})
    old = tmp_path / "data/traces/toy/a.txt"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"stale")
    with pytest.raises(datasets.FetchError):
        datasets.fetch(list(data.read_manifest(m).values()), tmp_path / "data", lambda s: None)
    assert old.read_bytes() == b"stale" and _leftovers(tmp_path / "data") == ["a.txt"]


def test_fetch_of_a_missing_file_names_it_and_fetches_the_others(tmp_path, server) -> None:
    base, served = server
    (served / "b.txt").write_bytes(b"b\n")
    m = _manifest(tmp_path, base, {"a.txt": b"a\n", "b.txt": b"b\n"})
    into = tmp_path / "data"
    with pytest.raises(datasets.FetchError) as ei:
        datasets.fetch(list(data.read_manifest(m).values()), into, lambda s: None)
    ((key, msg),) = ei.value.problems
    assert key == "toy/a.txt" and "HTTP 404" in msg and f"{base}/a.txt" in msg
    assert _leftovers(into) == ["b.txt"]


def test_fetch_refuses_a_longer_download_before_reading_it_all(tmp_path, server) -> None:
    base, served = server
    (served / "a.txt").write_bytes(b"y" * 200_000)
    m = _manifest(tmp_path, base, {"a.txt": b"y" * 10})
    with pytest.raises(datasets.FetchError) as ei:
        datasets.fetch(list(data.read_manifest(m).values()), tmp_path / "data", lambda s: None)
    assert "more than the manifest's 10 bytes" in ei.value.problems[0][1]
    assert _leftovers(tmp_path / "data") == []


def test_fetch_and_verify_on_the_command_line(tmp_path, server, monkeypatch, capsys) -> None:
    base, served = server
    (served / "a.txt").write_bytes(b"a\n")
    m = _manifest(tmp_path, base, {"a.txt": b"a\n"})
    into = tmp_path / "data"
    argv = ["data", "fetch", "toy", "--manifest", str(m), "--dir", str(into)]
    assert cli.main(argv) == 0
    assert "sha256 verified" in capsys.readouterr().out
    assert cli.main(["data", "fetch", "nope", "--manifest", str(m)]) == 2
    assert "no dataset 'nope'" in capsys.readouterr().err
    # verify reads the copy a scenario would read: PRIOLAB_DATA first
    monkeypatch.setenv(data.ENV, str(into))
    assert cli.main(["data", "verify", "--manifest", str(m)]) == 0
    assert capsys.readouterr().out.startswith("ok ")
    (into / "traces/toy/a.txt").write_bytes(b"b\n")
    assert cli.main(["data", "verify", "--manifest", str(m)]) == 1
    assert "sha256 differs" in capsys.readouterr().out


# --------------------------------------------------------------------------- the real copies


def test_the_copies_found_here_match_the_manifest() -> None:
    """Whatever copy a scenario would read (PRIOLAB_DATA, then data/) has the manifest's
    sha256: the manifest and CI's copy agree."""
    sets = data.read_manifest()
    rows = datasets.verify(list(sets.values()))
    present = [r for r in rows if r[3] != "absent"]
    if not present:
        pytest.skip(f"no dataset here: {data.missing_hint(sorted(sets))}")
    assert [r for r in present if r[3] != "ok"] == []
