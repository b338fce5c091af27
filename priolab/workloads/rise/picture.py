"""Fig. 7 of the paper: the picture quality of what the Guest sees.

    python -m priolab.workloads.rise.picture IMAGE OUT_CSV SCENARIO_DIR [SCENARIO_DIR ...]
        [--every N]

The paper ([RISE §4.3]) compares each decoded frame with a reference "rendered from
ground-truth user positions at decoding time", by SSIM and PSNR, the pair "temporally
synchronized" so that the difference is the perspective alone. Here, for every N-th frame
displayed at the Guest inside the analysed window of every valid run: the viewport of a real
equirectangular 360° picture at the orientation of the tracking sample the Host rendered the
frame from, against the viewport at the Guest's orientation at display time (the two
orientations of the position-mismatch metric, metrics.orientation_pairs). One still picture
stands for the video: the difference is the perspective, as in the paper; the codec's own
loss is the same for both schemes and is left out.

Parameters:
- field of view 1 rad ([RISE setup], [RISE §4.1]: "a 1-radian PoV"), square;
- `VIEW_PX` = 160 pixels a side: the source's own resolution over 1 rad (a 1024-pixel-wide
  equirectangular picture has 163 pixels per radian), so the viewport neither invents nor
  throws away detail (assumption);
- luma only (Rec. 709 weights), as SSIM is usually computed (assumption);
- a linear HDR source (OpenEXR) is tone-mapped with Reinhard's global operator L / (1 + L)
  and the sRGB transfer curve's 1/2.2 gamma (assumption: any fixed monotone map serves, both
  viewports get the same); an 8-bit source is read as it is;
- SSIM as Wang et al. 2004 define it (11-tap Gaussian window, sigma 1.5, K1 = 0.01,
  K2 = 0.03, dynamic range 1, the mean over the valid part of the map);
- PSNR on the viewports quantised to 8 bits, capped at 60 dB for identical pictures
  (`PSNR_MAX_DB`, assumption: libvmaf's cap for 8-bit input; a frame whose sample is still
  current has no mismatch, and an infinite value would make every mean infinite).

Writes one row per run (OUT_CSV): scenario, setting, scheme, speed, rep, frames scored, SSIM
and PSNR mean and median, the same frames' median mismatch; `section` turns that file into
the report's table per scheme with bootstrap CIs.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.stats import bootstrap_ci, bootstrap_ratio_ci
from priolab.workloads.rise.metrics import orientation_pairs
from priolab.workloads.rise.numbers import ci, fmt
from priolab.workloads.rise.tables import TABLES_DIR
from traces.orientation import geodesic_angle, quat_to_matrix

FOV_RAD = 1.0  # [RISE setup]: perspective projection with a 1-radian field of view
VIEW_PX = 160  # assumption: the source's resolution over 1 rad (module docstring)
PSNR_MAX_DB = 60.0  # assumption: libvmaf's cap for 8-bit input (module docstring)
EVERY = 10  # assumption: every 10th displayed frame (3 per second at 30 fps) keeps it cheap
# The source the results book's Fig. 7 is scored on, and what makes it readable: Debian's
# blender-data (CC0: HDRI Haven, Greg Zaal, as the folder's license.txt says) and PyPI's
# openexr (BSD-3-Clause); neither is a dependency of priolab.
SOURCE = Path("/usr/share/blender/datafiles/studiolights/world/forest.exr")
SOURCE_NEEDS = "`apt-get install blender-data` and `pip install openexr`"
BOOK_EVERY = 30  # assumption: the book's runs.csv scores every 30th frame (~57 per 60 s run)
# Fig. 7 ([RISE §4.3]: "CDFs of similarity scores under different movement speeds"):
# the moderate speed is rise-transport(-wl)'s runs, slow and fast rise-content(-wl)'s
FIG7_SCENARIOS = ("rise-transport", "rise-transport-wl", "rise-content", "rise-content-wl")
LUMA = np.array([0.2126, 0.7152, 0.0722])  # Rec. 709
SSIM_K1, SSIM_K2, SSIM_SIGMA, SSIM_TAPS = 0.01, 0.03, 1.5, 11  # Wang et al. 2004


class PictureError(ValueError):
    """A picture that cannot serve: names the file and what is wrong."""


def read_equirect(path: Path) -> np.ndarray:
    """The picture's display luma in [0, 1], shape (H, 2H). OpenEXR files (linear HDR) need
    the `OpenEXR` Python package; other formats are read with Pillow."""
    if path.suffix.lower() == ".exr":
        try:
            import OpenEXR  # noqa: PLC0415 (optional: only for .exr sources)
        except ImportError as e:
            raise PictureError(f"{path}: reading OpenEXR needs the `openexr` package") from e
        channels = OpenEXR.File(str(path)).channels()
        if "RGB" not in channels:
            raise PictureError(f"{path}: no RGB channels (has: {', '.join(channels)})")
        lum = np.asarray(channels["RGB"].pixels, np.float64) @ LUMA
        lum = np.clip(lum, 0.0, None)
        out = (lum / (1.0 + lum)) ** (1 / 2.2)
    else:
        from PIL import Image  # noqa: PLC0415

        with Image.open(path) as im:
            rgb = np.asarray(im.convert("RGB"), np.float64) / 255.0
        out = rgb @ LUMA
    h, w = out.shape
    if w != 2 * h:
        raise PictureError(
            f"{path}: {w} × {h} pixels is not equirectangular (the width must be twice the height)"
        )
    return out


def viewport(
    equi: np.ndarray, q: np.ndarray, fov_rad: float = FOV_RAD, px: int = VIEW_PX
) -> np.ndarray:
    """The perspective view (px × px, row 0 at the top) at orientation q (w, x, y, z;
    traces/orientation.py's frame: x right, y up, z forward), bilinear from the picture
    (column 0 at longitude −π, row 0 at the north pole; longitude = yaw, wrapping)."""
    h, w = equi.shape
    f = (px / 2) / math.tan(fov_rad / 2)
    c = (np.arange(px) + 0.5 - px / 2) / f
    x, y = np.meshgrid(c, -c)
    d = np.stack([x, y, np.ones_like(x)], -1) @ quat_to_matrix(q).T
    lon = np.arctan2(d[..., 0], d[..., 2])
    lat = np.arctan2(d[..., 1], np.hypot(d[..., 0], d[..., 2]))
    u = (lon + math.pi) / (2 * math.pi) * w - 0.5
    v = np.clip((math.pi / 2 - lat) / math.pi * h - 0.5, 0, h - 1)
    u0, v0 = np.floor(u), np.floor(v)
    fu, fv = u - u0, v - v0
    u0 = u0.astype(int) % w
    u1 = (u0 + 1) % w
    v0 = v0.astype(int)
    v1 = np.minimum(v0 + 1, h - 1)
    top = equi[v0, u0] * (1 - fu) + equi[v0, u1] * fu
    bottom = equi[v1, u0] * (1 - fu) + equi[v1, u1] * fu
    return top * (1 - fv) + bottom * fv


def _gauss(a: np.ndarray) -> np.ndarray:
    """Separable Gaussian filter, 'valid' part only."""
    k = np.arange(SSIM_TAPS) - SSIM_TAPS // 2
    g = np.exp(-(k**2) / (2 * SSIM_SIGMA**2))
    g /= g.sum()
    rows = np.lib.stride_tricks.sliding_window_view(a, SSIM_TAPS, axis=0) @ g
    return np.lib.stride_tricks.sliding_window_view(rows, SSIM_TAPS, axis=1) @ g


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """Mean SSIM of two pictures in [0, 1] (Wang et al. 2004)."""
    c1, c2 = (SSIM_K1 * 1.0) ** 2, (SSIM_K2 * 1.0) ** 2
    ma, mb = _gauss(a), _gauss(b)
    va = _gauss(a * a) - ma * ma
    vb = _gauss(b * b) - mb * mb
    cov = _gauss(a * b) - ma * mb
    m = ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2))
    return float(m.mean())


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """PSNR (dB) of the two pictures quantised to 8 bits, at most PSNR_MAX_DB."""
    qa = np.round(np.clip(a, 0, 1) * 255)
    qb = np.round(np.clip(b, 0, 1) * 255)
    mse = float(np.mean((qa - qb) ** 2))
    if mse == 0:
        return PSNR_MAX_DB
    return min(PSNR_MAX_DB, 10 * math.log10(255.0**2 / mse))


def frame_scores(equi: np.ndarray, q_used: np.ndarray, q_now: np.ndarray) -> pd.DataFrame:
    """SSIM, PSNR and mismatch (deg) per frame: the viewport at q_used against q_now."""
    rows = []
    for a, b in zip(q_used, q_now, strict=True):
        va, vb = viewport(equi, a), viewport(equi, b)
        rows.append((ssim(va, vb), psnr(va, vb), math.degrees(float(geodesic_angle(a, b)))))
    return pd.DataFrame(rows, columns=["ssim", "psnr_db", "mismatch_deg"])


def run_scores(run_dir: Path, equi: np.ndarray, every: int = EVERY) -> dict[str, float]:
    """One run: every `every`-th frame displayed at the Guest inside the analysed window."""
    tables = run_dir / TABLES_DIR
    gf = pd.read_parquet(tables / "guest_frames.parquet")
    disp = pd.read_parquet(tables / "frames_displayed.parquet")
    sent = pd.read_parquet(tables / "tracking_sent.parquet")
    disp = disp[disp["endpoint"] == "guest"]
    inw = gf.loc[gf["in_window"], ["frame_id", "display_time_us"]]
    frames = disp.merge(inw, on=["frame_id", "display_time_us"]).iloc[::every]
    known, q_used, q_now = orientation_pairs(frames, sent[sent["endpoint"] == "guest"])
    s = frame_scores(equi, q_used, q_now)
    nan = math.nan
    return {
        "frames_scored": float(known.sum()),
        "ssim_mean": float(s["ssim"].mean()) if len(s) else nan,
        "ssim_median": float(s["ssim"].median()) if len(s) else nan,
        "psnr_mean_db": float(s["psnr_db"].mean()) if len(s) else nan,
        "psnr_median_db": float(s["psnr_db"].median()) if len(s) else nan,
        "mismatch_median_deg": float(s["mismatch_deg"].median()) if len(s) else nan,
    }


def score_runs(image: Path, scenario_dirs: list[Path], every: int = EVERY) -> pd.DataFrame:
    """One row per valid run (runs.csv) of every scenario given."""
    equi = read_equirect(image)
    rows = []
    for d in scenario_dirs:
        runs = pd.read_csv(d / "runs.csv")
        for r in runs.itertuples():
            label = getattr(r, "setting_label", r.setting)
            rows.append({"scenario": d.name, "setting": label, "scheme": r.scheme,
                         "speed": r.speed, "rep": r.rep, "source": image.name, "every": every,
                         **run_scores(Path(r.path), equi, every)})  # fmt: skip
    return pd.DataFrame(rows)


def fill_command(csv: Path, scenario_dirs: list[Path]) -> str:
    """The command that scores the runs of every scenario given into `csv` (rewritten whole)."""
    dirs = " ".join(str(d) for d in scenario_dirs)
    return (
        f"`python -m priolab.workloads.rise.picture {SOURCE} {csv} {dirs} --every {BOOK_EVERY}` "
        f"(needs {SOURCE_NEEDS})"
    )


def _expected(scenario_dirs: list[Path]) -> dict[tuple[str, str, str], int]:
    """(scenario, setting label, scheme) → valid runs, from each aggregated runs.csv."""
    out: dict[tuple[str, str, str], int] = {}
    for d in scenario_dirs:
        try:
            runs = pd.read_csv(d / "runs.csv")
        except (OSError, pd.errors.EmptyDataError):
            continue
        if runs.empty or "scheme" not in runs:
            continue
        label = runs["setting_label"] if "setting_label" in runs else runs["setting"]
        for (st, scheme), g in runs.groupby([label.fillna(runs["setting"]), "scheme"]):
            if scheme in ("nopri", "pri"):
                out[(d.name, str(st), str(scheme))] = len(g)
    return out


def coverage(t: pd.DataFrame, scenario_dirs: list[Path]) -> list[str]:
    """The valid runs of the Fig. 7 scenarios that `t` (score_runs' rows) has not scored:
    one entry per scenario/setting/scheme, with how many of its runs are scored."""
    scored: dict[tuple[str, str, str], int] = {}
    if not t.empty:
        for key, g in t.groupby(["scenario", "setting", "scheme"]):
            scored[tuple(str(k) for k in key)] = len(g)  # type: ignore[index]
    return [
        f"{sc}/{st} {scheme} ({scored.get((sc, st, scheme), 0)} of {n} runs scored)"
        for (sc, st, scheme), n in _expected(scenario_dirs).items()
        if scored.get((sc, st, scheme), 0) < n
    ]


def section(csv: Path, scenario_dirs: list[Path] | None = None) -> list[str]:
    """The report's Fig. 7 section from score_runs' file: per scenario/setting (and speed),
    SSIM and PSNR per scheme (mean over runs of the per-run mean, with its CI) and w/ Pri's
    gain. `scenario_dirs`: the aggregated Fig. 7 scenarios (FIG7_SCENARIOS) whose runs should
    be scored; those not scored yet are named with the command that scores them."""
    dirs = list(scenario_dirs or [])
    head = ["## Fig. 7: picture quality (SSIM, PSNR)", ""]
    if not csv.is_file():
        missing = coverage(pd.DataFrame(), dirs)
        if not missing:
            return []
        return [
            *head,
            f"Not scored: {csv} is absent. Runs waiting: " + "; ".join(missing) + ". "
            f"Score them with {fill_command(csv, dirs)}.",
            "",
        ]
    t = pd.read_csv(csv)
    src = ", ".join(sorted(set(t["source"]))) if "source" in t else "?"
    lines = [
        *head,
        f"Source picture: {src} (see priolab/workloads/rise/picture.py for the viewport and the "
        "scores). Per run, the mean over the scored frames; here the mean over runs with its "
        "95 % bootstrap CI, w/o Pri → w/ Pri, and w/ Pri's gain (w/ Pri ÷ w/o Pri − 1, %). "
        "Paper: SSIM +12–68 % (5G), +12–80 % (FB); PSNR +10–80 % (5G), +37–93 % (FB), over "
        "its speeds (slow, moderate, fast: the speed column).",
        "",
        "| scenario/setting | speed | runs | mismatch median (°) | SSIM | SSIM gain (%) "
        "| PSNR (dB) | PSNR gain (%) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (sc, st), g in t.groupby(["scenario", "setting"], sort=False):
        a, b = g[g["scheme"] == "nopri"], g[g["scheme"] == "pri"]
        if a.empty or b.empty:
            continue
        speed = ", ".join(sorted(set(g["speed"].astype(str)))) if "speed" in g else "–"
        cells = [speed, f"{len(a)}+{len(b)}"]
        for col in ("mismatch_median_deg", "ssim_mean", "psnr_mean_db"):
            va = a[col].dropna().tolist()
            vb = b[col].dropna().tolist()
            cells.append(f"{ci(bootstrap_ci(va)[:3])} → {ci(bootstrap_ci(vb)[:3])}")
            if col != "mismatch_median_deg":
                r = bootstrap_ratio_ci(vb, va) if va and vb else (math.nan,) * 3
                cells.append(ci(tuple((x - 1) * 100 for x in r)))  # type: ignore[arg-type]
        lines.append(f"| {sc}/{st} | " + " | ".join(cells) + " |")
    every = ", ".join(fmt(x) for x in sorted(set(t["every"]))) if "every" in t else "?"
    lines += ["", f"Frames scored per run: every {every}th displayed in the window.", ""]
    missing = coverage(t, dirs)
    if missing:
        lines += [
            "Not scored yet: " + "; ".join(missing) + ". Score them (the file is rewritten "
            f"whole) with {fill_command(csv, dirs)}.",
            "",
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m priolab.workloads.rise.picture", description=__doc__
    )
    ap.add_argument("image", type=Path, help="an equirectangular 360° picture (width = 2 × height)")
    ap.add_argument("out", type=Path, help="the per-run CSV to write")
    ap.add_argument("scenario_dirs", type=Path, nargs="+")
    ap.add_argument("--every", type=int, default=EVERY)
    args = ap.parse_args(argv)
    try:
        t = score_runs(args.image, args.scenario_dirs, args.every)
    except PictureError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    t.to_csv(args.out, index=False)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
