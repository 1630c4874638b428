"""A metric AGENT-K does not ship, declared the way a plug-in would: this file alone."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agent_k.competition import Metric, TaskType, declare


def share_within_tenth(y: npt.ArrayLike, p: npt.ArrayLike) -> float:
    """The share of predictions within 10% of the true value (higher is better)."""
    actual, predicted = np.asarray(y, dtype=float), np.asarray(p, dtype=float)
    return float(np.mean(np.abs(predicted - actual) <= 0.1 * np.abs(actual)))


WITHIN_TENTH = declare(
    Metric(
        name="within_tenth",
        maximize=True,
        scored_on="values",
        usual_task=TaskType.regression,
        kernel=share_within_tenth,
        non_negative_target=True,
        constant="median",
        kaggle=("within 10 percent",),
    )
)
