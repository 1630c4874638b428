"""The tools agents may use; where each may be used, and why it is removed elsewhere, is the phase contract's
(`agent_k.mission.contract`).

They read what the workflow measured (the profile, the platform's catalogue), so agent and workflow modes
reason from the same facts, and they give summaries first, details per item on request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic_ai import Agent, ModelRetry, RunContext

from agent_k.competition.research import ResearchFindings
from agent_k.mission.agents.deps import AgentDeps
from agent_k.mission.agents.disclosure import candidate_table, column_line, research_findings
from agent_k.mission.agents.disclosure import data_shape as shape_of
from agent_k.mission.agents.repair_tools import register_repair_tools
from agent_k.mission.agents.steering import Steering
from agent_k.mission.agents.tools import PhaseTools
from agent_k.mission.candidates import archive
from agent_k.ml.recipes import Recipe
from agent_k.platforms.base import CompetitionNotFound

if TYPE_CHECKING:
    from pydantic_ai.models import Model

Output = TypeVar("Output")


def phase_agent(
    model: Model,
    *,
    name: str,
    output_type: type[Output],
    instructions: Callable[[RunContext[AgentDeps]], str],
    retries: int = 2,
) -> Agent[AgentDeps, Output]:
    """An agent with every mission tool, narrowed by the phase contract before each model request, and steered
    by nudges and the ambiguous-transition guard."""
    tools = mission_tools()
    return Agent(
        model,
        deps_type=AgentDeps,
        output_type=output_type,
        instructions=instructions,
        toolsets=[tools.toolset()],
        capabilities=[*tools.capabilities(), Steering()],
        retries=retries,
        name=name,
    )


def findings_of(ctx: RunContext[AgentDeps]) -> ResearchFindings:
    findings = ctx.deps.state.research_findings
    assert findings is not None, "the contract offers this tool only once the data is profiled"
    return findings


def mission_tools() -> PhaseTools:
    """Every tool of every phase; each agent gets them all, narrowed by the contract before each request."""
    tools = PhaseTools()

    @tools.tool
    def mission_status(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """Where the mission stands: phase, competition, seconds left in this phase, phases done."""
        state = ctx.deps.state
        return {
            "phase": ctx.deps.phase.value,
            "competition": state.competition_id,
            "phases_completed": [phase.value for phase in state.phases_completed],
            "phase_seconds_left": round(ctx.deps.mission.budget.remaining(ctx.deps.phase), 1),
        }

    @tools.tool
    async def list_competitions(ctx: RunContext[AgentDeps]) -> list[dict[str, Any]]:
        """Competitions on the platform: id, title, task, metric and sizes."""
        competitions = await ctx.deps.mission.platform.list_competitions()
        keys = ("id", "title", "task", "metric", "n_train", "n_test", "n_features", "tags")
        return [competition.model_dump(include=set(keys)) for competition in competitions]

    @tools.tool
    async def inspect_competition(ctx: RunContext[AgentDeps], competition_id: str) -> dict[str, Any]:
        """One competition in full, with its description."""
        try:
            competition = await ctx.deps.mission.platform.get_competition(competition_id)
        except CompetitionNotFound as exc:
            raise ModelRetry(str(exc)) from exc
        return competition.model_dump(exclude={"url"})

    @tools.tool
    def column_summaries(ctx: RunContext[AgentDeps]) -> list[str]:
        """One line per feature column: kind, missing share, distinct values, the CV score it reaches alone.
        Call column_details for one column's full statistics."""
        return [column_line(column) for column in findings_of(ctx).columns]

    @tools.tool
    def column_details(ctx: RunContext[AgentDeps], column: str) -> dict[str, Any]:
        """One column in full: its profile, its drift between train and test, and whether it leaks."""
        findings = findings_of(ctx)
        profile = next((c for c in findings.columns if c.name == column), None)
        if profile is None:
            raise ModelRetry(f"no feature column '{column}'; column_summaries lists them")
        drift = next((d.model_dump() for d in findings.drift if d.column == column), None)
        leak = next((s.model_dump() for s in findings.leakage_details if s.column == column), None)
        return {**profile.model_dump(), "drift": drift, "leakage": leak, "id_like": column in findings.id_like}

    @tools.tool
    def target_stats(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """The target: task, class balance or distribution, and the competition metric."""
        competition = ctx.deps.state.selected_competition
        return {
            **findings_of(ctx).target.model_dump(),
            "metric": competition.metric if competition else None,
            "target_columns": competition.target_columns if competition else None,
            "rows": findings_of(ctx).n_train,
            "test_rows": findings_of(ctx).n_test,
        }

    @tools.tool
    def leakage_checks(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """Columns that look like ids, and columns that alone predict the target suspiciously well."""
        findings = findings_of(ctx)
        return {
            "id_like": findings.id_like,
            "suspects": [suspect.model_dump() for suspect in findings.leakage_details],
        }

    @tools.tool
    def drift(ctx: RunContext[AgentDeps]) -> list[dict[str, Any]]:
        """Train-versus-test drift per column (KS for numbers, total variation for categories), largest first."""
        results = sorted(findings_of(ctx).drift, key=lambda d: d.statistic, reverse=True)
        return [result.model_dump() for result in results]

    @tools.tool
    def validation_scheme(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """The cross-validation scheme chosen for this data, and the families the profile recommends."""
        findings = findings_of(ctx)
        return {"cv": findings.cv.model_dump(), "recommended_families": findings.model_families}

    @tools.tool
    def data_shape(ctx: RunContext[AgentDeps]) -> dict[str, Any]:
        """The data's shape: free-text columns, the rows' time (a forecast? its series keys, horizon, season),
        repeated entities and whether folds keep them whole, the target columns, and the folds that follow."""
        return shape_of(findings_of(ctx), ctx.deps.state.selected_competition)

    @tools.tool
    def findings_summary(ctx: RunContext[AgentDeps]) -> list[str]:
        """Research's findings, one numbered line each; finding_details(n) gives one in full."""
        return [f"{n}: {headline}" for n, (headline, _) in enumerate(research_findings(findings_of(ctx)))]

    @tools.tool
    def finding_details(ctx: RunContext[AgentDeps], number: int) -> dict[str, Any]:
        """One of Research's findings in full (its number from findings_summary)."""
        findings = research_findings(findings_of(ctx))
        if not 0 <= number < len(findings):
            raise ModelRetry(f"no finding {number}; findings_summary numbers them 0 to {len(findings) - 1}")
        return findings[number][1]

    @tools.tool
    async def candidates_so_far(ctx: RunContext[AgentDeps], limit: int = 10) -> dict[str, Any]:
        """The best candidates and the latest generation's (key, family, CV, status), with older generations
        summarised; candidate_details(key) gives one in full."""
        competition = ctx.deps.state.selected_competition
        assert competition is not None
        return candidate_table(await archive(ctx.deps.mission, ctx.deps.state), competition, limit)

    @tools.tool
    async def candidate_details(ctx: RunContext[AgentDeps], candidate_key: str) -> dict[str, Any]:
        """One candidate in full: its recipe (to edit it), its solution.py source, its fold scores and error."""
        by_key = {c.key: c for c in await archive(ctx.deps.mission, ctx.deps.state)}
        if candidate_key not in by_key:
            raise ModelRetry(f"no candidate '{candidate_key}'; call candidates_so_far for the keys")
        candidate = by_key[candidate_key]
        recipe = candidate.recipe.model_dump(mode="json") if isinstance(candidate.recipe, Recipe) else None
        return {
            "key": candidate.key,
            "recipe": recipe,
            "source": candidate.source(),
            "fold_scores": candidate.fold_scores,
            "status": candidate.status,
            "error": candidate.error,
        }

    register_repair_tools(tools)
    return tools
