"""The kinds a competition comes in: its task, its metric (and which way is better), what a submission row holds.

Plain enums and literals, so that the command line can offer them as choices without loading pydantic.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

MetricName = Literal["auc", "accuracy", "logloss", "rmse", "mae", "r2"]


MAXIMIZED: frozenset[str] = frozenset({"auc", "accuracy", "r2"})
REGRESSION_METRICS: frozenset[str] = frozenset({"rmse", "mae", "r2"})


class TaskType(StrEnum):
    binary = "binary"
    multiclass = "multiclass"
    regression = "regression"


class PredictionKind(StrEnum):
    """What a submission row holds: a value/label, P(positive class), or one probability per class."""

    value = "value"
    probability = "probability"
    probabilities = "probabilities"
