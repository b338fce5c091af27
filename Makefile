# priolab: the two commands. Both do every set-up step themselves on a fresh Debian 12
# machine as root, and skip what is already done.
#   make reproduce   install, build, run the quick reproduction of RISE, print the summary
#   make test        install, build, run every test (Rust and Python) and the linters, build
#                    the documentation site and check it in headless Chromium
#   make check       the fast lane: linters, Rust and Python unit tests and the sim tests;
#                    no VM, no network namespaces, no browser, no Slurm cluster
#   make docs        the documentation site (build/site) from docs/ and the generated pages

SHELL := /bin/bash
export PATH := $(CURDIR)/.venv/bin:$(HOME)/.cargo/bin:$(PATH)
export DEBIAN_FRONTEND := noninteractive

VENV := .venv
PY := $(VENV)/bin/python
SCENARIO ?= scenarios/quick.yaml
CORES ?= 2

# Debian packages: Mininet and its tools, traffic tools, the Python venv, ffmpeg for
# frame-size traces, SSH for the testbed tests, debootstrap and qemu for the stock-kernel VM,
# tcpdump for packet capture (scenario key capture), tshark for the tests that open those
# pcaps and decrypt their QUIC with the TLS key log (tests/formats_checks.py), GStreamer with x264enc (plugins-ugly) and
# avdec_h264 (libav) and its development files for the `roq` endpoint's live encoder/decoder,
# mate-backgrounds for the photographs of roq's natural source (`photo-pans`, GPL-2+);
# chromium for the documentation site's browser check (`make test-docs`); Slurm (slurmctld,
# slurmd, its clients) and munge for the Slurm profile's one-node test cluster (`make test-slurm`).
APT_PKGS := mininet iproute2 ethtool iperf3 iputils-ping procps psmisc kmod \
	python3 python3-venv python3-dev git ca-certificates build-essential pkg-config \
	ffmpeg openssh-server openssh-client sshpass rsync tcpdump \
	tshark \
	debootstrap qemu-system-x86 e2fsprogs \
	libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base \
	gstreamer1.0-plugins-ugly gstreamer1.0-libav mate-backgrounds \
	chromium \
	slurmctld slurmd slurm-client munge

.PHONY: setup apt venv lock build reproduce reproduce-run test check test-rust test-python test-slurm test-docs docs lint clean-results doctor vm

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
# throw-away venv so nothing of .venv leaks into the resolution, and nothing of this machine
# into the lock: no --find-links or index URL from pip's environment (PIP_FIND_LINKS) is
# written into it (tests/test_pylock.py checks the lock holds no local path). Review the diff, run
# `make test`, commit pyproject.toml and requirements.lock together.
lock:
	rm -rf .lock-venv
	/usr/bin/python3 -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --disable-pip-version-check '$(PIP_TOOLS)'
	.lock-venv/bin/pip-compile --quiet --strip-extras --generate-hashes --allow-unsafe \
		--no-emit-find-links --no-emit-index-url \
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
TEST_STEPS := apt venv build lint vm test-rust test-docs test-python

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

# The documentation site: the generated pages (`snakemake book`: results per paper from the run
# folders present, workload reference pages), then MkDocs (mkdocs.yml) into build/site.
docs: setup
	$(VENV)/bin/snakemake --cores 1 --force book
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

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
	rm -rf results .snakemake
