"""The metrics themselves, as NumPy kernels over arrays, defined as Kaggle defines them.

Self-contained on purpose (NumPy only, no AGENT-K import): `agent_k.ml.render` copies this source into every
generated `solution.py`, whose decision rules (`decision`) must score exactly as the mission does. Labels are
integer codes 0..K-1 here; `metric_scoring` turns a competition's frames into these arrays.
"""

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

Array = npt.ArrayLike

EPS = 1e-15
Floats = npt.NDArray[np.float64]


def _floats(values: Array) -> Floats:
    return np.asarray(values, dtype=float)


def _ints(values: Array) -> npt.NDArray[np.int64]:
    return np.asarray(values, dtype=np.int64)


def rmse(y: Array, p: Array) -> float:
    return float(np.sqrt(np.mean((_floats(y) - _floats(p)) ** 2)))


def mae(y: Array, p: Array) -> float:
    return float(np.mean(np.abs(_floats(y) - _floats(p))))


def medae(y: Array, p: Array) -> float:
    return float(np.median(np.abs(_floats(y) - _floats(p))))


def pearson(y: Array, p: Array) -> float:
    """Pearson's correlation; 0 where either side is constant (it is undefined there, and nothing is explained)."""
    actual, predicted = _floats(y), _floats(p)
    if len(actual) < 2 or actual.std() == 0 or predicted.std() == 0:
        return 0.0
    return float(np.corrcoef(actual, predicted)[0, 1])


def _average_ranks(values: Floats) -> Floats:
    """Ranks from 1, ties sharing their mean rank (as scipy's `rankdata` and Spearman's coefficient have them)."""
    _, where, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return (ends - (counts - 1) / 2.0)[where.reshape(-1)]


def spearman(y: Array, p: Array) -> float:
    """Spearman's rank correlation: Pearson's on the average ranks."""
    return pearson(_average_ranks(_floats(y)), _average_ranks(_floats(p)))


def r2(y: Array, p: Array) -> float:
    actual, predicted = _floats(y), _floats(p)
    total = np.sum((actual - actual.mean()) ** 2)
    residual = np.sum((actual - predicted) ** 2)
    if total == 0:
        return 1.0 if residual == 0 else 0.0
    return float(1 - residual / total)


def rmsle(y: Array, p: Array) -> float:
    """Root mean squared logarithmic error; a negative prediction counts as 0 (Kaggle refuses them)."""
    actual, predicted = _floats(y), np.clip(_floats(p), 0, None)
    return float(np.sqrt(np.mean((np.log1p(predicted) - np.log1p(actual)) ** 2)))


def mape(y: Array, p: Array) -> float:
    """Mean absolute percentage error, as a fraction (a zero actual divides by the smallest float instead)."""
    actual, predicted = _floats(y), _floats(p)
    return float(np.mean(np.abs(actual - predicted) / np.maximum(np.abs(actual), np.finfo(float).eps)))


def smape(y: Array, p: Array) -> float:
    """Symmetric MAPE in percent (Kaggle's: 200*|F-A|/(|A|+|F|) averaged, where 0/0 counts 0)."""
    actual, predicted = _floats(y), _floats(p)
    denominator = np.abs(actual) + np.abs(predicted)
    safe = np.where(denominator == 0, 1.0, denominator)
    return float(100 * np.mean(np.where(denominator == 0, 0.0, 2 * np.abs(predicted - actual) / safe)))


