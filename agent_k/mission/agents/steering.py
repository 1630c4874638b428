"""Steering an agent with messages, never hard stops: nudges and the ambiguous-transition guard (docs/agents.md,
"Nudges").

After each model response the tracker counts its reads and actions. An agent that keeps reading without
learning anything new is told to act with what it knows (`exploration.saturation`, then `agent.nudged`). At
80% of the phase's allowance (the moment `budget.warning` marks) it is told to finish, and in the last tenth to
stop exploring and validate. A response that asks for two different phase outcomes is rejected as
`ambiguous_phase_transition` and the model is asked again. The hard stop stays the budget's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models import ModelRequestContext

from agent_k.events.models import AgentNudged, ExplorationSaturation, PhaseTransition, TransitionBlocked
from agent_k.mission.agents.deps import AgentDeps
from agent_k.mission.budget import WARNING_FRACTION
from agent_k.mission.contract import MISSION_CONTRACT

VALIDATE_FRACTION = 0.9
SATURATION_NUDGE = (
    "You have read a lot without acting, and your last reads taught you little that is new. Act now with what "
    "you know: give your answer (or take the action this step needs) instead of reading more."
)
FINISH_NUDGE = "{used:.0%} of this phase's time is used. Finish: give your answer with what you know."
VALIDATE_NUDGE = "This phase's time is nearly over. Stop exploring: check your answer is valid and give it now."
AMBIGUOUS = "ambiguous_phase_transition"


@dataclass
class Steering(AbstractCapability[AgentDeps]):
    async def before_model_request(
        self, ctx: RunContext[AgentDeps], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        deps = ctx.deps
        budget, phase = deps.mission.budget, deps.phase
        allowance = budget.allowance(phase)
        used = budget.used_in_phase(phase) / allowance if allowance > 0 else 1.0
        if used >= WARNING_FRACTION:
            await _nudge(ctx, "finish", FINISH_NUDGE.format(used=min(used, 1.0)))
        if used >= VALIDATE_FRACTION:
            await _nudge(ctx, "validate", VALIDATE_NUDGE)
        return request_context

    async def after_model_request(
        self, ctx: RunContext[AgentDeps], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        deps = ctx.deps
        output_tools = {t.name for t in request_context.model_request_parameters.output_tools}
        calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
        outcomes: set[str] = set()
        reads: list[str] = []
        actions: list[str] = []
        for call in calls:
            signature = f"{call.tool_name}:{json.dumps(call.args_as_dict(), sort_keys=True, default=str)}"
            if call.tool_name in output_tools:
                actions.append(signature)
                outcomes |= deps.outcomes(call.args_as_dict()) if deps.outcomes else set()
                continue
            spec = MISSION_CONTRACT.tool(call.tool_name)
            (actions if spec is not None and spec.kind == "action" else reads).append(signature)
            if spec is not None and spec.advances_to:
                outcomes.add(spec.advances_to)
        if len(outcomes) > 1:
            await deps.events.emit(TransitionBlocked(reason=AMBIGUOUS, outcomes=sorted(outcomes)), deps.phase.value)
            raise ModelRetry(
                f"{AMBIGUOUS}: this response asks for {' and '.join(sorted(outcomes))} at once. Ask for one outcome."
            )
        tracker = deps.tracker
        turn = tracker.observe(reads, actions)
        if turn.stage_changed_from is not None:
            reason = f"first action after {turn.reads} reads this turn, {len(tracker.seen)} distinct reads in all"
            transition = PhaseTransition(
                agent=deps.agent_name, previous=turn.stage_changed_from, entered=tracker.stage, reason=reason
            )
            await deps.events.emit(transition, deps.phase.value)
        settings = deps.mission.settings
        if not turn.acted and tracker.saturated(settings.saturation_reads, settings.saturation_turns):
            if "saturation" not in tracker.nudged:
                saturation = ExplorationSaturation(
                    agent=deps.agent_name, reads=tracker.reads_since_action, stale_turns=tracker.stale_turns
                )
                await deps.events.emit(saturation, deps.phase.value)
            await _nudge(ctx, "saturation", SATURATION_NUDGE)
        return response


async def _nudge(ctx: RunContext[AgentDeps], kind: Literal["saturation", "finish", "validate"], message: str) -> None:
    """Say `message` to the model with its next request, once per run and kind, and record it."""
    deps = ctx.deps
    if kind in deps.tracker.nudged:
        return
    deps.tracker.nudged.add(kind)
    ctx.enqueue(message)
    nudged = AgentNudged(agent=deps.agent_name, kind=kind, message=message)
    await deps.events.emit(nudged, deps.phase.value)
