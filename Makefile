# priolab: the two commands. Both do every set-up step themselves on a fresh Debian 12
# machine as root, and skip what is already done.
#   make reproduce   install, build, run the quick reproduction of RISE, print the summary
#   make test        install, build, run every test (Rust and Python) and the linters, build
#                    the documentation site and check it in headless Chromium
#   make check       the fast lane: linters, Rust and Python unit tests and the sim tests;
#                    no VM, no network namespaces, no browser, no Slurm cluster
#   make docs        the documentation site (build/site) from docs/ and the generated pages,
#                    whose results rest on the evidence store (evidence/) alone
#   make book-refresh  rerun the book's stale and missing sim cells, add them to evidence/

SHELL := /bin/bash
export PATH := $(CURDIR)/.venv/bin:$(HOME)/.cargo/bin:$(PATH)
export DEBIAN_FRONTEND := noninteractive

VENV := .venv
PY := $(VENV)/bin/python
SCENARIO ?= scenarios/quick.yaml
CORES ?= 2

# Debian packages: Mininet and its tools, traffic tools, the Python venv, ffmpeg for
# frame-size traces, SSH for the testbed tests, debootstrap and qemu for the stock-kernel VM,
# tcpdump for packet capture (scenario key capture), GStreamer with x264enc (plugins-ugly) and
# avdec_h264 (libav) and its development files for the `roq` endpoint's live encoder/decoder,
# mate-backgrounds for the photographs of roq's natural source (`photo-pans`, GPL-2+);
# chromium for the documentation site's browser check (`make test-docs`); Slurm (slurmctld,
# slurmd, its clients) and munge for the Slurm profile's one-node test cluster (`make test-slurm`).
APT_PKGS := mininet iproute2 ethtool iperf3 iputils-ping procps psmisc kmod \
	python3 python3-venv python3-dev git ca-certificates build-essential pkg-config \
	ffmpeg openssh-server openssh-client sshpass rsync tcpdump \
	debootstrap qemu-system-x86 e2fsprogs \
	libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base \
	gstreamer1.0-plugins-ugly gstreamer1.0-libav mate-backgrounds \
	chromium \
	slurmctld slurmd slurm-client munge

.PHONY: setup apt venv lock build reproduce reproduce-run test check test-rust test-python test-slurm test-docs test-evidence docs book-refresh lint clean-results doctor vm

setup: apt venv build

apt:
	@missing=$$(for p in $(APT_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "apt: installing $$missing"; \
		apt-get update && apt-get install -y --no-install-recommends $$missing; \
	else echo "apt: all packages present"; fi
	@command -v cargo >/dev/null || { echo "cargo not found: installing Debian's rust toolchain"; \
		apt-get update && apt-get install -y --no-install-recommends cargo rustc; }

# The venv uses Debian's python3 so that Debian's mininet module is importable. It installs
# exactly requirements.lock (every package pinned, with hashes; `make lock` regenerates it from
# pyproject.toml on purpose), so one commit means one Python environment on every machine.
# Debian's pip is not upgraded: the lock pins what it installs, and pip itself comes with
# Debian 12's python3-venv.
LOCK := requirements.lock
PIP_TOOLS := pip-tools==7.6.2

venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml $(LOCK)
	test -x $(PY) || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r $(LOCK)
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(PY) -m priolab.pylock check $(LOCK)
	touch $@

# Regenerate the lock from pyproject.toml (the newest versions its bounds allow, today), in a
# throw-away venv so nothing of .venv leaks into the resolution. Review the diff, run
# `make test`, commit pyproject.toml and requirements.lock together.
lock:
	rm -rf .lock-venv
	/usr/bin/python3 -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --disable-pip-version-check '$(PIP_TOOLS)'
	.lock-venv/bin/pip-compile --quiet --strip-extras --generate-hashes --allow-unsafe \
		--all-build-deps --extra dev --extra testbed --extra docs --extra cluster \
		--output-file $(LOCK) pyproject.toml
	rm -rf .lock-venv

build:
	cargo build --release --workspace --locked

doctor: setup
	$(VENV)/bin/priolab doctor

# Each command's steps, in order: make runs them one after another, and `.ci/timed-make
# TARGET` times them one by one into evidence/timings/TARGET.json (the timings page).
REPRODUCE_STEPS := apt venv build reproduce-run
TEST_STEPS := apt venv build lint vm test-rust test-docs test-evidence test-python

reproduce: $(REPRODUCE_STEPS)

reproduce-run:
	$(VENV)/bin/snakemake --cores $(CORES) --config scenario=$(SCENARIO) --rerun-incomplete
	$(VENV)/bin/python -m analysis.show results/$$($(PY) -c "import sys; from priolab.scenario import load; print(load(sys.argv[1]).name)" $(SCENARIO))

test: $(TEST_STEPS)

print-steps-%:
	@echo $($(subst -,_,$(shell echo $* | tr a-z A-Z))_STEPS)

# What a developer runs between edits: everything that needs neither root's network state nor
# a VM, a browser or a Slurm cluster (those are `make test`'s, marked netns, browser, slow).
check: setup lint test-rust
	$(VENV)/bin/pytest -q -ra -m "not netns and not browser and not slow" --durations=5

# The stock-kernel VM image (vm/README.md): built from Debian's packages into
# /var/cache/priolab-vm, again only when its recipe changes; tests/test_vm.py boots it.
vm: setup
	$(VENV)/bin/priolab vm build

lint:
	cargo fmt --all -- --check
	cargo clippy --release --workspace --all-targets --locked -- -D warnings
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test-rust:
	cargo test --release --workspace --locked

# The documentation site: the generated pages (`snakemake book`: results per paper from the
# evidence store's records, workload reference pages), then MkDocs (mkdocs.yml) into build/site.
docs: setup
	$(VENV)/bin/snakemake --cores 1 --force book
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# Rerun every sim cell of the book whose record is stale or missing (at REFRESH_REPS
# repetitions) into results-refresh/ and add those runs to evidence/ (book/refresh.py); from an
# empty store it also times itself into evidence/refresh.json. `python -m book.refresh plan`
# says what it would run; REFRESH_ONLY=quick,dtp-quick limits it to some scenarios.
REFRESH_REPS ?= 10
REFRESH_ONLY ?=
book-refresh: setup
	$(PY) -m book.refresh run --cores $(CORES) --reps $(REFRESH_REPS) $(if $(REFRESH_ONLY),--only $(REFRESH_ONLY))

# A sample of the committed sim records rerun and compared (evidence/README.md, "verify"):
# counts exactly, floats within a relative tolerance. Small, to keep `make test` short.
VERIFY_SAMPLE ?= 2
test-evidence: setup
	$(VENV)/bin/priolab evidence verify --sample $(VERIFY_SAMPLE) --seed 1

# Every page of the site rendered in headless Chromium: headings, images, internal links;
# one screenshot per page in build/docs-screenshots (kept as the test's artefacts).
test-docs: docs
	rm -rf build/docs-screenshots
	$(VENV)/bin/python -m book.browser build/site --shots build/docs-screenshots

test-python:
	$(VENV)/bin/pytest -q -ra --durations=8

# The Slurm profile against a real one-node Slurm (profiles/slurm/testcluster.py brings it up
# and down): a sim sweep through `snakemake --executor slurm`, one job cancelled and retried.
# test-python runs it too; this target runs it alone and prints its figures (bring-up, per job).
test-slurm: setup
	$(VENV)/bin/pytest -q -ra -s tests/test_slurm_profile.py

clean-results:
	rm -rf results results-refresh .snakemake
