"""Which sandbox a mission's candidates get: bubblewrap where it can run, or the basic one, and why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from agent_k.ml.sandbox import bwrap, cgroups
from agent_k.ml.sandbox.cgroups import CandidateGroups
from agent_k.ml.sandbox.identity import SandboxUserError, sandbox_identity
from agent_k.ml.sandbox.launcher import launcher_command
from agent_k.ml.sandbox.seccomp import SeccompUnavailable, filter_bpf

SandboxSetting = Literal["auto", "bwrap", "basic"]
SandboxKind = Literal["bwrap", "basic"]


class SandboxUnavailable(Exception):
    """The sandbox the user asked for cannot run here; the message says why."""


@dataclass(frozen=True)
class SandboxChoice:
    kind: SandboxKind
    reason: str | None = None
    """Why candidates do not get bubblewrap (None when they do)."""
    memory_capped: bool = True
    """A memory cgroup caps all of a candidate's processes together (else only each one's address space)."""
    runs_as_root: bool = False
    """The runner is root and candidates get no bubblewrap: they run as root (our own templates only)."""

    @property
    def runs_model_code(self) -> bool:
        return self.kind == "bwrap"


def choose(setting: SandboxSetting, user: str | None = None) -> SandboxChoice:
    """`auto`: bubblewrap where it works, else basic; `bwrap` insists (`SandboxUnavailable`); `basic` forces it.
    A sandbox user that cannot be used is refused whatever the setting (it was asked for by name)."""
    try:
        sandbox_identity(user)
    except SandboxUserError as exc:
        raise SandboxUnavailable(str(exc)) from None
    memory = "memory" in cgroups.available()
    if setting == "basic":
        return SandboxChoice("basic", "AGENT_K_SANDBOX=basic", memory, runs_as_root=os.geteuid() == 0)
    problem = bwrap_problem(user)
    if problem is None:
        return SandboxChoice("bwrap", None, memory)
    if setting == "bwrap":
        raise SandboxUnavailable(f"AGENT_K_SANDBOX=bwrap, but {problem}")
    return SandboxChoice("basic", problem, memory, runs_as_root=os.geteuid() == 0)


def resolve(kind: SandboxKind | None, user: str | None = None) -> SandboxKind:
    """The sandbox a job asking for `kind` gets (None: bubblewrap where it can run here, else basic)."""
    if kind is None:
        return "bwrap" if bwrap_problem(user) is None else "basic"
    return kind


@cache
def bwrap_problem(user: str | None = None) -> str | None:
    """Why bubblewrap cannot sandbox a candidate here, in one line; None when it can. Probed once, the way a
    candidate starts: through the launcher, as the sandbox user when the runner is root, with the filter."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    if any(root.startswith("/sandbox") for root in bwrap.python_roots()):
        return f"the Python environment lives under /sandbox ({sys.prefix}), where the sandbox mounts its own folders"
    try:
        filter_bpf()
        identity = sandbox_identity(user)
    except (SeccompUnavailable, SandboxUserError) as exc:
        return str(exc)
    who = f" as {identity.name}" if identity else ""
    with tempfile.TemporaryDirectory() as empty:
        launch = bwrap.probe_command(Path(empty), staged=identity is not None)
        argv = launcher_command(
            CandidateGroups((), None), launch.argv, memory_mb=4096, cpu_seconds=60, file_size_mb=16, processes=64,
            user=identity.launcher_arg() if identity else None, stage=launch.stage,
        )  # fmt: skip
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=30, check=False, pass_fds=launch.fds, cwd="/",
                env={"PATH": os.defpath, "LANG": "C.UTF-8"},
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap could not be started{who}: {exc}"
        finally:
            launch.close()
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return f"bwrap cannot create its sandbox here{who} ({said}); user namespaces may be disabled"
    return None
