"""The final pick: the top candidates and the blend re-scored on a second, differently seeded split of the same
rows, so that a candidate lucky on one split does not win.

The mission's split chose them among many candidates: their scores on it are the best of many draws, biased
upward, and the blend's members and weights were chosen on it too. The second split (other folds, other model
seeds) is an honest second look: single candidates compete on the mean of both scores, and the blend (its members'
second-split out-of-fold predictions mixed as it mixes them) meets the winner there. A forecast's forward folds
have one order only: it keeps the pick of its own split.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from agent_k._blocking import run_blocking
from agent_k.competition import Competition
from agent_k.competition.research import CVScheme
from agent_k.events.models import EvolutionPick, PickedCandidate
from agent_k.mission.blending import blend_pool, member_predictions
from agent_k.mission.candidates import ArchivedCandidate, archive, candidate_limits, sizing
from agent_k.mission.context import GraphContext
from agent_k.mission.state import MissionState
from agent_k.ml.ensemble import MAX_MEMBERS, resplit_scores
from agent_k.ml.evaluate import CompetitionData, EvaluationRequest
from agent_k.ml.recipes import Ensemble, Prior, Recipe
from agent_k.ml.search import improved
from agent_k.store.status import CandidateStatus

RESCORED = 3
"""Single candidates re-scored: the best few on the mission's split, of different model families where there are
that many (`contenders`)."""
RESPLIT = "resplit"
"""The subfolder of a candidate's folder that holds its files of the second split."""
PICK_SHARE = 0.15
"""The most of the mission's budget the second split may take: on large data the top few cost minutes each."""
SLACK = 1.2
"""A second split costs about what the first did (its CV without the test predictions): kept with some slack."""
MIN_PICK_S = 1.0
"""Below this much time a second split is not started (a short mission keeps its time for Submission)."""
END_MARGIN_S = 1.0
"""Kept between the second split's runs and the phase's end: stopping them and reading what they left."""
TIED_ROWS = 4
"""Rows apart that count as no difference on accuracy: a paired sign test on the rows two models label differently
cannot call four at 5% even when all four go one way (0.5^4 = 6%); five all one way, it can (3%)."""


def second_split(cv: CVScheme) -> CVScheme | None:
    """The same kind of folds under another seed; None for forward folds, which have one order only."""
    return None if cv.kind == "forward" else cv.model_copy(update={"seed": cv.seed + 1})


def contenders(candidates: list[ArchivedCandidate], competition: Competition) -> list[ArchivedCandidate]:
    """The best few single candidates scored on every row, best first: the best of each of the best families, then
    the next best recipes; never the training prior, which fits no model. The search refines its best, so the
    runners-up on one split are mostly that model again (other seeds, a nudged parameter) and share its luck there;
    a second look between near-copies decides nothing, where the best of another family, a hair behind, may be the
    sturdier model."""
    singles = sorted(
        (
            c
            for c in candidates
            if c.succeeded and c.cv is not None and c.fidelity >= 1.0 and not isinstance(c.recipe, Ensemble | Prior)
        ),
        key=lambda c: c.rank(competition),
        reverse=True,
    )
    by_family = {_family(c): c for c in reversed(singles)}  # the best of each, the best family first below
    chosen = {c.key: c for c in singles if by_family[_family(c)] is c}
    models = {_model(c) for c in chosen.values()}
    for candidate in singles:
        if candidate.key not in chosen and _model(candidate) not in models:
            models.add(_model(candidate))
            chosen[candidate.key] = candidate
    return sorted(list(chosen.values())[:RESCORED], key=lambda c: c.rank(competition), reverse=True)


def pick_reserve_s(candidates: list[ArchivedCandidate], state: MissionState, parallel: int) -> float:
    """Time to keep for the pick at the end of the search: the second split of what it will likely re-score (`plan`:
    the best, a likely blend's members, the runners-up) within the pick's share of the budget, and the margin to
    read what they left; nothing where that share would not hold what the pick must re-score before it can compare
    anything (the best two, or a kept blend's members), as on costly data, where the search has better use for the
    time."""
    findings, competition = state.research_findings, state.selected_competition
    assert findings is not None and competition is not None
    if second_split(findings.cv) is None:
        return 0.0
    top = contenders(candidates, competition)
    if len(top) < 2:
        return 0.0
    cap = PICK_SHARE * state.budget.total_s
    # As many members as a blend takes: the stack takes the pool's first MAX_MEMBERS where no weighted blend is made.
    members = blend_pool(candidates, state)[:MAX_MEMBERS]
    if max(rescoring_s(top[:2], parallel), rescoring_s(members, parallel)) > cap:
        return 0.0
    planned = plan(rescoring_groups(top[0], top, {"blend": members}), cap, parallel)
    return rescoring_s(planned, parallel) + END_MARGIN_S


