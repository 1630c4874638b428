"""What every agent's tools can reach: the phase, the mission's state and context, and the event log."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_k.events.emitter import EventEmitter
from agent_k.mission.agents.tracker import PhaseTracker
from agent_k.mission.candidates import ArchivedCandidate
from agent_k.mission.context import GraphContext
from agent_k.mission.contract import MISSION_CONTRACT
from agent_k.mission.phases import Phase
from agent_k.mission.recovery import RepairGoal
from agent_k.mission.state import MissionState


@dataclass
class AgentDeps:
    phase: Phase
    state: MissionState
    mission: GraphContext
    refused_calls: set[str] = field(default_factory=set)
    """Tool calls already refused and recorded, so each is recorded once."""
    removed: dict[str, str] = field(default_factory=dict)
    """Tools narrowed away at the last model request, with the reason code."""
    recorded_removals: set[str] = field(default_factory=set)
    tracker: PhaseTracker = field(default_factory=PhaseTracker)
    """What the agent has read and done in this run: the nudges are taken from it."""
    repair: RepairGoal | None = None
    """The failed step a repair agent works on (None for the phase agents)."""
    repaired: ArchivedCandidate | None = None
    """The repair's cross-validated candidate, once its answer is accepted."""
    outcomes: Callable[[dict[str, Any]], set[str]] | None = None
    """The phase outcomes an answer (the output tool's arguments) asks for, where an answer can ask for more
    than one (the Evolver's: go on searching, or finish)."""

    @property
    def agent_name(self) -> str:
        return "repairer" if self.repair else MISSION_CONTRACT.phase(self.phase.value).agent or "agent"

    @property
    def events(self) -> EventEmitter:
        return self.mission.events
