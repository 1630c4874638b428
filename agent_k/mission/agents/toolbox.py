"""The tools agents may use, each scoped to its phases (`PhaseTools`).

They read what the workflow measured (the profile, the platform's catalogue), so agent and workflow modes
reason from the same facts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic_ai import Agent, ModelRetry, RunContext

from agent_k.competition.research import ResearchFindings
from agent_k.mission.agents.deps import AgentDeps
from agent_k.mission.agents.tools import PhaseTools
from agent_k.mission.candidates import archive
from agent_k.mission.phases import Phase
from agent_k.ml.recipes import Recipe
from agent_k.platforms.base import CompetitionNotFound
from agent_k.store.status import CandidateStatus

if TYPE_CHECKING:
    from pydantic_ai.models import Model

Output = TypeVar("Output")


def phase_agent(
    model: Model, *, name: str, output_type: type[Output], instructions: Callable[[RunContext[AgentDeps]], str]
) -> Agent[AgentDeps, Output]:
    """An agent with every mission tool, narrowed to its phase before each model request."""
    tools = mission_tools()
    return Agent(
        model,
        deps_type=AgentDeps,
        output_type=output_type,
        instructions=instructions,
        toolsets=[tools.toolset()],
        capabilities=tools.capabilities(),
        retries=2,
        name=name,
    )


def findings_of(ctx: RunContext[AgentDeps]) -> ResearchFindings:
    findings = ctx.deps.state.research_findings
    assert findings is not None, "Research profiles the data before the Scientist runs"
    return findings


def mission_tools() -> PhaseTools:
    """Every tool of every phase; each agent gets them all, narrowed to its phase before each request."""
    tools = PhaseTools()

    @tools.tool()
    def mission_status(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """Where the mission stands: phase, competition, seconds left in this phase, phases done."""
        state = ctx.deps.state
        return {
            "phase": ctx.deps.phase.value,
            "competition": state.competition_id,
            "phases_completed": [phase.value for phase in state.phases_completed],
            "phase_seconds_left": round(ctx.deps.mission.budget.remaining(ctx.deps.phase), 1),
        }

    @tools.tool(Phase.discovery)
    async def list_competitions(ctx: RunContext[AgentDeps]) -> list[dict[str, Any]]:
        """Competitions on the platform: id, title, task, metric and sizes."""
        competitions = await ctx.deps.mission.platform.list_competitions()
        keys = ("id", "title", "task", "metric", "n_train", "n_test", "n_features", "tags")
        return [competition.model_dump(include=set(keys)) for competition in competitions]

    @tools.tool(Phase.discovery)
    async def inspect_competition(ctx: RunContext[AgentDeps], competition_id: str) -> dict[str, Any]:
        """One competition in full, with its description."""
        try:
            competition = await ctx.deps.mission.platform.get_competition(competition_id)
        except CompetitionNotFound as exc:
            raise ModelRetry(str(exc)) from exc
        return competition.model_dump(exclude={"url"})

    @tools.tool(Phase.research)
    def column_summaries(ctx: RunContext[AgentDeps]) -> list[dict[str, Any]]:
        """Every feature column: kind, missing share, distinct values, and the CV score it reaches alone."""
        return [column.model_dump(exclude_none=True) for column in findings_of(ctx).columns]

    @tools.tool(Phase.research)
    def target_stats(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """The target: task, class balance or distribution, and the competition metric."""
        competition = ctx.deps.state.selected_competition
        return {
            **findings_of(ctx).target.model_dump(),
            "metric": competition.metric if competition else None,
            "rows": findings_of(ctx).n_train,
            "test_rows": findings_of(ctx).n_test,
        }

    @tools.tool(Phase.research)
    def leakage_checks(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """Columns that look like ids, and columns that alone predict the target suspiciously well."""
        findings = findings_of(ctx)
        return {
            "id_like": findings.id_like,
            "suspects": [suspect.model_dump() for suspect in findings.leakage_details],
        }

    @tools.tool(Phase.research)
    def drift(ctx: RunContext[AgentDeps]) -> list[dict[str, Any]]:
        """Train-versus-test drift per column (KS for numbers, total variation for categories), largest first."""
        results = sorted(findings_of(ctx).drift, key=lambda d: d.statistic, reverse=True)
        return [result.model_dump() for result in results]

    @tools.tool(Phase.research)
    def validation_scheme(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """The cross-validation scheme chosen for this data, and the families the profile recommends."""
        findings = findings_of(ctx)
        return {"cv": findings.cv.model_dump(), "recommended_families": findings.model_families}

    @tools.tool(Phase.evolution)
    async def candidates_so_far(ctx: RunContext[AgentDeps], limit: int = 10) -> list[dict[str, Any]]:
        """The best evaluated candidates (by our cross-validation), best first, and the latest failures."""
        competition = ctx.deps.state.selected_competition
        assert competition is not None
        everything = await archive(ctx.deps.mission, ctx.deps.state)
        done = [c for c in everything if c.succeeded and c.cv is not None]
        done.sort(key=lambda c: c.cv or 0.0, reverse=competition.maximize)
        failed = [c for c in everything if c.status == CandidateStatus.failed][-3:]
        return [
            {"key": c.key, "solution": c.recipe.summary(), "cv": c.cv, "status": c.status, "error": c.error}
            for c in [*done[: max(1, min(limit, 30))], *failed]
        ]

    @tools.tool(Phase.evolution)
    async def read_solution(ctx: RunContext[AgentDeps], candidate_key: str) -> dict[str, Any]:
        """A candidate's solution.py source and, for a recipe, the recipe itself (to edit either)."""
        by_key = {c.key: c for c in await archive(ctx.deps.mission, ctx.deps.state)}
        if candidate_key not in by_key:
            raise ModelRetry(f"no candidate '{candidate_key}'; call candidates_so_far for the keys")
        candidate = by_key[candidate_key]
        recipe = candidate.recipe.model_dump(mode="json") if isinstance(candidate.recipe, Recipe) else None
        return {"source": candidate.source(), "recipe": recipe}

    return tools
