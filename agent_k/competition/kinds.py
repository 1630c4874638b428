"""The kinds a competition comes in: its task, its metric (and which way is better), what a submission row holds.

Plain enums and literals, so that the command line can offer them as choices without loading pydantic.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args

MetricName = Literal[
    "auc",
    "accuracy",
    "logloss",
    "rmse",
    "mae",
    "r2",
    "rmsle",
    "mape",
    "smape",
    "medae",
    "f1",
    "f1_macro",
    "f1_micro",
    "mcc",
    "balanced_accuracy",
    "qwk",
    "gini",
    "map_at_k",
    "mean_auc",
    "mean_logloss",
]
METRICS: tuple[str, ...] = get_args(MetricName)

MAXIMIZED: frozenset[str] = frozenset(
    {"auc", "accuracy", "r2", "f1", "f1_macro", "f1_micro", "mcc", "balanced_accuracy", "qwk", "gini", "map_at_k"}
    | {"mean_auc"}
)
REGRESSION_METRICS: frozenset[str] = frozenset({"rmse", "mae", "r2", "rmsle", "mape", "smape", "medae"})
LABEL_METRICS: frozenset[str] = frozenset({"accuracy", "f1", "f1_macro", "f1_micro", "mcc", "balanced_accuracy", "qwk"})
"""Scored on predicted labels: a model's probabilities become labels by a decision rule fitted on out-of-fold
predictions (a threshold, class weights, or cut points)."""
RULE_METRICS: frozenset[str] = LABEL_METRICS - {"accuracy", "f1_micro"}
"""Label metrics whose labels come by a fitted rule; accuracy (and micro F1, the same for one label a row) is
served best by the most probable class, which a fitted rule would only add noise to."""
MULTILABEL_METRICS: frozenset[str] = frozenset({"mean_auc", "mean_logloss"})
"""Averaged over several 0/1 target columns, each scored on its probabilities."""
NON_NEGATIVE_METRICS: frozenset[str] = frozenset({"rmsle"})
"""Defined for non-negative predictions only: a submission's values are clipped at 0, and a negative one refused."""
BINARY_METRICS: frozenset[str] = frozenset({"f1"})
"""Defined for two classes only (macro and micro F1 take any number)."""


TimeFormat = Literal["datetime", "yyyymmdd", "yyyymm", "epoch", "year-month", "number"]
"""How a time column is written (a year and a month column together are `year-month`)."""

TestSplit = Literal["auto", "random", "future", "group"]
"""How a competition made from one labelled table hides its test rows: at random, the future (the last time
steps), or whole entities; `auto` chooses from what the rows are known to be (timed, grouped)."""


class TaskType(StrEnum):
    binary = "binary"
    multiclass = "multiclass"
    regression = "regression"
    multilabel = "multilabel"
    """Several 0/1 target columns, each predicted as a probability."""
    multioutput = "multioutput"
    """Several numeric target columns (multi-target regression)."""


class PredictionKind(StrEnum):
    """What a submission row holds: a value/label, P(positive class), one probability per class (or per target
    column), or a space-separated list of labels ranked best first (MAP@k)."""

    value = "value"
    probability = "probability"
    probabilities = "probabilities"
    ranked = "ranked"
