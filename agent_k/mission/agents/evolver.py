"""The Evolver (Evolution): proposes new candidates, as recipe edits or as edits of a candidate's solution.py.

Its proposals join the workflow's in one population: each is evaluated in the same sandbox, an edited script
through the harness that withholds the held-out labels, and archived beside the rest. Its answers carry no
score: fitness is whatever our cross-validation measures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field
from pydantic_ai import Agent, ModelRetry, RunContext

from agent_k.events.models import Log
from agent_k.mission.agents.deps import AgentDeps
from agent_k.mission.agents.phase import run_agent, usage_limits
from agent_k.mission.agents.toolbox import phase_agent
from agent_k.mission.candidates import ArchivedCandidate, archive
from agent_k.mission.context import GraphContext
from agent_k.mission.phases import Mode, Phase
from agent_k.mission.state import MissionState
from agent_k.ml.recipes import Recipe, Script, Solution
from agent_k.ml.search import Proposal, check_recipe

if TYPE_CHECKING:
    from pydantic_ai.models import Model
    from pydantic_ai.run import AgentRunResult


class Edit(BaseModel):
    find: str = Field(min_length=1, description="text that occurs exactly once in the parent's solution.py")
    replace: str


class EvolverProposal(BaseModel):
    kind: Literal["recipe", "script"]
    parent: str = Field(description="key of the candidate this starts from")
    recipe: Recipe | None = Field(default=None, description="kind 'recipe': the full new recipe")
    edits: list[Edit] = Field(default_factory=list, description="kind 'script': find/replace edits of the parent")
    source: str | None = Field(default=None, description="kind 'script': a full rewrite, instead of edits")
    rationale: str = Field(default="", max_length=500)


class EvolverAnswer(BaseModel):
    proposals: list[EvolverProposal] = Field(default_factory=list, max_length=4)
    finished: bool = Field(default=False, description="true: the search is done, go on to Submission (no proposals)")


def answer_outcomes(arguments: dict[str, Any]) -> set[str]:
    """The phase outcomes an answer asks for: proposals keep the search going; `finished` ends it."""
    return ({"evolution"} if arguments.get("proposals") else set()) | (
        {"submission"} if arguments.get("finished") else set()
    )


def build_evolver(model: Model) -> Agent[AgentDeps, EvolverAnswer]:
    agent = phase_agent(model, name="evolver", output_type=EvolverAnswer, instructions=_instructions)

    @agent.output_validator
    async def _applicable(ctx: RunContext[AgentDeps], answer: EvolverAnswer) -> EvolverAnswer:
        if not answer.proposals and not answer.finished:
            raise ModelRetry("propose at least one candidate, or answer finished=true to end the search")
        candidates = await archive(ctx.deps.mission, ctx.deps.state)
        refused = scripts_refused(ctx.deps.state, ctx.deps.mission)
        for i, proposal in enumerate(answer.proposals):
            if proposal.kind == "script" and refused:
                raise ModelRetry(f"proposal {i}: {refused}; propose recipes only")
            try:
                to_solution(proposal, candidates, drops=(), columns=data_columns(ctx.deps.state))
            except ValueError as exc:
                raise ModelRetry(f"proposal {i}: {exc}") from exc
        return answer

    return agent


def scripts_refused(state: MissionState, mission: GraphContext) -> str | None:
    """Why the Evolver's own code may not run in this mission (no bubblewrap, and not explicitly allowed)."""
    if mission.sandbox.runs_model_code or state.options.allow_unsandboxed_code:
        return None
    return f"script proposals cannot run here: there is no bubblewrap sandbox ({mission.sandbox.reason})"


