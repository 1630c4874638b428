"""Child-side half of the sandbox: join the candidate's cgroups, apply resource limits, then exec the command
(bubblewrap, or the candidate itself in the basic sandbox).

Run as a script with the standard library only (`python -I -S _launch.py --as MB ... -- argv...`), so it starts
in milliseconds. Doing this in the child (instead of `preexec_fn`) keeps the parent free of fork-unsafe
callbacks while it runs threads.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import signal
import sys
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def _limit(kind: int, value: int) -> None:
    _soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, value if hard == resource.RLIM_INFINITY else hard))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--as", dest="address_space_mb", type=int, required=True)
    parser.add_argument("--cpu", type=int, required=True)
    parser.add_argument("--fsize", type=int, required=True)
    parser.add_argument("--nproc", type=int, required=True, help="0: a pids cgroup caps the tasks instead")
    parser.add_argument("--cgroup", action="append", default=[], help="join this cgroup (repeatable)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if sys.platform == "linux":
        # Die with the runner: a killed mission must not leave candidates behind.
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 1:
            os._exit(137)
    for group in args.cgroup:
        Path(group, "cgroup.procs").write_text(str(os.getpid()))
    _limit(resource.RLIMIT_AS, args.address_space_mb * 1024 * 1024)
    _limit(resource.RLIMIT_CPU, args.cpu)
    _limit(resource.RLIMIT_FSIZE, args.fsize * 1024 * 1024)
    if args.nproc:
        _limit(resource.RLIMIT_NPROC, args.nproc)  # counts all the user's processes; the cgroup is exact
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
