"""The kinds a competition comes in: its task, what a submission row holds, how its time and test rows are laid out.

Plain enums and literals, so that the command line can offer them as choices without loading pydantic. Metrics
are declared in `agent_k.competition.metric`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

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

    @property
    def is_regression(self) -> bool:
        """Numbers are predicted (one target column or several), never classes or their probabilities."""
        return self in (TaskType.regression, TaskType.multioutput)

    @property
    def has_several_targets(self) -> bool:
        """Several target columns (multilabel, multi-target regression), each predicted in a column of its own."""
        return self in (TaskType.multilabel, TaskType.multioutput)


class PredictionKind(StrEnum):
    """What a submission row holds: a value/label, P(positive class), one probability per class (or per target
    column), or a space-separated list of labels ranked best first (MAP@k)."""

    value = "value"
    probability = "probability"
    probabilities = "probabilities"
    ranked = "ranked"