async def evolver_proposals(
    state: MissionState, mission: GraphContext, proposals: list[Proposal], drops: tuple[str, ...], batch: int
) -> list[Proposal]:
    """In agent mode the Evolver's proposals come first and the workflow's fill the generation up. Where its
    code cannot run safely, it proposes recipes only, and the mission says why (once)."""
    refused = scripts_refused(state, mission)
    first = state.evolution_state.generation == 0
    if refused and first and state.phase_modes.get(Phase.evolution) == Mode.agent.value:
        await mission.events.emit(Log(level="warning", message=f"{refused}: the Evolver proposes recipes only"))

    async def ask(deps: AgentDeps) -> AgentRunResult[EvolverAnswer]:
        assert deps.mission.model is not None
        evolver = build_evolver(deps.mission.model)
        deps.outcomes = answer_outcomes
        return await evolver.run("Propose the next candidates.", deps=deps, usage_limits=usage_limits(deps))

    answer = await run_agent(state, mission, Phase.evolution, ask)
    if answer is None:
        return proposals
    if answer.finished:
        state.evolution_state.stop_reason = "evolver_finished"
        return []
    candidates = await archive(mission, state)
    own: dict[str, Proposal] = {}  # by key: the same proposal twice is evaluated once
    for proposal in answer.proposals:
        solution = to_solution(proposal, candidates, drops, columns=data_columns(state))
        own.setdefault(solution.key, Proposal(solution, (proposal.parent,)))
    workflow = [p for p in proposals if p.recipe.key not in own]
    return [*own.values(), *workflow[: max(0, batch - len(own))]]


def data_columns(state: MissionState) -> list[str] | None:
    """The columns a recipe may name: those Research profiled, the id and the targets (None before Research)."""
    findings, competition = state.research_findings, state.selected_competition
    if findings is None or competition is None:
        return None
    return [*(column.name for column in findings.columns), competition.id_column, *competition.target_columns]


def to_solution(
    proposal: EvolverProposal,
    candidates: list[ArchivedCandidate],
    drops: tuple[str, ...],
    *,
    columns: list[str] | None,
) -> Solution:
    """The candidate a proposal describes. A recipe must lie inside the search space and name only the data's
    `columns` (`InvalidRecipe`, a ValueError, says why otherwise). Columns the mission drops (ids, leakage
    suspects) stay dropped."""
    parent = next((c for c in candidates if c.key == proposal.parent), None)
    if parent is None:
        raise ValueError(f"no candidate '{proposal.parent}'")
    if proposal.kind == "recipe":
        if proposal.recipe is None:
            raise ValueError("a 'recipe' proposal needs the recipe")
        recipe = check_recipe(proposal.recipe, columns)
        return recipe.model_copy(update={"drop_columns": tuple(sorted({*recipe.drop_columns, *drops}))})
    if proposal.source is not None:
        return Script(source=proposal.source, parent=parent.key, note=proposal.rationale[:300])
    source = parent.source()
    if not proposal.edits or source is None:
        raise ValueError("a 'script' proposal needs edits of a candidate with a solution.py, or a full source")
    for n, edit in enumerate(proposal.edits):
        if source.count(edit.find) != 1:
            raise ValueError(f"edit {n}: its `find` text must occur exactly once in {parent.key}'s solution.py")
        source = source.replace(edit.find, edit.replace)
    return Script(source=source, parent=parent.key, note=proposal.rationale[:300])


def _instructions(ctx: RunContext[AgentDeps]) -> str:
    state = ctx.deps.state
    competition = state.selected_competition
    evolution = state.evolution_state
    return (
        "You are the Evolver of AGENT-K, an autonomous team in an ML competition. "
        f"Phase: {ctx.deps.phase.value}, generation {evolution.generation + 1}. "
        f"Competition: {competition.id if competition else '?'} (metric {competition.metric if competition else '?'}, "
        f"{'higher' if competition and competition.maximize else 'lower'} is better). "
        f"Best cross-validated score so far: {evolution.best_score}. "
        "data_shape tells what the rows are (free text, a forecast, repeated entities, several targets): a "
        "recipe's `text` settings tune text features, `relative` predicts a forecast relative to its series' level. "
        f"Study the candidates with your tools and propose up to four new ones: {_kinds(ctx)} Every proposal is "
        "cross-validated by the mission itself; scores you state are ignored. When nothing is left worth trying, "
        "answer finished=true and no proposals instead."
    )


def _kinds(ctx: RunContext[AgentDeps]) -> str:
    refused = scripts_refused(ctx.deps.state, ctx.deps.mission)
    if refused:
        return f"full recipes (kind 'recipe'); {refused}."
    return (
        "either a full recipe (kind 'recipe'), or edits of a candidate's solution.py (kind 'script': find/replace "
        "edits, or a full source). A script must keep its command line: `--data DIR --out FILE`, training on "
        "DIR/train.csv and writing predictions for DIR/test.csv in the submission format."
    )
