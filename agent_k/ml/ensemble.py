"""Ensemble selection (Caruana et al., 2004): a weighted blend of candidates' out-of-fold predictions.

Greedy forward selection with replacement: start from the best candidate, then repeatedly add the one whose
inclusion most improves the blended CV score. The weights are how often each member was picked. Blending
happens in prediction space (values, or class probabilities), exactly as the rendered ensemble script does.
Weights are pick counts; the script normalises them.

The weights chosen on the out-of-fold predictions then mix the members' test predictions (`write_blend`): each
member's submission was made of its fold models' test predictions, so the blend fits no model at all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from agent_k.competition import metric_scoring
from agent_k.competition.research import CVScheme
from agent_k.ml.evaluate import (
    OOF,
    SUBMISSION,
    TEST_PREDICTIONS,
    CompetitionData,
    Evaluation,
    OutOfFold,
    decision_rule,
    fold_scores,
    needs_rule,
    oof_log_loss,
    oof_truth,
    submission_frame,
)
from agent_k.ml.mixing import mix
from agent_k.ml.recipes import Ensemble, Stacker
from agent_k.ml.render import render_solution
from agent_k.ml.stacking import stack
from agent_k.store.status import CandidateStatus

ROUNDS = 25
MAX_MEMBERS = 7
PATIENCE = 6
"""Rounds without a better blend before the selection stops."""


@dataclass(frozen=True)
class Blend:
    keys: tuple[str, ...]
    weights: tuple[float, ...]
    fold_scores: list[float]
    oof: OutOfFold
    stacker: Stacker | None = None
    """Where a stacker mixes the members (`agent_k.ml.stacking`); its out-of-fold predictions are nested."""

    @property
    def cv_mean(self) -> float:
        return float(np.mean(self.fold_scores))


def _blend(pool: dict[str, np.ndarray], counts: dict[str, float], like: OutOfFold) -> OutOfFold:
    total = sum(counts.values())
    values = np.zeros(like.predictions.shape)
    for key, n in counts.items():
        values += pool[key] * (n / total)
    return OutOfFold(like.ids, like.folds, pd.DataFrame(values, columns=like.predictions.columns))


def resplit_scores(
    ensemble: Ensemble, keys: list[str], data: CompetitionData, oofs: dict[str, OutOfFold]
) -> list[float]:
    """The blend's fold scores on another split of the same rows: its members' (`keys`, in its order) out-of-fold
    predictions there, mixed as it mixes them: by its weights, or by a stacker refitted inside that split's folds."""
    ordered = {key: oofs[key] for key in keys}
    if ensemble.stacker is not None:
        stacked = stack(data, ordered)
        assert stacked is not None
        return stacked[2]
    values = {key: oof.predictions.to_numpy(dtype=float) for key, oof in ordered.items()}
    weights = dict(zip(keys, ensemble.weights, strict=True))
    return fold_scores(data, _blend(values, weights, ordered[keys[0]]))


def select_blend(data: CompetitionData, pool: dict[str, OutOfFold], *, rounds: int = ROUNDS) -> Blend | None:
    """The best blend of `pool` (ordered best candidate first), or None when no blend beats its best member.

    Every out-of-fold set must come from the same folds, in train order (`read_oof(complete=True)`).
    """
    if len(pool) < 2:
        return None
    spec = data.spec
    first = next(iter(pool))
    like, truth = pool[first], oof_truth(data, pool[first])
    values = {key: oof.predictions.to_numpy(dtype=float) for key, oof in pool.items()}

    by_log_loss = needs_rule(spec)

    def score(counts: dict[str, float]) -> tuple[float, list[float]]:
        """The mix's CV (its log loss, where the metric scores labels by fitted rules: a proper score of the
        probabilities being mixed, and a hundred rule fits cheaper)."""
        mixed = _blend(values, counts, like)
        if by_log_loss:
            loss = metric_scoring.log_loss(spec, truth, mixed.predictions)
            return -loss, [-loss]
        scores = fold_scores(data, mixed, truth=truth)
        return float(np.mean(scores)), scores

    def rank_key(mean: float) -> float:  # lower first; a negated log loss is better higher
        return -mean if by_log_loss else spec.scored_by.rank_key(mean)

    counts: dict[str, float] = {first: 1}
    best_mean, best_scores = score(counts)
    best_counts = dict(counts)
    stale = 0
    for _ in range(rounds):
        if stale >= PATIENCE:  # more picks of the same members only re-weigh what already stopped helping
            break
        options = [k for k in pool if k in counts or len(counts) < MAX_MEMBERS]
        trials = [(score({**counts, key: counts.get(key, 0) + 1}), key) for key in options]
        (mean, scores), key = min(trials, key=lambda t: rank_key(t[0][0]))
        counts[key] = counts.get(key, 0) + 1
        if rank_key(mean) < rank_key(best_mean):
            best_mean, best_scores, best_counts, stale = mean, scores, dict(counts), 0
        else:
            stale += 1
    if len(best_counts) < 2:
        return None
    blended = _blend(values, best_counts, like)
    if by_log_loss:
        best_scores = fold_scores(data, blended, truth=truth)
        if not spec.better(float(np.mean(best_scores)), float(np.mean(fold_scores(data, pool[first], truth=truth)))):
            return None
    return Blend(
        keys=tuple(best_counts),
        weights=tuple(float(n) for n in best_counts.values()),
        fold_scores=[round(s, 6) for s in best_scores],
        oof=blended,
    )


def blend_test(blend: Blend, tests: dict[str, pd.DataFrame], regression: bool) -> pd.DataFrame:
    """The members' test predictions (each in test order) mixed as the blend mixes them."""
    first = tests[blend.keys[0]]
    stacker = blend.stacker.model_dump() if blend.stacker else None
    values = mix([tests[key] for key in blend.keys], list(blend.weights), stacker, regression)
    return pd.DataFrame(values, columns=first.columns)


def write_blend(
    ensemble: Ensemble, blend: Blend, data: CompetitionData, cv: CVScheme, tests: dict[str, pd.DataFrame], workdir: Path
) -> Evaluation:
    """The blend's files, made from its members' predictions: its standalone script (which reproduces them when
    run), its out-of-fold and test predictions, and its submission, labelled by a rule fitted on the blended
    out-of-fold predictions where the metric needs one."""
    started = time.monotonic()
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "solution.py"
    script.write_text(render_solution(ensemble, data.spec, cv), encoding="utf-8")
    id_column = data.spec.id_column
    oof = blend.oof.predictions.copy()
    oof.insert(0, "fold", blend.oof.folds)
    oof.insert(0, id_column, blend.oof.ids)
    oof.to_csv(workdir / OOF, index=False)
    predictions = blend_test(blend, tests, data.spec.task.is_regression)
    with_ids = predictions.copy()
    with_ids.insert(0, id_column, data.test_ids.to_numpy())
    with_ids.to_csv(workdir / TEST_PREDICTIONS, index=False)
    rule = decision_rule(data, blend.oof)
    submission_frame(data, predictions, rule).to_csv(workdir / SUBMISSION, index=False)
    log_loss = oof_log_loss(data, blend.oof)
    return Evaluation(
        status=CandidateStatus.succeeded,
        runtime_s=round(time.monotonic() - started, 3),
        cv_mean=blend.cv_mean,
        fold_scores=blend.fold_scores,
        script_path=script,
        submission_path=workdir / SUBMISSION,
        oof_path=workdir / OOF,
        test_predictions_path=workdir / TEST_PREDICTIONS,
        log_loss=None if log_loss is None else round(log_loss, 6),
    )
