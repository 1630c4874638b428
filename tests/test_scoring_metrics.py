"""Kaggle's metric family (issue 27): every metric, computed by our code through `metric_scoring.score`, matches a
reference implementation on random inputs (scikit-learn's, or the formula Kaggle publishes), and is maximised or
minimised the way the competition says; decision rules come from out-of-fold predictions only."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats
from sklearn import metrics as skm

from agent_k.competition import Competition, TaskType, metric_scoring
from agent_k.competition.decision import apply_rule, fit_rule
from agent_k.competition.metric_table import BUILTIN_METRICS

RNG = np.random.default_rng(20261125)
N = 400


def _spec(metric: str, task: TaskType, classes: list[str] | None = None, **extra: object) -> Competition:
    fields: dict[str, object] = {"target": "y", **extra}
    return Competition(id="m", title="m", task=task, metric=metric, classes=classes, **fields)  # type: ignore[arg-type]


def _kaggle_gini(actual: np.ndarray, predicted: np.ndarray) -> float:
    """The normalized Gini as Kaggle's Porto Seguro kernel wrote it (sort by prediction, ties by index)."""

    def gini(a: np.ndarray, p: np.ndarray) -> float:
        table = np.asarray(np.c_[a, p, np.arange(len(a))], dtype=float)
        table = table[np.lexsort((table[:, 2], -1 * table[:, 1]))]
        total = table[:, 0].sum()
        return float((table[:, 0].cumsum().sum() / total - (len(a) + 1) / 2.0) / len(a))

    return gini(actual, predicted) / gini(actual, actual)


def _kaggle_smape(actual: np.ndarray, forecast: np.ndarray) -> float:
    total = 0.0
    for a, f in zip(actual, forecast, strict=True):
        denominator = abs(a) + abs(f)
        total += 0.0 if denominator == 0 else 2 * abs(f - a) / denominator
    return 100 * total / len(actual)


def _ml_metrics_apk(actual: list[str], predicted: list[str], k: int) -> float:
    """`apk` of Ben Hamner's ml_metrics (Kaggle's reference for MAP@k)."""
    predicted = predicted[:k]
    score, hits = 0.0, 0.0
    for i, p in enumerate(predicted):
        if p in actual and p not in predicted[:i]:
            hits += 1.0
            score += hits / (i + 1.0)
    return score / min(len(actual), k) if actual else 0.0


def _regression(metric: str, reference: object, *, positive: bool = False) -> None:
    y = RNG.gamma(2.0, 50.0, N) if positive else RNG.normal(100, 30, N)
    p = np.clip(y + RNG.normal(0, 20, N), 0, None) if positive else y + RNG.normal(0, 20, N)
    ours = metric_scoring.score(_spec(metric, TaskType.regression), pd.Series(y), pd.DataFrame({"y": p}))
    assert ours == pytest.approx(reference(y, p), rel=1e-9)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("metric", "reference", "positive"),
    [
        ("rmse", lambda y, p: math.sqrt(skm.mean_squared_error(y, p)), False),
        ("mae", skm.mean_absolute_error, False),
        ("medae", skm.median_absolute_error, False),
        ("r2", skm.r2_score, False),
        ("rmsle", lambda y, p: math.sqrt(skm.mean_squared_log_error(y, p)), True),
        ("mape", skm.mean_absolute_percentage_error, True),
        ("smape", _kaggle_smape, False),
        ("gini", _kaggle_gini, True),
        ("pearson", lambda y, p: scipy_stats.pearsonr(y, p)[0], False),
        ("spearman", lambda y, p: scipy_stats.spearmanr(y, p).correlation, False),
    ],
)
def test_value_metrics_match_their_references(metric: str, reference: object, positive: bool) -> None:
    _regression(metric, reference, positive=positive)


def _labels(k: int, noise: float = 0.4) -> tuple[np.ndarray, np.ndarray]:
    y = RNG.integers(0, k, N)
    predicted = np.where(RNG.random(N) < noise, RNG.integers(0, k, N), y)
    return y, predicted


