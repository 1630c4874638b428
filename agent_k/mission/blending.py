"""The final step of Evolution: blend diverse top candidates from the predictions they already made.

Each candidate's fold models predicted its held-out rows (the out-of-fold file) and the test rows (its submission
is their average; a forecast's comes from one more fit on all rows: `agent_k.ml.render.refits`). The blend's
weights are chosen on the out-of-fold predictions and mix the test predictions: no model is fitted again, so the
blend costs seconds whatever its members cost, and it is never skipped for lack of time while two members exist.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pandas as pd

from agent_k._blocking import run_blocking
from agent_k.competition import InvalidSubmission
from agent_k.events.models import EvolutionEnsemble
from agent_k.mission.candidates import ArchivedCandidate, archive, candidate_dir, record, search_history
from agent_k.mission.context import GraphContext
from agent_k.mission.phases import Phase
from agent_k.mission.state import MissionState
from agent_k.ml.ensemble import MAX_MEMBERS, Blend, select_blend, write_blend
from agent_k.ml.evaluate import OOF, TEST_PREDICTIONS, CompetitionData, OutOfFold, read_oof, read_test_predictions
from agent_k.ml.recipes import Ensemble, Recipe
from agent_k.ml.search import improved, niche_elites
from agent_k.ml.stacking import can_stack, stack
from agent_k.sandbox import UntrustedOutput

POOL_SIZE = 8
STEP_S = 0.5
"""The final step's fixed cost: loading the data, writing and archiving the blends."""
READ_S_PER_MEMBER = 0.15
"""Reading a pool member's two files through the reader process (measured 0.06 s on idle cores; busy ones, more)."""
CHOOSE_S_PER_ROW = 5e-6
"""Choosing the blend, per training row and pool member: scoring mixes of their out-of-fold predictions."""
CHOOSE_MIN_S = 0.05
"""Choosing the blend, per pool member, however few the rows (25 rounds of trial mixes)."""
STACK_S_PER_UNIT = 2e-7
"""A stacker's fit, per row, member and squared class (measured: 4.2 s for 30,000 rows, 7 members, 10 classes)."""
STACK_MIN_S = 0.5
"""A stacker's fits however small the data (0.06 s on idle cores, 0.26 s beside four busy ones)."""
STACK_SHARE = 0.1


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


def blend_reserve_s(candidates: list[ArchivedCandidate], state: MissionState) -> float:
    """The final blend's time: reading its pool's predictions, choosing the weights and stacking (none without a
    pool). Seconds whatever the members cost: the search keeps them, and only a mission of a few seconds in all can
    have less left (then the blend is skipped rather than overrun the budget)."""
    assert state.research_findings is not None
    pool = blend_pool(candidates, state)
    if len(pool) < 2:
        return 0.0
    rows = state.research_findings.n_train
    choose = max(CHOOSE_MIN_S, CHOOSE_S_PER_ROW * rows) * len(pool)
    return STEP_S + READ_S_PER_MEMBER * len(pool) + choose + stack_s(state)


def stack_s(state: MissionState) -> float:
    """What stacking up to MAX_MEMBERS members likely takes (a logistic regression's time grows with the rows, the
    members' columns and the classes, once per fold and once on every row); 0 where it would take more than its
    share of the budget: the stack is then not made (the weighted blend always is)."""
    findings, competition = state.research_findings, state.selected_competition
    assert findings is not None and competition is not None
    classes = len(competition.classes or []) or 1
    likely = STACK_S_PER_UNIT * findings.n_train * MAX_MEMBERS * classes**2 * (findings.cv.n_folds + 1)
    likely = max(STACK_MIN_S, likely)
    return likely if likely <= STACK_SHARE * state.budget.total_s else 0.0


