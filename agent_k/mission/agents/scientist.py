"""The Scientist (Research): reads the data profile through tools and returns findings and a plan.

Its tools expose the profile the workflow computes (`agent_k.ml.profiling.profile`), so both modes reason
from the same measurements. The plan only orders the model families and may leave columns out; every
candidate it leads to is still measured by our cross-validation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field
from pydantic_ai import Agent, ModelRetry, RunContext

from agent_k.mission.agents.deps import AgentDeps
from agent_k.mission.agents.phase import run_agent, usage_limits
from agent_k.mission.agents.toolbox import findings_of, phase_agent
from agent_k.mission.context import GraphContext
from agent_k.mission.phases import Phase
from agent_k.mission.state import MissionState
from agent_k.ml.recipes import ModelFamily

if TYPE_CHECKING:
    from pydantic_ai.models import Model
    from pydantic_ai.run import AgentRunResult


class ResearchPlan(BaseModel):
    """The Scientist's answer."""

    findings: list[str] = Field(max_length=12, description="observations that matter for modelling, one sentence each")
    model_families: list[ModelFamily] = Field(min_length=1, description="model families to try, most promising first")
    drop_columns: list[str] = Field(default_factory=list, description="feature columns to leave out, if any")


def build_scientist(model: Model) -> Agent[AgentDeps, ResearchPlan]:
    agent = phase_agent(model, name="scientist", output_type=ResearchPlan, instructions=_instructions)

    @agent.output_validator
    def _columns_exist(ctx: RunContext[AgentDeps], plan: ResearchPlan) -> ResearchPlan:
        features = {column.name for column in findings_of(ctx).columns}
        unknown = sorted(set(plan.drop_columns) - features)
        if unknown:
            raise ModelRetry(f"not feature columns: {unknown}; choose among {sorted(features)}")
        if features and set(plan.drop_columns) >= features:
            raise ModelRetry("keep at least one feature column")
        return plan

    return agent


def _instructions(ctx: RunContext[AgentDeps]) -> str:
    state = ctx.deps.state
    competition = state.selected_competition
    findings = state.research_findings
    known = (
        f"{findings.n_train} training rows, {len(findings.columns)} features, "
        f"{len(findings.leakage_suspects)} leakage suspects"
        if findings
        else "nothing yet"
    )
    return (
        "You are the Scientist of AGENT-K, an autonomous team entering an ML competition. "
        f"Phase: {ctx.deps.phase.value}. Competition: {competition.id if competition else '?'} "
        f"({competition.task if competition else '?'}, metric {competition.metric if competition else '?'}). "
        f"Known so far: {known}. Use the tools to study the data (data_shape: free text, the rows' time and whether "
        "the test is a forecast, repeated entities, the target columns), then answer with the findings that matter "
        "and a plan: the model families to try, most promising first, and any columns to leave out "
        "(leaks or identifiers). Do not report scores of your own: candidates are measured by cross-validation."
    )


async def scientist_plan(state: MissionState, mission: GraphContext) -> ResearchPlan | None:
    """The Scientist's plan, or None when the phase runs its workflow path."""

    async def ask(deps: AgentDeps) -> AgentRunResult[ResearchPlan]:
        assert deps.mission.model is not None
        scientist = build_scientist(deps.mission.model)
        return await scientist.run("Study the data and plan the modelling.", deps=deps, usage_limits=usage_limits(deps))

    return await run_agent(state, mission, Phase.research, ask)
