"""Which sandbox a mission's candidates get: bubblewrap where it can run, or the basic one, and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent_k.ml.sandbox import bwrap, cgroups
from agent_k.ml.sandbox.run import SandboxKind

SandboxSetting = Literal["auto", "bwrap", "basic"]


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


def choose(setting: SandboxSetting) -> SandboxChoice:
    """`auto`: bubblewrap where it works, else basic; `bwrap` insists (`SandboxUnavailable`); `basic` forces it."""
    memory = "memory" in cgroups.available()
    if setting == "basic":
        return SandboxChoice("basic", "AGENT_K_SANDBOX=basic", memory)
    problem = bwrap.problem()
    if problem is None:
        return SandboxChoice("bwrap", None, memory)
    if setting == "bwrap":
        raise SandboxUnavailable(f"AGENT_K_SANDBOX=bwrap, but {problem}")
    return SandboxChoice("basic", problem, memory)