def rescoring_s(candidates: list[ArchivedCandidate], parallel: int) -> float:
    """What re-scoring these on the second split likely takes, `parallel` at a time."""
    return SLACK * sum(c.runtime_s or 0.0 for c in candidates) / max(1, parallel)


async def final_pick(
    ctx: GraphContext, state: MissionState, *, blends: list[ArchivedCandidate], timeout_s: float
) -> EvolutionPick:
    """Re-score the contenders (and the blends' members) on the second split as time allows, and make the pick
    (`choose`; `without_second_split` where the best's own runs did not fit) the mission's best candidate."""
    competition, findings, evolution = state.selected_competition, state.research_findings, state.evolution_state
    assert competition is not None and findings is not None and state.data_dir is not None
    second = second_split(findings.cv)
    if second is None:
        return _pick([], None, changed=False, reason="forward folds have one order: no second split")
    candidates = await archive(ctx, state)
    by_key = {c.key: c for c in candidates}
    top = contenders(candidates, competition)
    blends = [by_key[b.key] for b in blends if b.key in by_key]
    members = {b.key: _members(b, by_key) for b in blends}
    best = by_key.get(evolution.best_candidate_key or "")
    if best is None:
        return _pick([], None, changed=False, reason="no best candidate")
    groups = rescoring_groups(best, top, members)
    allowance = max(0.0, min(timeout_s - END_MARGIN_S, PICK_SHARE * state.budget.total_s))
    planned = plan(groups, allowance, ctx.evaluator.parallelism) if allowance >= MIN_PICK_S else []
    deadline = time.monotonic() + timeout_s - END_MARGIN_S
    data = await asyncio.to_thread(CompetitionData.load, competition, Path(state.data_dir), findings.cv)
    scores = {c.key: c.resplit_cv for c in candidates if c.resplit_cv is not None}
    await _rescore(ctx, state, [c for c in planned if c.key not in scores], data, second, deadline, scores)
    for blend in blends:
        if blend.key not in scores and all(m.key in scores for m in members[blend.key]):
            blended = await _blend_resplit(ctx, state, blend, members[blend.key], data)
            if blended is not None:
                scores[blend.key] = blended
    singles = list({c.key: c for c in [best, *top] if not isinstance(c.recipe, Ensemble)}.values())
    entries = [_entry(c, scores.get(c.key)) for c in [*singles, *blends]]
    if not planned and best.key not in scores:
        needed = rescoring_s(groups[0], ctx.evaluator.parallelism)
        why = f"too little time for a second split (the best's needs ~{needed:.0f} s, {allowance:.0f} s were kept)"
        chosen, better = without_second_split(best, blends, competition)
        why = f"{why}; {better}" if better else why
    else:
        tie = TIED_ROWS * one_row(competition, second, len(data.expected_ids))
        chosen, why = choose(best, singles, blends, scores, competition, tie=tie)
    if chosen.key != best.key:
        evolution.best_candidate_key, evolution.best_score = chosen.key, chosen.cv
    return _pick(entries, chosen.key, changed=chosen.key != best.key, reason=why)


def rescoring_groups(
    best: ArchivedCandidate, top: list[ArchivedCandidate], members: dict[str, list[ArchivedCandidate]]
) -> list[list[ArchivedCandidate]]:
    """What to re-score, in order: the best's own runs first (a blend's are its members': without the best's
    second score nothing can be compared), then the blends' members, then each runner-up."""
    groups = [members.get(best.key, [best])]
    groups += [group for key, group in members.items() if key != best.key]
    return groups + [[c] for c in top if c.key != best.key]


