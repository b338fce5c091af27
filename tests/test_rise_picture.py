"""Fig. 7's picture quality (priolab/workloads/rise/picture.py): the viewport's geometry on
pictures whose every pixel says where it is, SSIM and PSNR on known pairs, one synthetic run
scored end to end, and the real source where its package is installed."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from analysis.metrics import read_metrics, run_metrics
from analysis.tables import write_tables
from priolab.workloads.rise import picture
from priolab.workloads.rise.synthetic import SynthRun, run_path, write_run
from traces.orientation import euler_to_quat

H, W = 256, 512
LON = (np.arange(W) + 0.5) / W * 2 * math.pi - math.pi  # pixel centres, column 0 at −π
LAT = math.pi / 2 - (np.arange(H) + 0.5) / H * math.pi  # row 0 at the north pole
BLENDER_FOREST = Path("/usr/share/blender/datafiles/studiolights/world/forest.exr")


def centre(view: np.ndarray) -> float:
    n = view.shape[0] // 2
    return float(view[n - 1 : n + 1, n - 1 : n + 1].mean())


def texture(seed: int = 3) -> np.ndarray:
    """A smooth random picture (structure at several scales), periodic in longitude."""
    rng = np.random.default_rng(seed)
    out = np.zeros((H, W))
    for k in (2, 5, 11, 23):
        a, b, c = rng.uniform(0, 2 * math.pi, 3)
        out += np.sin(k * LON[None, :] + a) * np.cos(k * LAT[:, None] + b) + np.sin(c)
    return (out - out.min()) / (out.max() - out.min())


def test_the_view_looks_where_the_orientation_points() -> None:
    """Identity looks at longitude 0 on the equator; yaw turns right (+longitude), positive
    pitch looks down (traces/orientation.py's convention)."""
    lon_ramp = np.tile((LON + math.pi) / (2 * math.pi), (H, 1))
    lat_ramp = np.tile(((math.pi / 2 - LAT) / math.pi)[:, None], (1, W))
    assert centre(picture.viewport(lon_ramp, euler_to_quat(0.0, 0.0, 0.0))) == pytest.approx(
        0.5, abs=0.01
    )
    yaw = math.radians(30)
    q = euler_to_quat(yaw, 0.0, 0.0)
    assert centre(picture.viewport(lon_ramp, q)) == pytest.approx(
        (yaw + math.pi) / (2 * math.pi), abs=0.01
    )
    q = euler_to_quat(0.0, 0.3, 0.0)
    assert centre(picture.viewport(lat_ramp, q)) == pytest.approx(
        (math.pi / 2 + 0.3) / math.pi, abs=0.01
    )
    # the field of view: the left and right edges are ±0.5 rad of longitude from the centre
    v = picture.viewport(lon_ramp, euler_to_quat(0.0, 0.0, 0.0))
    mid = v.shape[0] // 2
    span = (v[mid, -1] - v[mid, 0]) * 2 * math.pi
    edge = 2 * math.atan(math.tan(0.5) * (1 - 1 / v.shape[1]))  # pixel centres, not edges
    assert span == pytest.approx(edge, abs=0.02)


def test_ssim_and_psnr_of_known_pairs() -> None:
    a = picture.viewport(texture(), euler_to_quat(0.0, 0.0, 0.0))
    assert picture.ssim(a, a) == pytest.approx(1.0)
    assert picture.psnr(a, a) == picture.PSNR_MAX_DB
    # one grey level off everywhere: MSE 1 in 8-bit units, 48.13 dB
    b = np.clip(np.round(a * 255) / 255 + 1 / 255, 0, 1)
    a8 = np.round(a * 255) / 255
    keep = a8 < 1  # where the +1 was not clipped
    assert picture.psnr(a8[keep][None, :], b[keep][None, :]) == pytest.approx(
        10 * math.log10(255**2), abs=1e-6
    )
    # the larger the mismatch, the less alike: SSIM and PSNR both fall (within a quarter of
    # the texture's shortest period, 360° / 23 / 4 = 3.9°; beyond, a periodic picture
    # comes back to itself)
    views = [picture.viewport(texture(), euler_to_quat(math.radians(d), 0.0, 0.0))
             for d in (0, 0.25, 1, 3)]  # fmt: skip
    s = [picture.ssim(views[0], v) for v in views[1:]]
    p = [picture.psnr(views[0], v) for v in views[1:]]
    assert s[0] > s[1] > s[2] and p[0] > p[1] > p[2]
    assert s[0] < 1.0


def test_a_picture_that_is_not_equirectangular_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "flat.png"
    Image.fromarray(np.zeros((300, 400, 3), np.uint8)).save(f)
    with pytest.raises(picture.PictureError, match=r"flat\.png: 400 × 300 pixels"):
        picture.read_equirect(f)
    ok = tmp_path / "equi.png"
    Image.fromarray(np.full((100, 200, 3), 255, np.uint8)).save(ok)
    assert picture.read_equirect(ok).shape == (100, 200)


def test_exr_without_its_package_says_which(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "OpenEXR", None)  # import fails
    with pytest.raises(picture.PictureError, match="needs the `openexr` package"):
        picture.read_equirect(tmp_path / "x.exr")


def test_a_run_is_scored_on_the_frames_of_its_window(tmp_path: Path) -> None:
    """Every frame (every=1): the scored frames' median mismatch is the run's own
    mismatch_median_deg, and a moving head scores below identical pictures."""
    r = SynthRun(scenario="s", duration_s=2.0, tracking_speed_deg_s=40.0)
    run = run_path(tmp_path, r)
    write_run(run, r)
    write_tables(run)
    run_metrics(run)
    m = read_metrics(run)["metrics"]
    got = picture.run_scores(run, texture(), every=1)
    assert got["frames_scored"] == m["frames_displayed_guest"]
    assert got["mismatch_median_deg"] == pytest.approx(m["mismatch_median_deg"])
    assert 0 < got["ssim_mean"] < 1 and got["psnr_mean_db"] < picture.PSNR_MAX_DB
    fewer = picture.run_scores(run, texture(), every=5)
    assert fewer["frames_scored"] == math.ceil(got["frames_scored"] / 5)


def test_the_section_gives_each_scheme_and_the_gain(tmp_path: Path) -> None:
    rows = [{"scenario": "quick", "setting": "WL", "scheme": s, "rep": i, "source": "forest.exr",
             "every": 30,
             "mismatch_median_deg": m, "ssim_mean": v, "psnr_mean_db": p}
            for s, m, v, p in (("nopri", 8.0, 0.5, 20.0), ("pri", 1.0, 0.75, 30.0))
            for i in range(3)]  # fmt: skip
    f = tmp_path / "picture.csv"
    pd.DataFrame(rows).to_csv(f, index=False)
    text = "\n".join(picture.section(f))
    assert "Source picture: forest.exr" in text and "every 30th displayed" in text
    row = next(x for x in text.splitlines() if x.startswith("| quick/WL |"))
    cells = [c.strip() for c in row.split("|")]
    assert cells[2] == "–"  # no speed column in this file
    assert cells[3] == "3+3" and cells[6] == "50 [50, 50]" and cells[8] == "50 [50, 50]"
    assert picture.section(tmp_path / "absent.csv") == []
    assert "Not scored" not in text  # no scenario named: nothing to miss


def aggregated(d: Path, speeds: tuple[str, ...], reps: int) -> Path:
    """A scenario folder's runs.csv as analysis/aggregate.py writes it (labels per speed)."""
    d.mkdir(parents=True)
    rows = [{"setting": "FB-4K-Low", "scheme": s, "speed": sp, "rep": i,
             "setting_label": f"FB-4K-Low/{sp}" if len(speeds) > 1 else "FB-4K-Low"}
            for sp in speeds for s in ("nopri", "pri") for i in range(1, reps + 1)]  # fmt: skip
    pd.DataFrame(rows).to_csv(d / "runs.csv", index=False)
    return d


def test_the_section_names_the_runs_it_has_not_scored_and_the_command(tmp_path: Path) -> None:
    """Fig. 7 per speed: rise-content's slow runs are scored, its fast ones are not; the
    section shows the speed, names what is missing and the command that scores it all."""
    res = tmp_path / "results-sim"
    content = aggregated(res / "rise-content", ("slow", "fast"), 3)
    rows = [{"scenario": "rise-content", "setting": "FB-4K-Low/slow", "scheme": s, "speed": "slow",
             "rep": i, "source": "forest.exr", "every": 30, "mismatch_median_deg": 1.0,
             "ssim_mean": 0.5, "psnr_mean_db": 20.0}
            for s in ("nopri", "pri") for i in range(1, 4)]  # fmt: skip
    f = res / "picture" / "runs.csv"
    f.parent.mkdir(parents=True)
    pd.DataFrame(rows[:5]).to_csv(f, index=False)  # one pri run of the slow speed unscored
    lines = picture.section(f, [content])
    row = next(x for x in lines if x.startswith("| rise-content/FB-4K-Low/slow |"))
    assert [c.strip() for c in row.split("|")][2:4] == ["slow", "3+2"]
    missing = next(x for x in lines if x.startswith("Not scored yet: "))
    assert "rise-content/FB-4K-Low/slow pri (2 of 3 runs scored)" in missing
    assert "rise-content/FB-4K-Low/fast nopri (0 of 3 runs scored)" in missing
    assert "rise-content/FB-4K-Low/slow nopri" not in missing
    assert (
        f"`python -m priolab.workloads.rise.picture {picture.SOURCE} {f} {content} --every 30` "
        "(needs `apt-get install blender-data` and `pip install openexr`)"
    ) in missing
    # absent file, runs waiting: the section says so instead of vanishing
    (absent,) = [x for x in picture.section(res / "none" / "runs.csv", [content])
                 if x.startswith("Not scored")]  # fmt: skip
    assert "is absent" in absent and "fast pri (0 of 3 runs scored)" in absent
    # every run scored: no note
    pd.DataFrame(
        [{**r, "setting": f"FB-4K-Low/{sp}", "speed": sp} for r in rows for sp in ("slow", "fast")]
    ).to_csv(f, index=False)
    assert not any(x.startswith("Not scored") for x in picture.section(f, [content]))


@pytest.mark.skipif(
    not BLENDER_FOREST.is_file(),
    reason=f"{BLENDER_FOREST} is Debian's blender-data (CC0 HDRI), not installed here",
)
def test_the_real_source_reads_as_an_equirectangular_picture() -> None:
    pytest.importorskip("OpenEXR", reason="reading OpenEXR needs the `openexr` package")
    p = picture.read_equirect(BLENDER_FOREST)
    assert p.shape == (512, 1024)
    assert 0.0 <= p.min() < p.max() <= 1.0
