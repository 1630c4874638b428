"""The final step of Evolution: blend diverse top candidates, and keep the blend only if it improves CV.

The blend's CV comes from its members' out-of-fold predictions (computed in the sandbox, scored by our
code), blended exactly as the ensemble script blends them. The script then runs once without CV, to fit
every member on all rows and write the submission.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from agent_k._blocking import run_blocking
from agent_k.competition import InvalidSubmission
from agent_k.events.models import EvolutionEnsemble
from agent_k.mission.candidates import (
    ArchivedCandidate,
    archive,
    candidate_dir,
    candidate_limits,
    record,
    search_history,
    sizing,
)
from agent_k.mission.context import GraphContext
from agent_k.mission.phases import Phase
from agent_k.mission.state import MissionState
from agent_k.ml.ensemble import MAX_MEMBERS, Blend, select_blend
from agent_k.ml.evaluate import CompetitionData, OutOfFold, read_oof
from agent_k.ml.recipes import Ensemble, Recipe
from agent_k.ml.render import FOLD_AVERAGE_ROWS
from agent_k.ml.sandbox import UntrustedOutput
from agent_k.ml.search import improved, niche_elites
from agent_k.store.status import CandidateStatus

POOL_SIZE = 8
STARTUP_S = 2.0
"""Starting the blend's process (interpreter, imports, sandbox)."""
CHOOSE_S_PER_ROW = 5e-6
"""Choosing the blend, per training row and pool member: reading their out-of-fold files, scoring mixes."""


def blend_pool(candidates: list[ArchivedCandidate], state: MissionState) -> list[ArchivedCandidate]:
    """The best candidate of each niche, best first (diversity is what makes a blend gain), then the other
    seeds of the best one (averaging seeds lowers a model's variance)."""
    assert state.selected_competition is not None
    by_key = {c.key: c for c in candidates}
    elites = niche_elites(search_history(candidates), state.selected_competition)
    pool = [by_key[e.recipe.key] for e in elites[:POOL_SIZE]]
    if elites:
        best = elites[0].recipe.without_seed()
        pool += [
            c
            for c in candidates
            if c.succeeded and isinstance(c.recipe, Recipe) and c not in pool and c.recipe.without_seed() == best
        ]
    return pool


def fit_s(candidate: ArchivedCandidate, state: MissionState) -> float:
    """The time a member takes to fit on all rows, from its CV run: that run fitted once per fold on the other
    folds' rows, and once more on all rows unless its submission averaged the fold models (large data). Mostly an
    upper bound: that run's predictions are counted in, and the blend has every core where candidates shared them."""
    assert state.research_findings is not None
    folds, rows = state.research_findings.cv.n_folds, state.research_findings.n_train
    full_fits = folds - 1 if rows >= FOLD_AVERAGE_ROWS else folds  # each fold's fit is (folds - 1)/folds of one
    return (candidate.runtime_s or 0.0) / max(1, full_fits)


def blend_s(state: MissionState, pool_size: int, fits_s: list[float]) -> float:
    """The final step's time: starting, choosing among `pool_size` candidates, and these members' fits."""
    assert state.research_findings is not None
    return STARTUP_S + CHOOSE_S_PER_ROW * state.research_findings.n_train * pool_size + sum(fits_s)


def blend_reserve_s(candidates: list[ArchivedCandidate], state: MissionState, available_s: float) -> float:
    """Time to keep, of `available_s`, for the final blend: choosing it, and one fit on all rows for each likely
    member, or for its two cheapest when that is all that fits (the blend leaves out its costliest members until
    it fits). Nothing is kept for a blend that could not run in the time anyway: the search may use it."""
    pool = blend_pool(candidates, state)[:MAX_MEMBERS]
    if len(pool) < 2:
        return 0.0
    costs = sorted(fit_s(c, state) for c in pool)
    for reserve in (blend_s(state, len(pool), costs), blend_s(state, len(pool), costs[:2])):
        if reserve <= available_s:
            return reserve
    return 0.0


