"""Per-candidate cgroups: `pids` caps how many tasks a candidate may create and finds every one of them (even
those that left the process group with setsid) so they can all be killed; `memory` caps the memory of all its
processes together; `cpu` caps the CPU time they take together to the cores it was given (a fork bomb of
spinning processes gets those cores, not the machine). cgroup v1 keeps each controller in its own tree, v2 in
one; both are handled."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

log = logging.getLogger(__name__)

_ROOT = Path("/sys/fs/cgroup")
STALE_AFTER_S = 60.0
CONTROLLERS = ("pids", "memory", "cpu")
CPU_PERIOD_US = 100_000
WEIGHT_V1, WEIGHT_V2 = 1024, 100
"""The scheduler's weight of one process (cgroup v1 `cpu.shares`, v2 `cpu.weight`). A candidate's group weighs as
many processes as it has cores, and all candidates' parent as many as the machine has: grouping them must not
leave a mission's candidates, together, the weight of one busy process elsewhere on the host."""


@dataclass(frozen=True)
class CandidateGroups:
    """The groups one candidate runs in (a v2 group serves both controllers)."""

    paths: tuple[Path, ...]
    memory: Path | None
    """The group whose memory limit binds, or None where none could be made."""

    def oom_kills(self) -> int:
        """How many of the candidate's processes the kernel killed for going over its memory limit."""
        if self.memory is None:
            return 0
        counters = _read(self.memory / "memory.events") or _read(self.memory / "memory.oom_control")  # v2, v1
        for line in counters.splitlines():
            name, _, count = line.partition(" ")
            if name == "oom_kill":
                return int(count)
        return 0

    def kill(self) -> None:
        """SIGKILL every process in the groups (those that left the process group with setsid too)."""
        for group in self.paths:
            _kill_members(group)

    def peak_mb(self) -> float | None:
        """The most memory all of the candidate's processes held at once, where the kernel records it."""
        if self.memory is None:
            return None
        peak = _read(self.memory / "memory.peak") or _read(self.memory / "memory.max_usage_in_bytes")  # v2, v1
        return round(int(peak) / 2**20, 1) if peak.strip().isdigit() else None


@cache
def _parents() -> dict[str, Path]:
    """Our own folder in each writable hierarchy, by controller; empty where we may not create groups."""
    parents: dict[str, Path] = {}
    unified = _read(_ROOT / "cgroup.controllers").split()
    for controller in CONTROLLERS:
        if (_ROOT / controller / "cgroup.procs").exists():  # v1: a tree per controller
            root, v2 = _ROOT / controller, False
        elif controller in unified:
            root, v2 = _ROOT, True
        else:
            continue
        parent = root / "agent-k"
        try:
            parent.mkdir(exist_ok=True)
            if v2:
                (parent / "cgroup.subtree_control").write_text(f"+{controller}")
            if controller == "cpu":
                _weigh(parent, os.cpu_count() or 1)
        except OSError:
            continue
        parents[controller] = parent
    missing = [c for c in CONTROLLERS if c not in parents]
    if missing:
        log.warning("no writable %s cgroup here; those limits fall back to rlimits", " and ".join(missing))
    return parents


def available() -> frozenset[str]:
    """The controllers a candidate can be limited by here."""
    return frozenset(_parents())


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _kill_members(group: Path, wait_s: float = 2.0) -> None:
    """SIGKILL every member, then wait a little for them to leave (orphans leave once init reaps them)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        pids = [int(p) for p in _read(group / "cgroup.procs").split()]
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _sweep(parent: Path) -> None:
    """Remove groups an earlier candidate left because its zombies outlived the wait. A group is stale only
    when empty *and* old: a fresh one is empty until its launcher joins it (parallel candidates race here)."""
    cutoff = time.time() - STALE_AFTER_S
    for group in parent.glob("candidate-*"):
        with contextlib.suppress(OSError):
            if group.stat().st_mtime < cutoff and not _read(group / "cgroup.procs").split():
                group.rmdir()


def _weigh(group: Path, processes: float) -> None:
    """Give `group` the scheduler's weight of this many processes."""
    if (group / "cpu.weight").exists():  # v2
        (group / "cpu.weight").write_text(str(min(10_000, max(1, round(processes * WEIGHT_V2)))))
    else:
        (group / "cpu.shares").write_text(str(max(2, round(processes * WEIGHT_V1))))


def _configure(group: Path, controller: str, max_tasks: int, memory_bytes: int, cpus: float) -> None:
    if controller == "pids":
        (group / "pids.max").write_text(str(max_tasks))
        return
    if controller == "cpu":
        quota = max(1000, round(cpus * CPU_PERIOD_US))
        if (group / "cpu.max").exists():  # v2
            (group / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
        else:
            (group / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(quota))
        _weigh(group, cpus)
        return
    if (group / "memory.max").exists():  # v2: no swap either, so the limit is the limit
        (group / "memory.max").write_text(str(memory_bytes))
        with contextlib.suppress(OSError):
            (group / "memory.swap.max").write_text("0")
        return
    (group / "memory.limit_in_bytes").write_text(str(memory_bytes))
    with contextlib.suppress(OSError):  # only where swap accounting is on
        (group / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))


@contextlib.contextmanager
def candidate_groups(max_tasks: int, memory_mb: int, cpus: float = 1.0) -> Iterator[CandidateGroups]:
    """Fresh groups allowing at most `max_tasks` tasks, `memory_mb` of memory and `cpus` cores of CPU time; killed
    and removed on exit."""
    name = f"candidate-{uuid.uuid4().hex[:12]}"
    made: dict[Path, set[str]] = {}
    for controller, parent in _parents().items():
        group = parent / name
        try:
            if group not in made:
                _sweep(parent)
                group.mkdir()
                made[group] = set()
            _configure(group, controller, max_tasks, memory_mb * 1024 * 1024, cpus)
            made[group].add(controller)
        except OSError as exc:
            log.warning("cannot set up a %s cgroup: %s", controller, exc)
    memory = next((g for g, controllers in made.items() if "memory" in controllers), None)
    try:
        yield CandidateGroups(paths=tuple(made), memory=memory)
    finally:
        for group in made:
            _kill_members(group)
        for group in made:
            with contextlib.suppress(OSError):
                group.rmdir()