def one_row(competition: Competition, cv: CVScheme, rows: int) -> float:
    """How far one row can move a cross-validated score: on a metric that is the share of rows labelled right,
    averaged over k folds of about n/k rows each, at most 1/(k * floor(n/k)); 0 where the metric is no such share or
    the folds' sizes are not known here (grouped folds are as large as their groups)."""
    if not competition.scored_by.row_share or cv.kind not in ("kfold", "stratified_kfold") or rows < cv.n_folds:
        return 0.0
    return 1.0 / (cv.n_folds * (rows // cv.n_folds))


def choose(
    best: ArchivedCandidate,
    singles: list[ArchivedCandidate],
    blends: list[ArchivedCandidate],
    scores: dict[str, float],
    competition: Competition,
    *,
    tie: float = 0.0,
) -> tuple[ArchivedCandidate, str]:
    """The pick, and why. Single candidates compete on the mean of their two scores (the mission's split chose
    them among many: a first score is the best of many draws), equal means by the lower out-of-fold log loss. The
    blends, whose members and weights that split chose too, meet the winner on the second split alone, where none
    was chosen. Without the second scores a comparison needs, the best on the mission's split stays.

    Scores no more than `tie` apart count as equal: on accuracy, TIED_ROWS rows (`one_row`), a gap no paired test
    can call. Among singles the lower log loss, a proper score every row's probabilities move, decides there; a
    blend level with the best single is the pick, as AutoML submits its ensemble: its members' errors average out
    on rows neither split holds, where a single's edge within noise is its luck. In six missions on wine's 133 rows
    the stack was right on every private row five times, the best extra trees never (one row missed each time),
    and level with them on the second split or at most two rows behind in three."""
    if best.key not in scores:
        return best, "the best could not be re-scored"
    rescored = [c for c in singles if c.key in scores]
    combined = {c.key: ((c.cv or 0.0) + scores[c.key]) / 2 for c in rescored}
    champion, surer = _surest(rescored, combined, competition, tie / 2)  # the rows of both splits together
    blend, _ = _surest([b for b in blends if b.key in scores], scores, competition, tie)
    if blend is None:
        if champion is None or len(rescored) < 2:
            return best, "no other candidate could be re-scored"
        if champion.key == best.key:
            return champion, "still the best"
        return champion, "a lower log loss, level over both splits" if surer else "a better mean over both splits"
    if champion is None:
        return blend, "no single candidate could be re-scored"
    if tie > 0 and abs(scores[blend.key] - scores[champion.key]) <= tie + 1e-9:
        return blend, f"the {_method(blend)} blend is level with the best single candidate on the second split"
    winner, _ = _surest([blend, champion], scores, competition, 0.0)  # equal: the lower log loss, then the blend
    if winner is champion:
        return champion, "the best single candidate beats the blends on the second split"
    return blend, f"the {_method(blend)} blend beats the best single candidate on the second split"


def _surest(
    candidates: list[ArchivedCandidate], scores: dict[str, float], competition: Competition, tie: float
) -> tuple[ArchivedCandidate | None, bool]:
    """The best on `scores` (equal scores: the lower log loss, then the first), or, among those within `tie` of it
    where they all have a log loss, the lowest log loss; and whether the log loss overruled the score."""
    metric = competition.scored_by
    if not candidates:
        return None, False
    top = min(
        candidates, key=lambda c: (metric.rank_key(scores[c.key]), c.log_loss if c.log_loss is not None else math.inf)
    )
    near = [c for c in candidates if abs(scores[c.key] - scores[top.key]) <= tie + 1e-9]
    if tie <= 0 or any(c.log_loss is None for c in near):
        return top, False
    surest = min(near, key=lambda c: (c.log_loss or 0.0, metric.rank_key(scores[c.key])))
    return surest, scores[surest.key] != scores[top.key]


def without_second_split(
    best: ArchivedCandidate, blends: list[ArchivedCandidate], competition: Competition
) -> tuple[ArchivedCandidate, str]:
    """The pick on the mission's split alone: the blend whose first score improves on the best's most, as a kept
    blend's must (a stack's nested score is honest: beating a weighted blend's, chosen on those same rows, it is the
    safer pick), else the best; and why, where it changed."""
    better = [b for b in blends if b.cv is not None and best.cv is not None and improved(b.cv, best.cv, competition)]
    chosen = max(better, key=lambda c: c.rank(competition), default=best)
    return chosen, f"the {_method(chosen)} blend's CV beats the best's" if chosen.key != best.key else ""


def _members(blend: ArchivedCandidate, by_key: dict[str, ArchivedCandidate]) -> list[ArchivedCandidate]:
    assert isinstance(blend.recipe, Ensemble)
    return [by_key[m.key] for m in blend.recipe.members]


def _family(candidate: ArchivedCandidate) -> str:
    recipe = candidate.recipe
    return recipe.family.value if isinstance(recipe, Recipe) else type(recipe).__name__


def _model(candidate: ArchivedCandidate) -> str:
    """Its recipe's identity but for the seed: seeds of one recipe are one model here."""
    recipe = candidate.recipe
    return recipe.without_seed().key if isinstance(recipe, Recipe) else candidate.key


def _method(blend: ArchivedCandidate) -> str:
    return "stacked" if isinstance(blend.recipe, Ensemble) and blend.recipe.stacker else "weighted"


def plan(groups: list[list[ArchivedCandidate]], allowance_s: float, parallel: int) -> list[ArchivedCandidate]:
    """The candidates to re-score: whole groups (the best's, the blend's members, each runner-up) in order, while
    their likely time fits the allowance; nothing when the best's own group does not fit."""
    planned: dict[str, ArchivedCandidate] = {}
    spent = 0.0
    for n, group in enumerate(groups):
        new = [c for c in group if c.key not in planned and c.resplit_cv is None]
        cost = rescoring_s(new, parallel)
        if spent + cost <= allowance_s:
            planned.update((c.key, c) for c in new)
            spent += cost
        elif n == 0:
            return []
    return list(planned.values())


async def _rescore(
    ctx: GraphContext,
    state: MissionState,
    planned: list[ArchivedCandidate],
    data: CompetitionData,
    cv: CVScheme,
    deadline: float,
    scores: dict[str, float],
) -> None:
    """Cross-validate each planned candidate on `cv` (no submission), in parallel, and archive its score."""
    if not planned:
        return
    size = sizing(ctx, state, ctx.evaluator.parallelism)
    threads = max(1, ctx.settings.parallel_evaluations // max(1, min(size.parallel, len(planned))))
    limits = candidate_limits(ctx, state, timeout_s=1.0, threads=threads, memory_mb=size.memory_mb)
    semaphore = asyncio.Semaphore(size.parallel)

    async def one(candidate: ArchivedCandidate) -> None:
        async with semaphore:
            left = deadline - time.monotonic()
            if left < 1.0:
                return
            folder, now = candidate.folder / RESPLIT, replace(limits, timeout_s=left)
            try:
                # Scored as searched: a recipe cut short by the time left would lose the pick for the time alone.
                request = EvaluationRequest(candidate.recipe, data, cv, folder, now, cv_only=True, timed_rounds=False)
                result = await ctx.evaluator.evaluate(request)
            except Exception:  # an executor lost now (a Dask cluster gone) leaves this one without a second score
                return
        if result.status == CandidateStatus.succeeded and result.cv_mean is not None:
            scores[candidate.key] = result.cv_mean
            await asyncio.to_thread(ctx.store.set_resplit_cv, state.mission_id, candidate.key, result.cv_mean)

    await asyncio.gather(*(one(c) for c in planned))


async def _blend_resplit(
    ctx: GraphContext,
    state: MissionState,
    blend: ArchivedCandidate,
    members: list[ArchivedCandidate],
    data: CompetitionData,
) -> float | None:
    """The blend's second-split CV: its members' second-split out-of-fold predictions, mixed as it mixes them
    (None when a member's file is gone)."""
    assert isinstance(blend.recipe, Ensemble)
    ensemble = blend.recipe
    _, oofs, _ = await member_predictions(state, members, folder=RESPLIT)
    keys = [m.key for m in members]
    if set(keys) - set(oofs):
        return None
    score = round(float(np.mean(await run_blocking(resplit_scores, ensemble, keys, data, oofs))), 6)
    await asyncio.to_thread(ctx.store.set_resplit_cv, state.mission_id, blend.key, score)
    return score


def _entry(candidate: ArchivedCandidate, resplit: float | None) -> PickedCandidate:
    assert candidate.cv is not None
    combined = None if resplit is None else round((candidate.cv + resplit) / 2, 6)
    return PickedCandidate(candidate_key=candidate.key, cv_score=candidate.cv, resplit_score=resplit, combined=combined)


def _pick(entries: list[PickedCandidate], chosen: str | None, *, changed: bool, reason: str) -> EvolutionPick:
    return EvolutionPick(candidates=entries, chosen=chosen, changed=changed, reason=reason)