async def final_blend(
    ctx: GraphContext, state: MissionState, *, generation: int, timeout_s: float
) -> EvolutionEnsemble:
    """Try to blend; on success the blend becomes the mission's best candidate. Returns what happened."""
    competition, findings, evolution = state.selected_competition, state.research_findings, state.evolution_state
    assert competition is not None and findings is not None and state.data_dir is not None
    deadline = time.monotonic() + timeout_s
    candidates = await archive(ctx, state)
    pool = blend_pool(candidates, state)
    by_key = {c.key: c for c in candidates}

    def fit_cost(key: str) -> float:
        return fit_s(by_key[key], state)

    cheapest = sorted(fit_cost(c.key) for c in pool)[:2]
    if len(cheapest) < 2 or blend_s(state, len(pool), cheapest) > timeout_s:
        # Choosing a blend reads every member's predictions and scores many mixes: on large data that alone
        # takes seconds, which a blend that cannot be fitted in time would spend for nothing.
        reason = f"no time left to fit a blend ({timeout_s:.0f} s)" if len(cheapest) == 2 else "fewer than 2 candidates"
        return _outcome(None, evolution.best_score, kept=False, reason=reason)
    data, oofs = await _out_of_fold(state, pool)
    best_single = evolution.best_score
    reason = "no blend beats the best single candidate"
    while True:
        blend = await run_blocking(select_blend, data, oofs)
        if blend is None or not improved(blend.cv_mean, best_single, competition):
            return _outcome(blend, best_single, kept=False, reason=reason)
        left = deadline - time.monotonic()
        if blend_s(state, 0, [fit_cost(k) for k in blend.keys]) <= left:  # chosen already
            break
        del oofs[max(blend.keys, key=fit_cost)]  # too slow to fit in time: blend without its costliest member
        reason = f"no blend that beats the best single candidate fits in the {left:.0f} s left"

    members = tuple(recipe for k in blend.keys if isinstance(recipe := by_key[k].recipe, Recipe))
    ensemble = Ensemble(members=members, weights=blend.weights)
    done = by_key.get(ensemble.key)
    if done is None:
        workdir = candidate_dir(ctx.mission_dir, ensemble.key)
        memory_mb = sizing(ctx, state, 1).memory_mb
        limits = candidate_limits(
            ctx, state, timeout_s=left, threads=ctx.settings.parallel_evaluations, memory_mb=memory_mb
        )
        result = await ctx.evaluator.evaluate(ensemble, data, findings.cv, workdir, limits, folds=0)
        if result.status == CandidateStatus.succeeded:
            result.cv_mean, result.fold_scores = blend.cv_mean, blend.fold_scores
            _write_oof(blend, competition.id_column, workdir / "oof.csv")
        done = await record(
            ctx,
            state,
            ensemble,
            result,
            status=result.status,
            generation=generation,
            parents=blend.keys,
            phase=Phase.evolution,
        )
    if not done.succeeded:
        return _outcome(blend, best_single, kept=False, reason="the blend failed to fit")
    evolution.best_candidate_key, evolution.best_score = done.key, blend.cv_mean
    return _outcome(blend, best_single, kept=True, reason="improves CV")


async def chosen_blend_s(state: MissionState, candidates: list[ArchivedCandidate]) -> float:
    """What the blend chosen now would need at the final step (choosing it again, fitting its members on all
    rows), or 0 when no blend beats the best single candidate: the final step's own selection, run early."""
    assert state.selected_competition is not None
    pool = blend_pool(candidates, state)
    data, oofs = await _out_of_fold(state, pool)
    blend = await run_blocking(select_blend, data, oofs)
    if blend is None or not improved(blend.cv_mean, state.evolution_state.best_score, state.selected_competition):
        return 0.0
    by_key = {c.key: c for c in pool}
    return blend_s(state, len(pool), [fit_s(by_key[k], state) for k in blend.keys])


async def _out_of_fold(
    state: MissionState, pool: list[ArchivedCandidate]
) -> tuple[CompetitionData, dict[str, OutOfFold]]:
    """The competition's data and each pool member's out-of-fold predictions (read as untrusted files)."""
    assert state.selected_competition is not None and state.data_dir is not None
    findings = state.research_findings
    assert findings is not None
    data = await asyncio.to_thread(CompetitionData.load, state.selected_competition, Path(state.data_dir), findings.cv)
    oofs: dict[str, OutOfFold] = {}
    for candidate in pool:
        try:
            oofs[candidate.key] = await read_oof(data, candidate.folder / "oof.csv")
        except (InvalidSubmission, UntrustedOutput):
            continue  # its files are gone (e.g. a cleaned-up folder): blend the others
    return data, oofs


def _write_oof(blend: Blend, id_column: str, path: Path) -> None:
    frame = blend.oof.predictions.copy()
    frame.insert(0, "fold", blend.oof.folds)
    frame.insert(0, id_column, blend.oof.ids)
    frame.to_csv(path, index=False)


def _outcome(blend: Blend | None, best_single: float | None, *, kept: bool, reason: str) -> EvolutionEnsemble:
    return EvolutionEnsemble(
        members=list(blend.keys) if blend else [],
        weights=list(blend.weights) if blend else [],
        cv_score=blend.cv_mean if blend else None,
        best_single=best_single,
        kept=kept,
        reason=reason,
    )
