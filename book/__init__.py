"""The results book: the generated pages of the documentation site (`snakemake book`).

    python -m book [--evidence evidence] [--out docs] [--jobs 2]

Reads the evidence store's run records alone (evidence/README.md; materialised per site by
priolab/evidence/materialise.py, sites side by side, never pooled; every number names its
site and says when it rests on stale or real-time records). Writes one results page per paper
(results.py, papers.py), the sim-vs-Mininet agreement page (agreement.py), the results' front
page (front.py) and one reference page per workload (workloads.py) under --out, in its
`results/` and `workloads/` folders (generated, not committed), with the figures they show.
`make docs` then builds the site (mkdocs.yml) from docs/; `python -m book.browser` checks it in
headless Chromium; `python -m book.lint` keeps times of day, commit ids and dates out of
hand-written pages; `python -m book.refresh` is `make book-refresh`.
"""
