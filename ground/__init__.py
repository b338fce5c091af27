"""The ground every other package stands on: what traces, netem, priolab and analysis all
need and that needs none of them (ground/README.md)."""