@pytest.mark.parametrize(
    ("metric", "k", "reference"),
    [
        ("f1", 2, lambda y, p: skm.f1_score(y, p)),
        ("f1_macro", 4, lambda y, p: skm.f1_score(y, p, average="macro")),
        ("f1_micro", 4, lambda y, p: skm.f1_score(y, p, average="micro")),
        ("mcc", 2, skm.matthews_corrcoef),
        ("mcc", 5, skm.matthews_corrcoef),
        ("balanced_accuracy", 3, skm.balanced_accuracy_score),
        ("accuracy", 3, skm.accuracy_score),
        ("error_rate", 4, lambda y, p: 1 - skm.accuracy_score(y, p)),
        ("qwk", 6, lambda y, p: skm.cohen_kappa_score(y, p, weights="quadratic")),
    ],
)
def test_label_metrics_match_their_references(metric: str, k: int, reference: object) -> None:
    classes = [str(c) for c in range(k)]
    task = TaskType.binary if k == 2 else TaskType.multiclass
    y, predicted = _labels(k)
    truth, frame = pd.Series(y), pd.DataFrame({"y": predicted})
    ours = metric_scoring.score(_spec(metric, task, classes), truth, frame)
    assert ours == pytest.approx(reference(y, predicted), rel=1e-9)  # type: ignore[operator]


def test_probability_metrics_match_scikit_learn() -> None:
    y = RNG.integers(0, 2, N)
    p = np.clip(0.3 * y + RNG.random(N) * 0.7, 0, 1).round(2)  # rounded: ties, which AUC counts as halves
    for metric, reference in (("auc", skm.roc_auc_score), ("logloss", skm.log_loss), ("gini", None)):
        ours = metric_scoring.score(_spec(metric, TaskType.binary, ["0", "1"]), pd.Series(y), pd.DataFrame({"y": p}))
        expected = 2 * skm.roc_auc_score(y, p) - 1 if reference is None else reference(y, p)
        assert ours == pytest.approx(expected, rel=1e-6 if reference else 2e-2), metric

    k, labels = 4, RNG.integers(0, 4, N)
    matrix = RNG.dirichlet(np.ones(k), N) + np.eye(k)[labels] * 0.5
    matrix /= matrix.sum(axis=1, keepdims=True)
    classes = [f"c{i}" for i in range(k)]
    truth, frame = pd.Series([classes[i] for i in labels]), pd.DataFrame(matrix, columns=classes)
    spec = _spec("logloss", TaskType.multiclass, classes)
    assert metric_scoring.score(spec, truth, frame) == pytest.approx(skm.log_loss(labels, matrix), rel=1e-9)
    spec = _spec("auc", TaskType.multiclass, classes)
    expected = skm.roc_auc_score(labels, matrix, multi_class="ovr", average="macro")
    assert metric_scoring.score(spec, truth, frame) == pytest.approx(expected, rel=1e-9)


def test_column_wise_metrics_of_several_targets_match_scikit_learn() -> None:
    targets = ["toxic", "obscene", "insult"]
    truth = pd.DataFrame({t: RNG.integers(0, 2, N) for t in targets})
    predicted = pd.DataFrame({t: np.clip(truth[t] * 0.4 + RNG.random(N) * 0.6, 0, 1) for t in targets})
    for metric, reference in (("mean_auc", skm.roc_auc_score), ("mean_logloss", skm.log_loss)):
        spec = _spec(metric, TaskType.multilabel, targets=targets, target=targets[0])
        expected = np.mean([reference(truth[t], predicted[t]) for t in targets])
        assert metric_scoring.score(spec, truth, predicted) == pytest.approx(expected, rel=1e-9)
    numbers = pd.DataFrame({t: RNG.normal(0, 1, N) for t in targets})
    guesses = numbers + RNG.normal(0, 0.5, (N, 3))
    spec = _spec("rmse", TaskType.multioutput, targets=targets, target=targets[0])
    expected = np.mean([math.sqrt(skm.mean_squared_error(numbers[t], guesses[t])) for t in targets])
    assert metric_scoring.score(spec, numbers, guesses) == pytest.approx(expected, rel=1e-9)  # MCRMSE