async def final_blend(
    ctx: GraphContext, state: MissionState, *, generation: int, timeout_s: float
) -> tuple[list[EvolutionEnsemble], list[ArchivedCandidate]]:
    """Make the blends and archive them: the weighted blend (ensemble selection), which becomes the mission's best
    candidate when it improves CV, and, where the task allows, the stack of the same members (else of the pool's
    best), which competes in the final pick (its nested CV is honest, where the others' are the best of many
    draws: they meet on the pick's second split). Returns what happened, and the archived blends."""
    competition, findings, evolution = state.selected_competition, state.research_findings, state.evolution_state
    assert competition is not None and findings is not None
    candidates = await archive(ctx, state)
    best_single = evolution.best_score
    needed = blend_reserve_s(candidates, state)
    if needed > timeout_s:  # only where the whole mission lasts seconds: its budget comes first
        why = f"no time for a blend: {timeout_s:.1f} s left, it needs ~{needed:.1f} s"
        return [_outcome(None, best_single, kept=False, reason=why)], []
    started = time.monotonic()
    data, oofs, tests = await member_predictions(state, blend_pool(candidates, state))
    if len(oofs) < 2:
        return [_outcome(None, best_single, kept=False, reason="fewer than 2 candidates to blend")], []
    weighted = await run_blocking(select_blend, data, oofs)
    outcomes, blends = [], []
    if weighted is None:
        outcomes.append(_outcome(None, best_single, kept=False, reason="no blend beats its best member"))
    else:
        done = await _archived(ctx, state, candidates, weighted, data, tests, generation)
        blends.append(done)
        kept = improved(weighted.cv_mean, best_single, competition)
        if kept:
            evolution.best_candidate_key, evolution.best_score = done.key, weighted.cv_mean
        why = "improves CV" if kept else "does not beat the best single candidate"
        outcomes.append(_outcome(weighted, best_single, kept=kept, reason=why))
    if not can_stack(data, findings.cv.kind):
        return outcomes, blends
    left = timeout_s - (time.monotonic() - started)
    needed = stack_s(state)
    if not needed:
        outcomes.append(_skipped_stack(best_single, f"a stack would take more than {STACK_SHARE:.0%} of the budget"))
    elif needed >= left - STEP_S:
        why = f"no time for a stack: {left:.1f} s left, it needs ~{needed:.1f} s"
        outcomes.append(_skipped_stack(best_single, why))
    else:
        keys = list(weighted.keys) if weighted else list(oofs)[:MAX_MEMBERS]
        made = await run_blocking(stack, data, {k: oofs[k] for k in keys})
        assert made is not None, "two members or more: a stacker is always fitted"
        stacker, oof, scores = made
        stacked = Blend(tuple(keys), (1.0,) * len(keys), scores, oof, stacker)
        blends.append(await _archived(ctx, state, candidates, stacked, data, tests, generation))
        outcomes.append(_outcome(stacked, best_single, kept=False, reason="stacked: meets the best in the pick"))
    return outcomes, blends


async def _archived(
    ctx: GraphContext,
    state: MissionState,
    candidates: list[ArchivedCandidate],
    blend: Blend,
    data: CompetitionData,
    tests: dict[str, pd.DataFrame],
    generation: int,
) -> ArchivedCandidate:
    """The blend as a candidate: its files written from its members' predictions, archived once."""
    assert state.research_findings is not None
    by_key = {c.key: c for c in candidates}
    members = tuple(recipe for k in blend.keys if isinstance(recipe := by_key[k].recipe, Recipe))
    ensemble = Ensemble(members=members, weights=blend.weights, stacker=blend.stacker)
    if ensemble.key in by_key:  # a re-run of this step: made before
        return by_key[ensemble.key]
    workdir = candidate_dir(ctx.mission_dir, ensemble.key)
    result = await run_blocking(write_blend, ensemble, blend, data, state.research_findings.cv, tests, workdir)
    return await record(
        ctx, state, ensemble, result, status=result.status, generation=generation, parents=blend.keys,
        phase=Phase.evolution,
    )  # fmt: skip


async def member_predictions(
    state: MissionState, pool: list[ArchivedCandidate], *, folder: str = ""
) -> tuple[CompetitionData, dict[str, OutOfFold], dict[str, pd.DataFrame]]:
    """The competition's data and each pool member's out-of-fold and test predictions (read as untrusted files;
    a member missing either is left out). `folder`: a subfolder of each candidate's, for another split's files
    (then only the out-of-fold predictions are read)."""
    assert state.selected_competition is not None and state.data_dir is not None
    findings = state.research_findings
    assert findings is not None
    data = await asyncio.to_thread(CompetitionData.load, state.selected_competition, Path(state.data_dir), findings.cv)
    oofs: dict[str, OutOfFold] = {}
    tests: dict[str, pd.DataFrame] = {}
    for candidate in pool:
        try:
            oof = await read_oof(data, candidate.folder / folder / OOF)
            if not folder:
                tests[candidate.key] = await read_test_predictions(data, candidate.folder / TEST_PREDICTIONS)
        except (InvalidSubmission, UntrustedOutput):
            continue  # its files are gone (a cleaned-up folder, an earlier version's candidate): blend the others
        oofs[candidate.key] = oof
    return data, oofs, tests


def _skipped_stack(best_single: float | None, reason: str) -> EvolutionEnsemble:
    return EvolutionEnsemble(
        method="stacked", members=[], weights=[], cv_score=None, best_single=best_single, kept=False, reason=reason
    )


def _outcome(blend: Blend | None, best_single: float | None, *, kept: bool, reason: str) -> EvolutionEnsemble:
    return EvolutionEnsemble(
        method="stacked" if blend and blend.stacker else "weighted",
        members=list(blend.keys) if blend else [],
        weights=list(blend.weights) if blend else [],
        cv_score=blend.cv_mean if blend else None,
        best_single=best_single,
        kept=kept,
        reason=reason,
    )
