#!/usr/bin/env python3
"""A STAND-IN in front of `priolab-sim` for the Slurm profile's test (tests/test_slurm_profile.py):
`PRIOLAB_SIM` points here, and this execs the program in STANDIN_SIM_ARGV (a JSON argv list:
the real priolab-sim, or the fake tests/fake_priolab_sim.py run by an interpreter) with the
same arguments. One run is held back so that the test can cancel its Slurm job mid-run: the
first time a SPEC whose path contains STANDIN_SLOW_RUN comes by, this writes STANDIN_MARK
(the Slurm job id, then a newline) and sleeps STANDIN_SLOW_S seconds before going on; every
later attempt of that run goes straight through. Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main(argv: list[str]) -> None:
    target = json.loads(os.environ["STANDIN_SIM_ARGV"])
    slow = os.environ.get("STANDIN_SLOW_RUN")
    if slow and any(slow in a for a in argv):
        try:
            fd = os.open(os.environ["STANDIN_MARK"], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            fd = None  # a later attempt: no hold
        if fd is not None:
            os.write(fd, f"{os.environ.get('SLURM_JOB_ID', '')}\n".encode())
            os.close(fd)
            time.sleep(float(os.environ.get("STANDIN_SLOW_S", "300")))
    os.execv(target[0], [*target, *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
