"""Values as text levels, for grouping, matching and joining rows by what their columns hold.

pandas 3's `astype(str)` keeps a missing value missing (NaN in a string column), where pandas 2 wrote "nan": joined
into a row's key it fails, sorted beside text it fails, and `groupby` drops its rows. A missing value is a level of
its own here (Namibia's country code "NA" reads as missing, and its rows are still a series).

Class labels are text levels too (`label_strings`): the one rule by which the platform, the runner and every
script name classes.

Self-contained (NumPy, pandas): generated solutions embed it before the folds and forecasting code
(`agent_k.ml.render`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

MISSING = "\x00missing"
"""The level of a missing value: no text a table holds."""


def as_text(values: pd.Series) -> pd.Series:
    """Each value as text, a missing one as `MISSING`."""
    return values.astype(object).where(values.notna(), MISSING).astype(str)


def row_keys(frame: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """Each row's values in `columns` as one text key (one key for every row where there are no columns)."""
    if not columns:
        return pd.Series("all", index=frame.index)
    keys = as_text(frame[columns[0]])
    for column in columns[1:]:
        keys = keys + "|" + as_text(frame[column])
    return keys


def label_strings(values: Any) -> pd.Series:
    """Class labels as text, so that 1, 1.0 and "1" from different files are one class and True stays True (not 1).
    Each number is written on its own: a whole one without its decimals whatever the others are, so predictions of
    only whole classes name them as the training labels do where one class is 13.5 (years of schooling)."""
    labels = pd.Series(values)
    if pd.api.types.is_numeric_dtype(labels) and not pd.api.types.is_bool_dtype(labels):
        numeric = labels.astype(float)
        whole = np.isfinite(numeric) & (numeric == np.round(numeric))
        return numeric.astype(str).where(~whole, numeric.where(whole, 0.0).astype("int64").astype(str))
    return labels.astype(str)
