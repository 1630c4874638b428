"""What every agent's tools can reach: the phase, the mission's state and context, and the event log."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_k.events.emitter import EventEmitter
from agent_k.mission.context import GraphContext
from agent_k.mission.phases import Phase
from agent_k.mission.state import MissionState


@dataclass
class AgentDeps:
    phase: Phase
    state: MissionState
    mission: GraphContext
    refused_calls: set[str] = field(default_factory=set)
    """Tool calls already refused and recorded, so each is recorded once."""

    @property
    def events(self) -> EventEmitter:
        return self.mission.events
