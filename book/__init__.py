"""The results book: the generated pages of the documentation site (`snakemake book`).

    python -m book [--results results] [--results-sim results-sim] [--out docs]

Reads both results folders, the Mininet one and the sim one, side by side (never pooled; every
number names its site). Writes one results page per paper (results.py, papers.py), the
sim-vs-Mininet agreement page (agreement.py) and one reference page per workload
(workloads.py) under --out, in its `results/` and `workloads/` folders (generated, not
committed), with the figures they show. `make docs` then builds the site (mkdocs.yml) from
docs/; `python -m book.browser` checks it in headless Chromium; `python -m book.lint` keeps
times of day, commit ids and dates out of hand-written pages.
"""
