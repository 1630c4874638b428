"""The types of a phase contract: phases, their transitions and budget shares, tools, and suppressions.

Phase names are plain strings here, so a contract that names a phase the mission does not have can still be
read and analysed (and the analysis says so), instead of failing to load.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

END = "end"
"""The transition that ends the mission."""


class ErrorStrategy(StrEnum):
    """What a phase does when one of its steps fails (docs/agents.md, "Error strategies")."""

    raise_ = "raise"
    """The mission fails with the step's reason."""
    ignore = "ignore"
    """The failure is recorded and the mission goes on where the graph allows it."""
    retry = "retry"
    """The step runs again, a few times, with backoff."""
    repair = "repair"
    """An agent gets a goal scoped to the step: resolve the error and complete the step's intent."""


class Precondition(StrEnum):
    """Mission facts a tool may need before it is offered (`precondition_not_met` otherwise)."""

    data_profiled = "data_profiled"
    candidates_exist = "candidates_exist"


class FindingCode(StrEnum):
    missing_initial_phase = "missing_initial_phase"
    missing_terminal_phase = "missing_terminal_phase"
    unreachable_phase = "unreachable_phase"
    dead_phase = "dead_phase"
    cycle_without_exit = "cycle_without_exit"
    unknown_transition = "unknown_transition"
    tool_for_unknown_phase = "tool_for_unknown_phase"


class ToolSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    phases: tuple[str, ...] = ()
    """Where the tool may be used; empty: every phase."""
    kind: Literal["read", "action"] = "read"
    """Reads and inspections, or actions (proposals, runs, submissions): the tracker's nudges count them."""
    requires: tuple[Precondition, ...] = ()
    spends: bool = False
    """It runs candidates or models: removed once the mission's cost limit is reached."""
    advances_to: str | None = None
    """The phase outcome calling it asks for (a response asking for two different ones is ambiguous)."""


class PhaseSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    next: tuple[str, ...]
    """Legal transitions: phase names, or `end`."""
    deadline: float = Field(gt=0, le=1)
    """The share of the mission's budget by which the phase must end; what it leaves flows on."""
    workflow: bool = True
    """Whether a deterministic path runs the phase."""
    agent: str | None = None
    """The agent that drives the phase in agent mode (None: workflow only, repaired by the repair agent)."""
    strategy: ErrorStrategy = ErrorStrategy.raise_
    """The default error strategy of its steps (settings may override it)."""


class Suppression(BaseModel):
    """A finding the contract's authors accept, and why; the reason is printed with it."""

    model_config = ConfigDict(frozen=True)

    finding: FindingCode
    subject: str
    reason: str = Field(min_length=10)


class PhaseContract(BaseModel):
    model_config = ConfigDict(frozen=True)

    initial: str
    phases: tuple[PhaseSpec, ...]
    tools: tuple[ToolSpec, ...] = ()
    suppress: tuple[Suppression, ...] = ()

    def phase(self, name: str) -> PhaseSpec:
        return next(p for p in self.phases if p.name == name)

    def tool(self, name: str) -> ToolSpec | None:
        return next((t for t in self.tools if t.name == name), None)

    def allows(self, source: str, target: str) -> bool:
        return any(p.name == source and target in p.next for p in self.phases)

    def tools_of(self, phase: str) -> list[ToolSpec]:
        return [t for t in self.tools if not t.phases or phase in t.phases]
