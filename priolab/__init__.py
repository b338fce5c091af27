"""priolab: network-emulation experiments for realtime streaming over prioritised QUIC."""

# The one place the version is written: pyproject.toml reads it (`dynamic = ["version"]`),
# `priolab --version` prints it with the commit, CITATION.cff and CHANGELOG.md name it
# (tests/test_release.py keeps them equal). A release is a tag `v<version>` on main.
__version__ = "0.1.0"