def auc(y: Array, p: Array) -> float:
    """Area under the ROC curve of 0/1 labels `y` and scores `p` (ties count half)."""
    labels, scores = _ints(y), _floats(p)
    positives = int(labels.sum())
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return 0.5
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores), dtype=float)
    starts = np.r_[0, np.flatnonzero(np.diff(scores[order])) + 1]
    ends = np.r_[starts[1:], len(scores)]
    for start, end in zip(starts, ends, strict=True):
        ranks[order[start:end]] = (start + end + 1) / 2.0  # the mean rank of a run of ties (1-based)
    return float((ranks[labels == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def gini(y: Array, p: Array) -> float:
    """Kaggle's normalized Gini: the Gini of the predictions' ordering over that of a perfect one (for 0/1
    labels, 2*AUC - 1)."""
    actual, scores = _floats(y), _floats(p)

    def raw(ordered_by: Floats) -> float:
        order = np.lexsort((np.arange(len(actual)), -ordered_by))
        cumulative = np.cumsum(actual[order]) / actual.sum()
        return float(cumulative.sum() / len(actual) - (len(actual) + 1) / (2.0 * len(actual)))

    perfect = raw(actual)
    return raw(scores) / perfect if perfect else 0.0


def logloss(y: Array, probabilities: Array) -> float:
    """Multi-class log loss of integer labels and one probability column per class (rows renormalised)."""
    matrix = np.clip(_floats(probabilities), EPS, 1 - EPS)
    matrix = matrix / matrix.sum(axis=1, keepdims=True)
    return float(-np.mean(np.log(matrix[np.arange(len(matrix)), _ints(y)])))


def macro_auc(codes: Array, matrix: Array) -> float:
    """The mean one-vs-rest AUC of several classes (those both present and absent in the rows)."""
    labels, scores = _ints(codes), _floats(matrix)
    present = [c for c in range(scores.shape[1]) if 0 < (labels == c).sum() < len(labels)]
    return float(np.mean([auc(labels == c, scores[:, c]) for c in present]))


def binary_logloss(y: Array, p: Array) -> float:
    actual, predicted = _floats(y), np.clip(_floats(p), EPS, 1 - EPS)
    return float(-np.mean(actual * np.log(predicted) + (1 - actual) * np.log(1 - predicted)))


def _confusion(y: Array, labels: Array, k: int) -> Floats:
    cells = np.bincount(_ints(y) * k + _ints(labels), minlength=k * k)
    return np.asarray(cells[: k * k].reshape(k, k), dtype=float)


def accuracy(y: Array, labels: Array, k: int | None = None) -> float:
    return float(np.mean(_ints(y) == _ints(labels)))


def error(y: Array, labels: Array, k: int | None = None) -> float:
    """The share of rows labelled wrong (iNaturalist's top-1 classification error)."""
    return 1.0 - accuracy(y, labels)


def balanced_accuracy(y: Array, labels: Array, k: int) -> float:
    matrix = _confusion(y, labels, k)
    support = matrix.sum(axis=1)
    present = support > 0
    return float(np.mean(np.diag(matrix)[present] / support[present]))


def _f1_per_class(matrix: Floats) -> Floats:
    true_positives = np.diag(matrix)
    denominator = matrix.sum(axis=0) + matrix.sum(axis=1)
    return np.where(denominator == 0, 0.0, 2 * true_positives / np.where(denominator == 0, 1, denominator))


def f1(y: Array, labels: Array, k: int = 2) -> float:
    """F1 of the positive class (code 1) of a binary task."""
    return float(_f1_per_class(_confusion(y, labels, 2))[1])


def f1_macro(y: Array, labels: Array, k: int) -> float:
    """The mean of every class's F1, over the classes present in the labels or the predictions."""
    matrix = _confusion(y, labels, k)
    seen = (matrix.sum(axis=0) + matrix.sum(axis=1)) > 0
    return float(np.mean(_f1_per_class(matrix)[seen]))


def f1_micro(y: Array, labels: Array, k: int | None = None) -> float:
    """Micro F1 over single-label predictions: the share of rows labelled right."""
    return accuracy(y, labels)


def mcc(y: Array, labels: Array, k: int) -> float:
    """Matthews correlation coefficient, in its multi-class form (Gorodkin's R_K)."""
    matrix = _confusion(y, labels, k)
    total, correct = matrix.sum(), np.trace(matrix)
    predicted, actual = matrix.sum(axis=0), matrix.sum(axis=1)
    numerator = correct * total - predicted @ actual
    denominator = np.sqrt(total**2 - predicted @ predicted) * np.sqrt(total**2 - actual @ actual)
    return float(numerator / denominator) if denominator else 0.0


def qwk(y: Array, labels: Array, k: int) -> float:
    """Quadratic weighted kappa of ordered classes 0..k-1."""
    observed = _confusion(y, labels, k)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    grid = np.arange(k)
    weights = (grid[:, None] - grid[None, :]) ** 2 / max(1, (k - 1) ** 2)
    denominator = (weights * expected).sum()
    return float(1 - (weights * observed).sum() / denominator) if denominator else 0.0


def average_precision_at_k(actual: set[str], predicted: Sequence[str], k: int) -> float:
    """AP@k of one row: `actual` the relevant labels, `predicted` the ranked guesses (duplicates count once)."""
    if not actual:
        return 0.0
    hits, score, seen = 0, 0.0, set[str]()
    for rank, label in enumerate(list(predicted)[:k]):
        if label in actual and label not in seen:
            hits += 1
            score += hits / (rank + 1.0)
        seen.add(label)
    return score / min(len(actual), k)


def map_at_k(actual: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]], k: int) -> float:
    """Mean AP@k over rows: `actual` and `predicted` are lists of label lists."""
    return float(np.mean([average_precision_at_k(set(a), p, k) for a, p in zip(actual, predicted, strict=True)]))


SET_THRESHOLD = 0.5
"""A label joins a row's set when its score reaches this; a row where none does gets its best label alone."""


def chosen_labels(scores: Array) -> npt.NDArray[np.bool_]:
    """Which labels each row's set holds, by the fixed rule a submission's sets are written with (never fitted on
    the rows it labels): the labels scored at least SET_THRESHOLD, else the best one."""
    matrix = np.asarray(scores, dtype=float)
    chosen = matrix >= SET_THRESHOLD
    empty = ~chosen.any(axis=1)
    chosen[np.flatnonzero(empty), matrix[empty].argmax(axis=1)] = True
    return chosen


def f1_sets(truth: Array, scores: Array) -> float:
    """Micro F1 over the rows' sets of labels (plant-pathology-2021, imet): every (row, label) pair pooled, the
    sets chosen from the scores by `chosen_labels`."""
    actual, chosen = np.asarray(truth, dtype=float) > 0, chosen_labels(scores)
    hits = int((actual & chosen).sum())
    wrong = int((chosen & ~actual).sum()) + int((actual & ~chosen).sum())
    return 2 * hits / (2 * hits + wrong) if hits or wrong else 1.0


def lwlrap(truth: Array, scores: Array) -> float:
    """Label-weighted label-ranking average precision (freesound-audio-tagging): for every true label of every row,
    the share of true labels among the labels scored at least as high as it, averaged over all true labels (each
    row weighs as many labels as it has; a row without one weighs nothing). Ties count against it, as scikit-learn's
    `label_ranking_average_precision_score` counts them."""
    actual, predicted = np.asarray(truth, dtype=float) > 0, np.asarray(scores, dtype=float)
    precisions = []
    for row_truth, row_scores in zip(actual, predicted, strict=True):
        true_scores = row_scores[row_truth]
        if true_scores.size == 0:
            continue
        at_least = (row_scores[None, :] >= true_scores[:, None]).sum(axis=1)
        true_at_least = (true_scores[None, :] >= true_scores[:, None]).sum(axis=1)
        precisions.append(true_at_least / at_least)
    return float(np.concatenate(precisions).mean()) if precisions else 0.0


LABEL_KERNELS: dict[str, Callable[[Array, Array, int], float]] = {
    "accuracy": accuracy,
    "balanced_accuracy": balanced_accuracy,
    "error_rate": error,
    "f1": f1,
    "f1_macro": f1_macro,
    "f1_micro": f1_micro,
    "mcc": mcc,
    "qwk": qwk,
}
"""Metrics of predicted labels (integer codes), each called as kernel(y, labels, number_of_classes)."""
