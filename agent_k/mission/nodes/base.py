"""`PhaseNode`: what every phase node shares (its phase name and event helper)."""

from __future__ import annotations

from typing import ClassVar

from pydantic_graph import BaseNode, End, GraphRunContext

from agent_k.events.models import EventData
from agent_k.mission.context import GraphContext
from agent_k.mission.phases import Phase
from agent_k.mission.state import MissionResult, MissionState
from agent_k.store.status import FailureReason

PhaseContext = GraphRunContext[MissionState, GraphContext]


class PhaseNode(BaseNode[MissionState, GraphContext, MissionResult]):
    phase: ClassVar[Phase]
    has_agent: ClassVar[bool] = False
    """Whether the phase has an agent path; it runs in agent mode when a model is configured."""

    def wants_agent(self, state: MissionState) -> bool:
        """Whether this run of the phase has anything for its agent to decide."""
        return self.has_agent

    async def emit(self, ctx: PhaseContext, data: EventData) -> None:
        await ctx.deps.events.emit(data, self.phase.value)

    @staticmethod
    def fail(ctx: PhaseContext, reason: FailureReason, detail: str) -> End[MissionResult]:
        """End the mission as failed with a reason code; the runner records the phase as failed."""
        detail = ctx.deps.scrub(detail)
        ctx.state.errors.append(f"{reason}: {detail}")
        return End(MissionResult.from_state(ctx.state, error=reason, detail=detail))