def test_map_at_k_matches_the_ml_metrics_reference() -> None:
    classes = [f"label{i}" for i in range(8)]
    truth = pd.Series(RNG.choice(classes, N))
    ranked = [" ".join(RNG.permutation(classes)[: RNG.integers(1, 4)]) for _ in range(N)]
    spec = _spec("map_at_k", TaskType.multiclass, classes, top_k=3)
    expected = np.mean([_ml_metrics_apk([t], r.split(), 3) for t, r in zip(truth, ranked, strict=True)])
    assert metric_scoring.score(spec, truth, pd.DataFrame({"y": ranked})) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("metric", [m.name for m in BUILTIN_METRICS])
def test_every_metric_prefers_the_right_answer_in_its_own_direction(metric: str) -> None:
    """A perfect prediction beats a poor one under `better`, so the declared direction is right."""
    classes = [str(c) for c in range(3)]
    if metric in ("rmse", "mae", "r2", "rmsle", "mape", "smape", "medae", "gini", "pearson", "spearman"):
        spec, y = _spec(metric, TaskType.regression), pd.Series(RNG.gamma(2.0, 5.0, N) + 1)
        good, poor = pd.DataFrame({"y": y}), pd.DataFrame({"y": y.sample(frac=1, random_state=1).to_numpy()})
    elif metric in ("mean_auc", "mean_logloss", "lwlrap", "f1_sets"):
        targets = ["a", "b"]
        spec = _spec(metric, TaskType.multilabel, targets=targets, target="a")
        y = pd.DataFrame({t: RNG.integers(0, 2, N) for t in targets})
        good, poor = y.clip(0.02, 0.98).astype(float), (1 - y).clip(0.02, 0.98).astype(float)
    elif metric in ("auc", "logloss"):
        spec, y = _spec(metric, TaskType.binary, ["0", "1"]), pd.Series(RNG.integers(0, 2, N).astype(str))
        good = pd.DataFrame({"y": y.astype(float).clip(0.02, 0.98)})
        poor = pd.DataFrame({"y": 1 - good["y"]})
    elif metric == "map_at_k":
        spec, y = _spec(metric, TaskType.multiclass, classes, top_k=2), pd.Series(RNG.choice(classes, N))
        good = pd.DataFrame({"y": y.to_numpy()})
        poor = pd.DataFrame({"y": [classes[(int(v) + 1) % 3] for v in y]})
    else:
        task = TaskType.binary if metric == "f1" else TaskType.multiclass
        classes = ["0", "1"] if metric == "f1" else classes
        spec, y = _spec(metric, task, classes), pd.Series(RNG.choice(classes, N))
        good = pd.DataFrame({"y": y.to_numpy()})
        poor = pd.DataFrame({"y": [classes[(int(v) + 1) % len(classes)] for v in y]})
    assert spec.better(metric_scoring.score(spec, y, good), metric_scoring.score(spec, y, poor)), metric


def test_a_threshold_comes_from_the_labels_it_is_fitted_on_and_no_others() -> None:
    """F1 of a rare class wants a threshold well below 0.5; it is found from the rows given, and rows kept
    out (a held-out fold, the test rows) cannot move it."""
    y = (RNG.random(N) < 0.15).astype(int)
    p = 0.15 * y + RNG.random(N) * 0.35  # a model that never dares 0.5: the argmax finds no positive at all
    matrix = np.c_[1 - p, p]
    fitted, held_out = slice(0, 300), slice(300, N)
    rule = fit_rule("f1", y[fitted], matrix[fitted])
    assert rule["kind"] == "threshold" and rule["value"] < 0.5
    shuffled = y.copy()
    shuffled[held_out] = 1 - shuffled[held_out]
    assert fit_rule("f1", shuffled[fitted], matrix[fitted]) == rule
    tuned = skm.f1_score(y[held_out], apply_rule(rule, matrix[held_out]))
    assert tuned > skm.f1_score(y[held_out], matrix[held_out].argmax(axis=1))


