"""Which sandbox a mission's candidates get: bubblewrap where it can run, or the basic one, and why.

Probes run the way a candidate starts (through the launcher, as the sandbox user when the runner is root). A
probe that fails is tried again a few times, and its verdict is kept only for PROBE_TTL_S: a bubblewrap that
could not make its namespaces once, on a busy machine, is not written off for the rest of the process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent_k.sandbox import basic, bwrap, cgroups
from agent_k.sandbox.cgroups import CandidateGroups
from agent_k.sandbox.identity import SandboxUserError, sandbox_identity
from agent_k.sandbox.launcher import launcher_command
from agent_k.sandbox.seccomp import SeccompUnavailable, filter_bpf, filter_fd

PROBE_ATTEMPTS = 3
PROBE_BACKOFF_S = 0.3
PROBE_TTL_S = 30.0
"""How long a failed probe's verdict holds (a working sandbox's holds for good)."""

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

    @property
    def runs_model_code(self) -> bool:
        return self.kind == "bwrap"


def choose(setting: SandboxSetting, user: str | None = None) -> SandboxChoice:
    """`auto`: bubblewrap where it works, else basic; `bwrap` insists (`SandboxUnavailable`); `basic` forces it.
    A sandbox user that cannot be used is refused whatever the setting (it was asked for by name), and so is a
    basic sandbox that cannot drop a root runner's candidates to it: nothing of a candidate runs as root."""
    try:
        sandbox_identity(user)
    except SandboxUserError as exc:
        raise SandboxUnavailable(str(exc)) from None
    memory = "memory" in cgroups.available()
    problem = None if setting == "basic" else bwrap_problem(user)
    if problem is None and setting != "basic":
        return SandboxChoice("bwrap", None, memory)
    if setting == "bwrap":
        raise SandboxUnavailable(f"AGENT_K_SANDBOX=bwrap, but {problem}")
    unusable = basic_problem(user)
    if unusable is not None:
        raise SandboxUnavailable(f"{problem or 'AGENT_K_SANDBOX=basic'}, and {unusable}")
    return SandboxChoice("basic", problem or "AGENT_K_SANDBOX=basic", memory)


def resolve(kind: SandboxKind | None, user: str | None = None) -> SandboxKind:
    """The sandbox a job asking for `kind` gets (None: bubblewrap where it can run here, else basic)."""
    if kind is None:
        return "bwrap" if bwrap_problem(user) is None else "basic"
    return kind


class _Verdicts:
    """Probe results by (sandbox, user): a working sandbox's and a lasting problem's for good, a failed probe's for
    PROBE_TTL_S (a failed probe is tried PROBE_ATTEMPTS times first)."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str | None], tuple[str | None, float]] = {}
        self._lock = threading.Lock()

    def get(
        self, kind: str, user: str | None, lasting: Callable[[], str | None], probe: Callable[[], str | None]
    ) -> str | None:
        with self._lock:
            known = self._found.get((kind, user))
            if known is not None and (known[1] == float("inf") or time.monotonic() - known[1] < PROBE_TTL_S):
                return known[0]
            problem = lasting()
            if problem is not None:
                self._found[(kind, user)] = (problem, float("inf"))
                return problem
            for attempt in range(PROBE_ATTEMPTS):
                problem = probe()
                if problem is None:
                    break
                if attempt + 1 < PROBE_ATTEMPTS:
                    time.sleep(PROBE_BACKOFF_S * 2**attempt)
            self._found[(kind, user)] = (problem, float("inf") if problem is None else time.monotonic())
            return problem


_verdicts = _Verdicts()


def bwrap_problem(user: str | None = None) -> str | None:
    """Why bubblewrap cannot sandbox a candidate here, in one line; None when it can."""
    return _verdicts.get("bwrap", user, lambda: _bwrap_missing(user), lambda: _probe_bwrap(user))


def basic_problem(user: str | None = None) -> str | None:
    """Why the basic sandbox cannot run a candidate here, in one line; None when it can. As root that means
    making its namespaces and root and dropping to the sandbox user; otherwise it always can."""
    if os.geteuid() != 0:
        return None
    return _verdicts.get("basic", user, lambda: _identity_problem(user), lambda: _probe_basic(user))


def _identity_problem(user: str | None) -> str | None:
    """What keeps the sandbox user from running candidates at all."""
    try:
        sandbox_identity(user)
    except SandboxUserError as exc:
        return str(exc)
    return None


def _unreadable_problem(user: str | None) -> str | None:
    """Bubblewrap binds the Python environment as it is: the sandbox user must be able to read it."""
    identity = sandbox_identity(user)
    unreadable = basic.unreadable_roots()
    if identity is None or not unreadable:
        return None
    root, mode = unreadable[0]
    return (
        f"candidates run as {identity.name}, who cannot read {root} (mode {mode:04o}): "
        f"make the Python environment readable to others (chmod -R o+rX {root})"
    )


def _bwrap_missing(user: str | None) -> str | None:
    """What no second try can mend."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    if any(root.startswith("/sandbox") for root in bwrap.python_roots()):
        return f"the Python environment lives under /sandbox ({sys.prefix}), where the sandbox mounts its own folders"
    try:
        filter_bpf()
    except SeccompUnavailable as exc:
        return str(exc)
    return _identity_problem(user) or _unreadable_problem(user)


def _probe_bwrap(user: str | None) -> str | None:
    identity = sandbox_identity(user)
    who = f" as {identity.name}" if identity else ""
    with tempfile.TemporaryDirectory() as empty:
        launch = bwrap.probe_command(Path(empty), staged=identity is not None)
        argv = launcher_command(
            CandidateGroups((), None), launch.argv, memory_mb=4096, cpu_seconds=60, file_size_mb=16, processes=64,
            user=identity.launcher_arg() if identity else None, stage=launch.stage,
        )  # fmt: skip
        said = _probe(argv, launch)
    if said is not None:
        return f"bwrap cannot create its sandbox here{who} ({said}); user namespaces may be disabled"
    return None


def _probe_basic(user: str | None) -> str | None:
    """As root: the basic sandbox's namespaces and root, and the drop to the sandbox user."""
    identity = sandbox_identity(user)
    assert identity is not None
    with tempfile.TemporaryDirectory() as empty:
        rootfs = basic.rootfs(script=None, data=Path(empty), disk_bytes=1 << 20, identity=identity)
        try:
            launch = bwrap.Launch(argv=[bwrap.python(), "-I", "-S", "-c", "pass"], fds=[filter_fd()])
        except SeccompUnavailable:
            launch = bwrap.Launch(argv=[bwrap.python(), "-I", "-S", "-c", "pass"])
        argv = launcher_command(
            CandidateGroups((), None), launch.argv, memory_mb=4096, cpu_seconds=60, file_size_mb=16, processes=64,
            user=identity.launcher_arg(), rootfs=rootfs, seccomp=launch.fds[0] if launch.fds else None,
        )  # fmt: skip
        said = _probe(argv, launch)
    if said is None:
        return None
    unreadable = "".join(f"; {root} is its owner's alone (mode {mode:04o})" for root, mode in basic.unreadable_roots())
    return f"the basic sandbox cannot run candidates as {identity.name} here ({said}){unreadable}"


def _probe(argv: list[str], launch: bwrap.Launch) -> str | None:
    """Run a probe; None when it worked, else its last line of stderr."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=30, check=False, pass_fds=launch.fds, cwd="/",
            env={"PATH": os.defpath, "LANG": "C.UTF-8"},
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not be started: {exc}"
    finally:
        launch.close()
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
    return None
