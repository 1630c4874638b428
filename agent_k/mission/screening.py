"""Cheap-first evaluation: a candidate screened on a fold before its full CV, and whether it may start, or go on,
in the time left (further for boosting whose rounds end with the time, `agent_k.ml.rounds`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from agent_k.competition.research import CVScheme
from agent_k.ml.evaluate import CompetitionData, Evaluation
from agent_k.ml.executors import Evaluator
from agent_k.ml.families import TIMED_ROUNDS_STRETCH
from agent_k.ml.recipes import Recipe, Solution
from agent_k.ml.requests import EvaluationRequest
from agent_k.sandbox import Limits
from agent_k.store.status import CandidateStatus


@dataclass(frozen=True)
class Screen:
    """Cheap-first evaluation: run `folds` folds, and go on only if they score at least `threshold`."""

    folds: int
    threshold: float


def time_stretch(solution: Solution) -> float:
    """How far past the time left its projected cost may go: further where its boosting rounds end with the time,
    and that is most of its cost (its text models' fits do not end early)."""
    timed = isinstance(solution, Recipe) and solution.family.spec.stops_early and not solution.text_columns
    return TIMED_ROUNDS_STRETCH if timed else 1.0


def may_finish(solution: Solution, likely_s: float | None, cv: CVScheme, screen: Screen | None, limits: Limits) -> bool:
    """Whether a candidate's first step (its screened fold, or its full CV) likely ends within the time left
    (stretched by `time_stretch`); one that would only time out is not started (a costly family late in a
    generation, where a blend's time is next)."""
    if likely_s is None:
        return True
    first = likely_s * screen.folds / (cv.n_folds + 1) if screen else likely_s
    return first <= limits.timeout_s * time_stretch(solution)


async def screen_then_evaluate(
    evaluator: Evaluator,
    recipe: Solution,
    data: CompetitionData,
    cv: CVScheme,
    workdir: Path,
    limits: Limits,
    screen: Screen | None,
) -> tuple[Evaluation, CandidateStatus]:
    """Full evaluation, after a quick screen when one is given. Returns the evaluation and the status.

    Both share `limits.timeout_s`. A candidate that passes its screen but whose full CV (its folds, each about
    what the screened fold cost; the submission averages the fold models) would not end in the time left is not
    started: it would only time out, spending that time for nothing."""
    spent = 0.0
    if screen is not None:
        quick = await evaluator.evaluate(EvaluationRequest(recipe, data, cv, workdir, limits, folds=screen.folds))
        if quick.status != CandidateStatus.succeeded or quick.cv_mean is None:
            return quick, CandidateStatus.failed
        if data.spec.better(screen.threshold, quick.cv_mean):
            quick.error = f"screened out: {quick.cv_mean:.6g} on {screen.folds} fold(s), needed {screen.threshold:.6g}"
            return quick, CandidateStatus.screened_out
        spent = quick.runtime_s
        likely, left = spent * cv.n_folds / screen.folds, limits.timeout_s - spent
        if likely > left * time_stretch(recipe):
            quick.error = f"screened out: its full CV would take ~{likely:.0f} s, {left:.0f} s were left"
            return quick, CandidateStatus.screened_out
    rest = replace(limits, timeout_s=limits.timeout_s - spent)
    result = await evaluator.evaluate(EvaluationRequest(recipe, data, cv, workdir, rest))
    result.runtime_s += spent
    return result, result.status
