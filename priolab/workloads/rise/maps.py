"""The RISE page's maps from a site's tree (materialised from the evidence store): the regime
map (its cells and figure, from the sim records of scenarios/maps/rise-loss-queue.yaml) and
the map with the report scenarios' real points on it, as rules/analysis.smk's `regime_map`
and `rise_map` draw them from a results tree. The RISE page's section hook
(reproduction.page_sections) draws them and shows them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from priolab.workloads.rise import regime_map, rise_map

REGIME = Path("regime")
MAP = Path("map")


def cells_file(tree: Path) -> Path:
    """Where a tree keeps the regime map's cells (rule regime_map's output)."""
    return tree / REGIME / "regime_map.csv"


def derive(tree: Path, cells: Path | None = None) -> None:
    """Draw the maps a tree's records support: the regime map where the tree has the map's
    scenario (its cells are then the tree's own), and the real points of the report's
    scenarios on the cells given (or the tree's own)."""
    grid = tree / regime_map.REGIME_MAP_SCENARIO
    if (grid / "runs.csv").is_file():
        try:
            runs = regime_map.grid_runs(grid)
        except SystemExit:  # no valid run on the map's axes: no cells, said by the report
            runs = pd.DataFrame()
        if not runs.empty:
            c = regime_map.cells(runs)
            cells_file(tree).parent.mkdir(parents=True, exist_ok=True)
            c.to_csv(cells_file(tree), index=False)
            regime_map.draw(c, tree / REGIME, int(runs["rep"].nunique()),
                            f"The real endpoints on the sim site ({grid.name})")  # fmt: skip
    cells = cells if cells is not None and cells.is_file() else cells_file(tree)
    dirs = [tree / n for n in rise_map.REPORT_SCENARIOS if (tree / n / "runs.csv").is_file()]
    if not dirs:
        return
    pts = rise_map.real_points(dirs)
    (tree / MAP).mkdir(parents=True, exist_ok=True)
    pts.to_csv(tree / MAP / "rise_map_points.csv", index=False)
    rise_map.draw(rise_map.read_cells(cells) if cells.is_file() else None, pts, tree / MAP)


def section(trees: list[Path], out_dir: Path) -> list[str]:
    """The maps' figures of every tree, copied beside the page, with their captions."""
    lines: list[str] = []
    for tree in trees:
        for sub, name in ((REGIME, "regime_map"), (MAP, "rise_map")):
            png = tree / sub / f"{name}.png"
            if not png.is_file():
                continue
            rel = Path("figures", tree.name, "maps")
            (out_dir / rel).mkdir(parents=True, exist_ok=True)
            shutil.copy2(png, out_dir / rel / png.name)
            cap = png.with_suffix(".txt")
            caption = cap.read_text().strip() if cap.is_file() else name
            lines += [f"![{name}]({(rel / png.name).as_posix()})", "",
                      f"{caption} (Site: {tree.name}.)", ""]  # fmt: skip
    return ["## The regime map and the real runs on it", "", *lines] if lines else []
