"""What a mission submits when it cannot submit what it planned: the training prior, and, when the budget runs out
under a running step, the best valid candidate it already has.

At the hard budget limit (`agent_k.mission.budget`) the runner stops the step and asks `settle_at_limit` what to
submit: the best full-fidelity candidate whose submission was checked, else the training prior (computed now if
it was not yet: milliseconds). The mission then runs Submission on it and ends `succeeded`, with a note saying
why; it ends `failed` only when nothing valid exists (docs/architecture.md, "Budget").
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_k.competition import Competition, CVScheme, TaskType
from agent_k.mission.candidates import ArchivedCandidate, archive, candidate_dir, record
from agent_k.mission.context import GraphContext
from agent_k.mission.phases import Phase
from agent_k.mission.state import MissionState
from agent_k.ml.evaluate import SUBMISSION, CompetitionData
from agent_k.ml.prior import evaluate_prior
from agent_k.ml.recipes import Prior
from agent_k.sandbox import shared_reader


async def archive_prior(ctx: GraphContext, state: MissionState, phase: Phase) -> ArchivedCandidate:
    """The training prior, evaluated in this process and archived as generation 0's candidate (again after a
    crash: it is cheap). Before Research has chosen the folds, it is scored on plain shuffled folds."""
    competition = state.selected_competition
    assert competition is not None and state.data_dir is not None
    cv = state.research_findings.cv if state.research_findings else _plain_folds(competition)
    data = await asyncio.to_thread(CompetitionData.load, competition, Path(state.data_dir), cv)
    solution = Prior()
    result = await evaluate_prior(data, cv, candidate_dir(ctx.mission_dir, solution.key))
    return await record(ctx, state, solution, result, status=result.status, generation=0, parents=(), phase=phase)


def submittable(candidates: list[ArchivedCandidate], competition: Competition) -> ArchivedCandidate | None:
    """The best candidate that can be submitted as it is: cross-validated on every row, with its submission."""
    ready = [
        c
        for c in candidates
        if c.succeeded and c.cv is not None and c.fidelity >= 1.0 and (c.folder / SUBMISSION).is_file()
    ]
    return max(ready, key=lambda c: c.rank(competition), default=None)


async def settle_at_limit(ctx: GraphContext, state: MissionState, why: str) -> bool:
    """Point the mission at what it will submit now that its budget is spent (`why`: what was stopped), and say
    so in its notes; False when it has nothing valid (no competition chosen or downloaded yet, no prior)."""
    competition = state.selected_competition
    if competition is None or state.data_dir is None:
        return False
    shared_reader().prestart()  # Submission reads a model's file through it: have it ready
    best = submittable(await archive(ctx, state), competition)
    if best is None:
        prior = await archive_prior(ctx, state, state.current_phase or Phase.discovery)
        best = prior if prior.succeeded else None
    if best is None:
        return False
    evolution = state.evolution_state
    evolution.best_candidate_key, evolution.best_score = best.key, best.cv
    evolution.stop_reason = "budget"
    what = "the training prior" if isinstance(best.recipe, Prior) else best.recipe.summary()
    state.notes.append(ctx.scrub(f"the hard budget limit stopped {why}: submitted the best valid candidate, {what}"))
    return True


def _plain_folds(competition: Competition) -> CVScheme:
    classes = competition.task in (TaskType.binary, TaskType.multiclass)
    return CVScheme(kind="stratified_kfold" if classes else "kfold", n_folds=5)
