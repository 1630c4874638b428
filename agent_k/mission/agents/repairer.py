"""The repair agent: a failed workflow step becomes a scoped goal (amphiflow, or auto with a model).

It reads the failure and the files as they are, may try fixes, and answers with a complete solution.py. The
answer is accepted only if our harness cross-validates it: a script that fails is sent back with its error, up
to `AGENT_K_REPAIR_ATTEMPTS` answers. Its score, like every score, is our CV.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field
from pydantic_ai import Agent, ModelRetry, RunContext

from agent_k.events.models import RepairFailed, RepairStarted, RepairSucceeded
from agent_k.mission.agents.deps import AgentDeps
from agent_k.mission.agents.phase import AGENT_FAILURES, cost_usd_of, failure_reason, usage_limits
from agent_k.mission.agents.repair_tools import evaluate_script
from agent_k.mission.agents.toolbox import phase_agent
from agent_k.mission.candidates import ArchivedCandidate
from agent_k.mission.context import GraphContext
from agent_k.mission.lifecycle import book_usage
from agent_k.mission.recovery import RepairGoal, StepError
from agent_k.mission.state import MissionState
from agent_k.store.status import FailureReason

if TYPE_CHECKING:
    from pydantic_ai.models import Model


class RepairedSolution(BaseModel):
    source: str = Field(min_length=1, max_length=200_000, description="the complete solution.py")
    explanation: str = Field(default="", max_length=500, description="what was wrong, in a sentence")


def build_repairer(model: Model, attempts: int) -> Agent[AgentDeps, RepairedSolution]:
    agent = phase_agent(
        model, name="repairer", output_type=RepairedSolution, instructions=_instructions, retries=attempts - 1
    )

    @agent.output_validator
    async def _cross_validated(ctx: RunContext[AgentDeps], answer: RepairedSolution) -> RepairedSolution:
        candidate = await evaluate_script(ctx.deps, answer.source)
        if not candidate.succeeded:
            raise ModelRetry(f"the solution failed our cross-validation: {candidate.error}")
        ctx.deps.repaired = candidate
        return answer

    return agent


async def repair_step(state: MissionState, mission: GraphContext, goal: RepairGoal) -> ArchivedCandidate:
    """The candidate that completes the step, cross-validated; `StepError` (the step's reason) when the repair
    fails too."""
    step, phase = goal.step, goal.step.phase
    await mission.events.emit(RepairStarted(step=step.name, error=goal.error[:500], attempt=1), phase.value)
    try:
        if mission.model is None:
            raise StepError(FailureReason.repair_failed, mission.model_error or "no model configured")
        deps = AgentDeps(phase=phase, state=state, mission=mission, repair=goal)
        repairer = build_repairer(mission.model, mission.settings.repair_attempts)
        try:
            result = await repairer.run(goal.prompt(), deps=deps, usage_limits=usage_limits(deps))
        except AGENT_FAILURES as exc:
            raise StepError(FailureReason.repair_failed, failure_reason(exc)) from exc
        usage = result.usage
        cost = cost_usd_of(result.new_messages())
        book_usage(state, phase, tokens=usage.total_tokens or 0, requests=usage.requests, cost_usd=cost)
        assert deps.repaired is not None  # the output validator accepted only a cross-validated script
    except StepError as failed:
        await mission.events.emit(RepairFailed(step=step.name, error=failed.detail[:500]), phase.value)
        raise StepError(goal.reason, f"{goal.error}; the repair failed: {failed.detail}") from None
    repaired = deps.repaired
    if state.phase_history and state.phase_history[-1].phase == phase:
        state.phase_history[-1].repaired = step.name
    succeeded = RepairSucceeded(step=step.name, candidate_key=repaired.key, cv_score=repaired.cv)
    await mission.events.emit(succeeded, phase.value)
    return repaired


def _instructions(ctx: RunContext[AgentDeps]) -> str:
    competition = ctx.deps.state.selected_competition
    assert competition is not None, "a step is repaired after Discovery chose the competition"
    goal = ctx.deps.repair
    scope = f"step '{goal.step.name}' of the {goal.step.phase.value} phase" if goal else "a failed step"
    return (
        "You are the repair agent of AGENT-K, an autonomous team in an ML competition. "
        f"Competition: {competition.id} (target '{competition.target}', id column '{competition.id_column}', "
        f"metric {competition.metric}). "
        f"You repair {scope}: resolve its error and complete its intent, nothing beyond. Answer with a complete "
        "solution.py run as `python solution.py --data DIR --out FILE`: it trains on DIR/train.csv and writes a "
        "prediction for every id of DIR/test.csv in the format of the competition's sample submission. The mission "
        "cross-validates it with its own harness; scores you state are ignored."
    )
