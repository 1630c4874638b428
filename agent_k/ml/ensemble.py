"""Ensemble selection (Caruana et al., 2004): a weighted blend of candidates' out-of-fold predictions.

Greedy forward selection with replacement: start from the best candidate, then repeatedly add the one whose
inclusion most improves the blended CV score. The weights are how often each member was picked. Blending
happens in prediction space (values, or class probabilities), exactly as the rendered ensemble script does.
Weights are pick counts; the script normalises them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from agent_k.competition import metrics
from agent_k.ml.evaluate import CompetitionData, OutOfFold, fold_scores, needs_rule, oof_truth

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

    @property
    def cv_mean(self) -> float:
        return float(np.mean(self.fold_scores))


def _blend(pool: dict[str, np.ndarray], counts: dict[str, int], like: OutOfFold) -> OutOfFold:
    total = sum(counts.values())
    values = np.zeros(like.predictions.shape)
    for key, n in counts.items():
        values += pool[key] * (n / total)
    return OutOfFold(like.ids, like.folds, pd.DataFrame(values, columns=like.predictions.columns))


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

    def score(counts: dict[str, int]) -> tuple[float, list[float]]:
        """The mix's CV (its log loss, where the metric scores labels by fitted rules: a proper score of the
        probabilities being mixed, and a hundred rule fits cheaper)."""
        mixed = _blend(values, counts, like)
        if by_log_loss:
            loss = metrics.log_loss(spec, truth, mixed.predictions)
            return -loss, [-loss]
        scores = fold_scores(data, mixed, truth=truth)
        return float(np.mean(scores)), scores

    def better(a: float, b: float) -> bool:
        return a > b if by_log_loss or spec.maximize else a < b

    counts = {first: 1}
    best_mean, best_scores = score(counts)
    best_counts = dict(counts)
    stale = 0
    for _ in range(rounds):
        if stale >= PATIENCE:  # more picks of the same members only re-weigh what already stopped helping
            break
        options = [k for k in pool if k in counts or len(counts) < MAX_MEMBERS]
        trials = [(score({**counts, key: counts.get(key, 0) + 1}), key) for key in options]
        (mean, scores), key = max(trials, key=lambda t: t[0][0] if by_log_loss or spec.maximize else -t[0][0])
        counts[key] = counts.get(key, 0) + 1
        if better(mean, best_mean):
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