def test_kappa_cut_points_and_class_weights_beat_the_argmax() -> None:
    values = np.arange(6.0)
    y = RNG.integers(0, 6, N)
    logits = -((values[None, :] - (y[:, None] + RNG.normal(0, 1.2, (N, 1)))) ** 2) / 2
    matrix = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    flat = 0.6 * matrix + 0.4 / 6  # an over-smoothed model: its argmax undershoots the extremes
    rule = fit_rule("qwk", y, flat, class_values=values)
    assert rule["kind"] == "cuts"
    kappa = skm.cohen_kappa_score(y, apply_rule(rule, flat), weights="quadratic")
    assert kappa >= skm.cohen_kappa_score(y, flat.argmax(axis=1), weights="quadratic")
    rule = fit_rule("balanced_accuracy", y % 3, np.c_[flat[:, :2].sum(1), flat[:, 2:4].sum(1), flat[:, 4:].sum(1)])
    assert rule["kind"] == "weights" and len(rule["values"]) == 3


def test_spearman_ranks_ties_as_scipy_does_and_a_constant_column_explains_nothing() -> None:
    """google-quest's targets are raters' fractions, so most values tie; a column predicted as one constant has no
    correlation (0, where scipy says NaN)."""
    y = RNG.integers(0, 4, N) / 3
    p = (y + RNG.normal(0, 0.3, N)).round(1)
    spec = _spec("spearman", TaskType.regression)
    ours = metric_scoring.score(spec, pd.Series(y), pd.DataFrame({"y": p}))
    assert ours == pytest.approx(scipy_stats.spearmanr(y, p).correlation, rel=1e-12)
    assert metric_scoring.score(spec, pd.Series(y), pd.DataFrame({"y": np.full(N, 0.5)})) == 0.0


def test_lwlrap_is_label_ranking_average_precision_weighted_by_labels() -> None:
    """freesound-audio-tagging's metric, as the code given to its participants computes it (scikit-learn's LRAP,
    each row weighted by its number of labels, rows without one left out); ties count against a label."""
    tags = [f"t{k}" for k in range(8)]
    truth = pd.DataFrame((RNG.random((N, len(tags))) < 0.2).astype(int), columns=tags)
    scores = pd.DataFrame((truth * 0.3 + RNG.random((N, len(tags)))).round(1), columns=tags)
    spec = _spec("lwlrap", TaskType.multilabel, targets=tags, target=tags[0])
    labelled = truth.sum(axis=1).to_numpy()
    rows = labelled > 0
    expected = skm.label_ranking_average_precision_score(
        truth.to_numpy()[rows] > 0, scores.to_numpy()[rows], sample_weight=labelled[rows]
    )
    assert metric_scoring.score(spec, truth, scores) == pytest.approx(expected, rel=1e-12)


def test_f1_over_sets_is_micro_f1_of_the_sets_the_fixed_rule_chooses() -> None:
    """plant-pathology-2021's metric (its grade.py: scikit-learn's micro F1 over binarised sets) of the sets a
    submission writes: the labels scored at least 0.5, else a row's best one (never an empty set)."""
    tags = [f"t{k}" for k in range(6)]
    truth = pd.DataFrame((RNG.random((N, len(tags))) < 0.3).astype(int), columns=tags)
    scores = pd.DataFrame(RNG.random((N, len(tags))) * 0.9, columns=tags)
    chosen = (scores >= 0.5).to_numpy().copy()
    empty = ~chosen.any(axis=1)
    chosen[np.flatnonzero(empty), scores.to_numpy()[empty].argmax(axis=1)] = True
    assert chosen.any(axis=1).all() and empty.any(), "some rows fall back to their best label"
    spec = _spec("f1_sets", TaskType.multilabel, targets=tags, target=tags[0])
    expected = skm.f1_score(truth.to_numpy(), chosen.astype(int), average="micro")
    assert metric_scoring.score(spec, truth, scores) == pytest.approx(expected, rel=1e-12)
