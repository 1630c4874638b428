"""Which rows of a labelled table become a local competition's hidden test rows, as Kaggle would choose them:
at random; the future (each series' last `horizon` time steps, for a forecast); or whole entities the training
rows never show (for grouped data)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from agent_k.competition.levels import as_text
from agent_k.competition.metric_scoring import normalize_labels
from agent_k.competition.timing import parse_time, time_order

SEED = 20241
TEST_FRACTION = 0.25


@dataclass(frozen=True)
class HiddenRows:
    kind: Literal["random", "future", "group"] = "random"
    time: dict[str, Any] | None = None
    """For `future`: how to read the time (`agent_k.ml.forecasting.parse_time`'s spec)."""
    horizon: int | None = None
    """For `future`: the last this many distinct times are hidden (default: the last quarter)."""
    group: str | None = None
    """For `group`: the entity column whose values are hidden whole."""


RANDOM = HiddenRows()


def hidden_mask(frame: pd.DataFrame, how: HiddenRows, stratify: pd.Series | None) -> np.ndarray:
    """True for the rows to hide."""
    if how.kind == "future":
        assert how.time is not None
        order = time_order(parse_time(frame, how.time))
        steps = np.unique(order[np.isfinite(order)])
        horizon = how.horizon or max(1, round(len(steps) * TEST_FRACTION))
        if horizon >= len(steps):
            raise ValueError(f"the horizon ({horizon} steps) leaves no training time ({len(steps)} steps in all)")
        return np.asarray(order >= steps[-horizon])
    if how.kind == "group":
        assert how.group is not None
        entities = as_text(frame[how.group])
        names = np.unique(entities)
        rng = np.random.default_rng(SEED)
        hidden = set(rng.choice(names, max(1, round(len(names) * TEST_FRACTION)), replace=False))
        return np.asarray(entities.isin(hidden))
    from sklearn.model_selection import train_test_split

    if stratify is not None and normalize_labels(stratify).value_counts().min() < 2:
        stratify = None
    rows = np.arange(len(frame))
    _, test_rows = train_test_split(rows, test_size=TEST_FRACTION, random_state=SEED, stratify=stratify)
    mask = np.zeros(len(frame), dtype=bool)
    mask[test_rows] = True
    return mask
