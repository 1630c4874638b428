"""Decision rules: how a model's class probabilities become the labels a label-scored metric (F1, MCC, kappa,
accuracy, balanced accuracy) is computed on. Always fitted on out-of-fold predictions, never on the rows scored:
the mission cross-fits them (each fold's rule from the other folds) for an honest CV score, and a solution fits
one on all its out-of-fold predictions before labelling the test rows.

- two classes: a threshold on P(second class);
- ordered numeric classes under quadratic weighted kappa: cut points on the expected class value;
- otherwise: a weight per class, the label being the argmax of weighted probabilities.

Self-contained (NumPy and `metric_kernels` only): `agent_k.ml.render` copies it into every generated `solution.py`.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_k.competition.metric_kernels import LABEL_KERNELS, Array

Rule = dict[str, Any]
Floats = npt.NDArray[np.float64]

WEIGHTS = np.geomspace(0.25, 4.0, 13)
PASSES = 3
THRESHOLDS = 255


def fit_rule(metric: str, codes: Array, probabilities: Array, class_values: Array | None = None) -> Rule:
    """The rule that labels `probabilities` (rows x classes) best under `metric`, judged against `codes`
    (the true classes as 0..K-1). `class_values`: the classes as numbers, given for an ordinal metric (kappa),
    whose rule may cut the expected class value."""
    truth = np.asarray(codes, dtype=np.int64)
    matrix = np.asarray(probabilities, dtype=float)
    k = matrix.shape[1]
    kernel = LABEL_KERNELS[metric]

    def quality(labels: Array) -> float:
        return kernel(truth, labels, k)

    if class_values is not None and k > 2:
        return _fit_cuts(quality, matrix, np.asarray(class_values, dtype=float), truth)
    if k == 2:
        scores = matrix[:, 1]
        candidates = np.unique(np.r_[0.5, np.quantile(scores, np.linspace(0, 1, THRESHOLDS))])
        results = [(quality((scores >= t).astype(int)), -abs(t - 0.5), float(t)) for t in candidates]
        return {"kind": "threshold", "value": max(results)[2]}
    weights = np.ones(k)
    best = quality(np.argmax(matrix, axis=1))
    for _ in range(PASSES):
        for c in range(k):
            for w in WEIGHTS:
                trial = weights.copy()
                trial[c] = w
                value = quality(np.argmax(matrix * trial, axis=1))
                if value > best + 1e-12:
                    best, weights = value, trial
    return {"kind": "weights", "values": [float(w) for w in weights]}


def _fit_cuts(quality: Callable[[Array], float], matrix: Floats, values: Floats, codes: Array) -> Rule:
    """Cut points on the expected class value: first where they give the fitted rows' class proportions, then
    each moved between its neighbours while the metric improves. Never worse there than the argmax."""
    expected = matrix @ values
    counts = np.bincount(np.asarray(codes, dtype=np.int64), minlength=len(values))
    cuts = np.maximum.accumulate(np.quantile(expected, np.cumsum(counts)[:-1] / len(expected)))
    best = quality(np.searchsorted(cuts, expected))
    for _ in range(PASSES):
        for i in range(len(cuts)):
            low = cuts[i - 1] if i else expected.min()
            high = cuts[i + 1] if i + 1 < len(cuts) else expected.max()
            inside = expected[(expected >= low) & (expected <= high)]
            for candidate in np.unique(np.quantile(inside, np.linspace(0, 1, 25))) if len(inside) else ():
                trial = cuts.copy()
                trial[i] = candidate
                value = quality(np.searchsorted(trial, expected))
                if value > best + 1e-12:
                    best, cuts = value, trial
    if quality(np.argmax(matrix, axis=1)) > best:
        return {"kind": "weights", "values": [1.0] * len(values)}
    return {"kind": "cuts", "values": [float(c) for c in cuts], "class_values": [float(v) for v in values]}


def apply_rule(rule: Rule | None, probabilities: Array) -> npt.NDArray[np.int64]:
    """Class codes (0..K-1) for each row of `probabilities` under `rule` (None: the most probable class)."""
    matrix = np.asarray(probabilities, dtype=float)
    rule = rule or {"kind": "argmax"}
    if rule["kind"] == "threshold":
        labels = matrix[:, 1] >= rule["value"]
    elif rule["kind"] == "weights":
        labels = np.argmax(matrix * np.asarray(rule["values"], dtype=float), axis=1)
    elif rule["kind"] == "cuts":
        expected = matrix @ np.asarray(rule["class_values"], dtype=float)
        labels = np.searchsorted(np.asarray(rule["values"], dtype=float), expected)
    else:
        labels = np.argmax(matrix, axis=1)
    return np.asarray(labels, dtype=np.int64)
