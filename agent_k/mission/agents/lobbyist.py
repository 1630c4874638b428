"""The Lobbyist (Discovery): ranks the competitions that fit the mission's criteria.

Hard criteria (task, metric, size) are applied by our code first; the Lobbyist orders what is left, reading
the catalogue through its tools, and may only name competitions from that list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field
from pydantic_ai import Agent, ModelRetry, RunContext

from agent_k.competition import Competition
from agent_k.events.models import Log
from agent_k.mission.agents.deps import AgentDeps
from agent_k.mission.agents.phase import run_agent, usage_limits
from agent_k.mission.agents.toolbox import phase_agent
from agent_k.mission.context import GraphContext
from agent_k.mission.phases import Phase
from agent_k.mission.state import MissionState

if TYPE_CHECKING:
    from pydantic_ai.models import Model
    from pydantic_ai.run import AgentRunResult


class CompetitionRanking(BaseModel):
    ranking: list[str] = Field(min_length=1, description="competition ids, the one to enter first")
    reason: str = Field(max_length=500, description="why the first one, in a sentence or two")


def build_lobbyist(model: Model, eligible: list[str]) -> Agent[AgentDeps, CompetitionRanking]:
    agent = phase_agent(
        model, name="lobbyist", output_type=CompetitionRanking, instructions=lambda ctx: _instructions(ctx, eligible)
    )

    @agent.output_validator
    def _eligible_only(ranking: CompetitionRanking) -> CompetitionRanking:
        unknown = [c for c in ranking.ranking if c not in eligible]
        if unknown:
            raise ModelRetry(f"not eligible: {unknown}; rank only these: {eligible}")
        return ranking

    return agent


def _instructions(ctx: RunContext[AgentDeps], eligible: list[str]) -> str:
    criteria = ctx.deps.state.criteria.model_dump(exclude_none=True, exclude_defaults=True)
    return (
        "You are the Lobbyist of AGENT-K, an autonomous team entering ML competitions. "
        f"Phase: {ctx.deps.phase.value}. The mission's criteria: {criteria or 'none'}. "
        f"Competitions that fit them: {eligible}. Inspect them with your tools and rank them: the one where a "
        "strong tabular model can do best within the time budget comes first. Answer with ids from that list only."
    )


async def lobbyist_ranking(state: MissionState, mission: GraphContext, matches: list[Competition]) -> list[Competition]:
    """The Lobbyist's order of the eligible competitions, or the workflow's when it does not run."""
    eligible = [c.id for c in matches]

    async def ask(deps: AgentDeps) -> AgentRunResult[CompetitionRanking]:
        assert deps.mission.model is not None
        lobbyist = build_lobbyist(deps.mission.model, eligible)
        return await lobbyist.run("Rank the eligible competitions.", deps=deps, usage_limits=usage_limits(deps))

    ranking = await run_agent(state, mission, Phase.discovery, ask)
    if ranking is None:
        return matches
    by_id = {c.id: c for c in matches}
    chosen = list(dict.fromkeys(ranking.ranking))
    await mission.events.emit(Log(message=f"lobbyist chose {chosen[0]}: {ranking.reason}"), Phase.discovery.value)
    return [by_id[i] for i in chosen] + [c for c in matches if c.id not in chosen]
