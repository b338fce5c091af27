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

# Debian packages, in two sets. `make reproduce` installs APT_RUN only: Mininet and its tools,
# iperf3 and ping (the link calibration), the Python venv, and a C toolchain for the crates the
# quick reproduction builds (`make build-quick`: rise and linkem, no GStreamer).
APT_RUN := mininet iproute2 ethtool iperf3 iputils-ping procps psmisc kmod \
	python3 python3-venv python3-dev git ca-certificates build-essential pkg-config
# `make test` adds APT_TEST: ffmpeg for frame-size traces, SSH for the testbed tests,
# tcpdump for packet capture (scenario key capture), tshark for the tests that open those
# pcaps and decrypt their QUIC with the TLS key log (tests/formats_checks.py), debootstrap and
# qemu for the stock-kernel VM, GStreamer with x264enc (plugins-ugly) and avdec_h264 (libav)
# and its development files for the `roq` endpoint's live encoder/decoder (the whole
# workspace builds), mate-backgrounds for the photographs of roq's natural source
# (`photo-pans`, GPL-2+), chromium for the documentation site's browser check
# (`make test-docs`), Slurm (slurmctld, slurmd, its clients) and munge for the Slurm profile's
# one-node test cluster (`make test-slurm`, which starts its own daemons in a temp folder).
APT_TEST := ffmpeg openssh-server openssh-client sshpass rsync tcpdump tshark \
	debootstrap qemu-system-x86 e2fsprogs \
	libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base \
	gstreamer1.0-plugins-ugly gstreamer1.0-libav mate-backgrounds \
	chromium \
	slurmctld slurmd slurm-client munge
# Daemons Debian enables when it installs their packages. The tests bring up their own, so
# apt-test leaves the system's disabled and stopped, if it was apt-test that installed them.
APT_DAEMONS := munge slurmctld slurmd

.PHONY: setup apt apt-test venv lock build build-quick build-vm reproduce reproduce-run test check test-rust test-python test-slurm test-docs test-evidence docs book-refresh lint clean-results doctor vm

setup: apt apt-test venv build

# $(call apt_install,PACKAGES,DAEMONS): install what is missing of PACKAGES (apt-get update
# first), then disable and stop each of DAEMONS that this call installed.
define apt_install
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "apt: installing" $$missing; \
		apt-get update && apt-get install -y --no-install-recommends $$missing || exit 1; \
		for d in $(2); do case " $$(echo $$missing) " in *" $$d "*) \
			echo "apt: $$d installed; its daemon left disabled"; \
			systemctl disable --now $$d >/dev/null 2>&1 || systemctl disable $$d >/dev/null 2>&1 || true;; \
		esac; done; \
	else echo "apt: all packages present"; fi
endef

apt:
	$(call apt_install,$(APT_RUN),)
	@command -v cargo >/dev/null || { echo "cargo not found: installing Debian's rust toolchain"; \
		apt-get update && apt-get install -y --no-install-recommends cargo rustc; }

apt-test: apt
	$(call apt_install,$(APT_TEST),$(APT_DAEMONS))

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

# Only the crates SCENARIO's workloads run (and linkem, which also builds the calibration's
# probe) and those their analyses load (roq's scoring kernel), as `priolab testbed needs
# --cargo` names them: the quick reproduction builds rise and linkem, not roq, so it needs no
# GStreamer.
build-quick: venv
	cargo build --release --locked $$($(VENV)/bin/priolab testbed needs --cargo $(SCENARIO))

doctor: apt venv build-quick
	$(VENV)/bin/priolab doctor

# Each command's steps, in order: make runs them one after another, and `.ci/timed-make
# TARGET` times them one by one into evidence/timings/TARGET.json (the timings page).
REPRODUCE_STEPS := apt venv build-quick reproduce-run
TEST_STEPS := apt apt-test venv build-vm lint test-rust test-docs test-evidence test-python

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
vm: apt apt-test venv
	$(VENV)/bin/priolab vm build

# make test's first long step: cargo's build is CPU-bound, the image's mostly downloads and
# dpkg in a chroot, so side by side they overlap (neither needs the other).
build-vm: apt apt-test venv
	$(MAKE) --no-print-directory -j2 -O build vm

lint:
	cargo fmt --all -- --check
	cargo clippy --release --workspace --all-targets --locked -- -D warnings
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

test-rust:
	cargo test --release --workspace --locked

# The documentation site: the generated pages (`snakemake book`: results per paper from the
# evidence store's records, workload reference pages), then MkDocs (mkdocs.yml) into build/site.
docs: apt venv
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
# counts exactly, floats within a relative tolerance. Small, and among the scenarios whose runs
# are cheap (no video scoring), to keep `make test` short.
VERIFY_SAMPLE ?= 3
VERIFY_ONLY ?= quick,dtp-quick,agree-dtp,agree-rise
test-evidence: setup
	$(VENV)/bin/priolab evidence verify --sample $(VERIFY_SAMPLE) --seed 1 --only $(VERIFY_ONLY)

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

print-%:
	@echo $($*)
