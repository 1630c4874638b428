"""Parent-side half of the launcher (`_launch.py`): its command line, and the environment a candidate starts with."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_k.ml.sandbox import bwrap
from agent_k.ml.sandbox.cgroups import CandidateGroups
from agent_k.ml.sandbox.identity import sandbox_identity

_LAUNCHER = Path(__file__).with_name("_launch.py")
VIRTUAL_SLACK_MB = 4096
"""Address space beyond the memory cap, where a memory cgroup binds: thread stacks and allocator arenas
reserve address space they never touch, and the cgroup caps what is really used."""


def environment(home: str, threads: int) -> dict[str, str]:
    """A fresh environment: nothing inherited, so no secret can leak into a candidate."""
    count = str(threads)
    return {
        "PATH": os.pathsep.join([str(Path(bwrap.python()).parent), os.defpath]),
        "HOME": home,
        "TMPDIR": home,
        "MPLCONFIGDIR": home,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": count,
        # Waiting OpenMP threads spin briefly, then sleep: spinning long made a 2-thread LightGBM fit 10x slower
        # beside busy processes, sleeping at once 10x slower on idle cores (benchmarks/thread_wait.py).
        "GOMP_SPINCOUNT": "1000",
        "OPENBLAS_NUM_THREADS": count,
        "MKL_NUM_THREADS": count,
    }


def launcher_command(
    groups: CandidateGroups,
    inner: list[str],
    *,
    memory_mb: int,
    cpu_seconds: int,
    file_size_mb: int,
    processes: int,
    user: str | None = None,
    stage: list[str] | None = None,
    rootfs: dict[str, object] | None = None,
    seccomp: int | None = None,
) -> list[str]:
    """`_launch.py` joining the candidate's cgroups, setting its rlimits and (root only) staging `stage` or building
    `rootfs` and dropping to `user` (UID:GID), loading the seccomp filter from descriptor `seccomp`, then exec'ing
    `inner`."""
    pids_capped = any((group / "pids.max").exists() for group in groups.paths)
    address_space = memory_mb + (VIRTUAL_SLACK_MB if groups.memory is not None else 0)
    return [
        bwrap.python(), "-I", "-S", str(_LAUNCHER),
        "--as", str(address_space), "--cpu", str(cpu_seconds), "--fsize", str(file_size_mb),
        "--nproc", "0" if pids_capped else str(processes),
        *(arg for group in groups.paths for arg in ("--cgroup", str(group))),
        *(("--user", user) if user else ()),
        *(arg for source in stage or () for arg in ("--stage", source)), "--stage-root", bwrap.STAGE,
        *(("--rootfs", json.dumps(rootfs)) if rootfs else ()),
        *(("--seccomp", str(seccomp)) if seccomp is not None else ()),
        "--", *inner,
    ]  # fmt: skip


def user_arg(user: str | None) -> str | None:
    """UID:GID a root runner's candidates drop to (None for any other runner); `user` as in `Limits.user`."""
    identity = sandbox_identity(user)
    return identity.launcher_arg() if identity else None
