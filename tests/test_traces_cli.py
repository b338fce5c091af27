import argparse
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import GENERIC_LIBM, REPO, cpu_has_fma
from traces.cli import main, register, sniff_format
from traces.throughput import read_mahimahi, read_schedule
from traces.throughput_ops import mean_mbps
from traces.tracking import read_tracking_csv


def test_register_adds_trace_subcommands():
    p = argparse.ArgumentParser()
    register(p.add_subparsers(dest="command"))
    args = p.parse_args(["trace", "generate", "constant", "x.txt", "--duration-s", "5"])
    assert args.func.__name__ == "cmd_generate"
    for cmd in ("info", "convert", "scale", "fit", "plot", "tracking", "video"):
        with pytest.raises(SystemExit) as e:
            p.parse_args(["trace", cmd, "--help"])
        assert e.value.code == 0


def test_generate_convert_scale_info(tmp_path, capsys):
    s = tmp_path / "s.txt"
    assert main(["trace", "generate", "steps", str(s), "--spec", "0:1,30:0.5,60:1",
                 "--duration-s", "90"]) == 0  # fmt: skip
    assert sniff_format(s) == "schedule"
    mm = tmp_path / "s.mm"
    assert main(["trace", "convert", str(s), str(mm), "--to", "mahimahi"]) == 0
    assert sniff_format(mm) == "mahimahi"
    assert mean_mbps(read_mahimahi(mm)) == pytest.approx(2.5 / 3, rel=1e-3)
    w = tmp_path / "w.txt"
    assert main(["trace", "convert", str(mm), str(w), "--to", "schedule", "--start-s", "30",
                 "--end-s", "60"]) == 0  # fmt: skip
    assert mean_mbps(read_schedule(w)) == pytest.approx(0.5, rel=0.01)
    sc = tmp_path / "sc.mm"
    assert main(["trace", "scale", str(mm), str(sc), "--target-mean-mbps", "3"]) == 0
    capsys.readouterr()
    assert main(["trace", "info", str(sc), "--json", "--below-mbps", "2"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["mean_mbps"] == pytest.approx(3.0, rel=1e-3)
    assert info["fraction_below"] == pytest.approx(1 / 3, abs=0.02)


def test_fit_writes_model_and_twin(tmp_path):
    src = tmp_path / "m.txt"
    assert main(["trace", "generate", "markov", str(src), "--duration-s", "300",
                 "--seed", "4"]) == 0  # fmt: skip
    model, twin = tmp_path / "model.json", tmp_path / "twin.mm"
    assert main(["trace", "fit", str(src), "--out", str(model), "--twin", str(twin),
                 "--to", "mahimahi", "--seed", "9"]) == 0  # fmt: skip
    assert json.loads(model.read_text())["fitted_from"] == "m.txt"
    t = read_mahimahi(twin)
    assert t.period_ms == 300_000
    assert mean_mbps(t) == pytest.approx(mean_mbps(read_schedule(src)), rel=0.3)


def test_tracking_and_plot(tmp_path):
    out = tmp_path / "t.csv"
    assert main(["trace", "tracking", "--synthetic", "moderate", str(out),
                 "--duration-s", "2"]) == 0  # fmt: skip
    assert len(read_tracking_csv(out).times_s) == 120
    again = tmp_path / "r.csv"
    assert main(["trace", "tracking", str(out), str(again), "--rate-hz", "30"]) == 0
    assert len(read_tracking_csv(again).times_s) == 60
    png = tmp_path / "t.png"
    assert main(["trace", "plot", str(out), str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_bad_input_is_reported_not_raised(tmp_path, capsys):
    bad = tmp_path / "bad.mm"
    bad.write_text("0\n5\n3\n")
    assert main(["trace", "info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.mm, line 3" in err and "before the previous" in err
    assert main(["trace", "tracking", "--synthetic", "warp", str(tmp_path / "x.csv")]) == 2
    assert "allowed slow, moderate, fast" in capsys.readouterr().err
    csv = tmp_path / "c.csv"
    csv.write_text("t,r\n0,1\n")
    assert main(["trace", "info", str(csv)]) == 2
    assert "--time-column" in capsys.readouterr().err


CODE_PATHS = {"default": {}, "generic-libm": GENERIC_LIBM}


@pytest.mark.parametrize("code_path", list(CODE_PATHS))
def test_shipped_synthetic_traces_are_reproducible(code_path):
    """Every shipped synthetic trace regenerated (traces/make_synthetic.py --check) on this
    CPU's default math kernels and on glibc's generic ones: the same to the precision each
    file prints, or the failure names the value that moved."""
    env = {**os.environ, **CODE_PATHS[code_path]}
    r = subprocess.run(
        [sys.executable, "-m", "traces.make_synthetic", "--check"],
        env=env, cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 0, f"moved on the {code_path} code path:\n{r.stdout}{r.stderr}"


def test_encoder_made_traces_parse():
    from traces.frames import read_frame_csv
    from traces.make_synthetic import HERE, NEEDS_FFMPEG

    frames = {"frames-x264-1mbps-30fps-2s.csv": 60, "gop-x264-720p25-g50-bf2-2.7mbps-20s.csv": 500}
    for n in NEEDS_FFMPEG:  # encoder output depends on the x264 build: only check it parses
        assert len(read_frame_csv(HERE / n).size_bytes) == frames[n]


def test_check_allows_one_unit_in_the_last_place_and_names_what_moved(tmp_path):
    from traces.make_synthetic import differences

    shipped, made = tmp_path / "a.txt", tmp_path / "b.txt"
    shipped.write_text("# duration_s 3.0\n0.0\t7.50225\n1.0\t6.803718\n")
    made.write_text("# duration_s 3.0\n0.0\t7.502251\n1.0\t6.803718\n")
    assert differences(shipped, made, 1e-6) == []
    made.write_text("# duration_s 3.0\n0.0\t7.502252\n1.0\t6.803718\n")
    assert differences(shipped, made, 1e-6) == [
        "a.txt, line 2, column 2: 7.502252, shipped 7.50225"
    ]
    assert differences(shipped, made, 0.0) != []
    made.write_text("# duration_s 4.0\n0.0\t7.50225\n1.0\t6.803718\n")  # beyond the slack
    assert differences(shipped, made, 1e-6) == ["a.txt, line 1, column 3: 4.0, shipped 3.0"]
    made.write_text("0.0\t7.50225\n")
    assert differences(shipped, made, 1e-6) == ["a.txt: 1 lines, the shipped file has 3"]


@pytest.mark.skipif(not cpu_has_fma(), reason="this CPU has no FMA: glibc has one code path here")
def test_generic_libm_is_another_code_path_on_this_cpu():
    """The second code path above is real: exp over a grid gives other bits with glibc's
    generic kernels than with the FMA ones (else the two-path tests would prove nothing)."""
    prog = "import math; print([math.exp(i / 1000 - 3).hex() for i in range(6001)])"
    out = {
        name: subprocess.run(
            [sys.executable, "-c", prog],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
        ).stdout  # fmt: skip
        for name, env in CODE_PATHS.items()
    }
    assert out["default"] != out["generic-libm"]
