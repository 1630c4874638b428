"""Parent-side half of the launcher (`_launch.py`): its command line, and the environment a candidate starts with."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_k.config import OPENMP_SPIN
from agent_k.sandbox import bwrap
from agent_k.sandbox.cgroups import CandidateGroups, available
from agent_k.sandbox.identity import sandbox_identity

_LAUNCHER = Path(__file__).with_name("_launch.py")
SANDBOX_USER = "sandbox"
"""The user name a candidate sees (its uid has no entry in the sandbox's /etc)."""
VIRTUAL_SLACK_MB = 4096
"""Address space beyond the memory cap, where a memory cgroup binds: thread stacks and allocator arenas
reserve address space they never touch, and the cgroup caps what is really used."""


def gpu_usable() -> bool:
    """Candidates can train on the host's GPUs: it has some, and a memory cgroup can cap a candidate's memory, so
    its address space need not be (`address_space_mb`)."""
    return bool(bwrap.gpu_devices()) and "memory" in available()


def address_space_mb(memory_mb: int, groups: CandidateGroups) -> int:
    """Each of a candidate's processes' address-space cap, 0 for none. Without a memory cgroup it is the memory cap.
    With one it only stops runaway reservations, and with a GPU there is none: CUDA's driver reserves address
    space by the size of the GPU's memory and the host's, and does not start under a cap."""
    if groups.memory is None:
        return memory_mb
    return 0 if bwrap.gpu_devices() else memory_mb + VIRTUAL_SLACK_MB


def environment(home: str, threads: int) -> dict[str, str]:
    """A fresh environment: nothing inherited, so no secret can leak into a candidate."""
    count = str(threads)
    return {
        "PATH": os.pathsep.join([str(Path(bwrap.python()).parent), os.defpath]),
        "HOME": home,
        # Who the user is, without the /etc/passwd the sandbox does not hold: torch's compiler names its cache
        # folder after getpass.getuser(), which reads these first (torch 2.11's optimisers fail without them).
        "USER": SANDBOX_USER,
        "LOGNAME": SANDBOX_USER,
        "TMPDIR": home,
        "MPLCONFIGDIR": home,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": count,
        **OPENMP_SPIN,
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
    return [
        bwrap.python(), "-I", "-S", str(_LAUNCHER),
        "--as", str(address_space_mb(memory_mb, groups)), "--cpu", str(cpu_seconds), "--fsize", str(file_size_mb),
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
