"""Values as text levels, for grouping, matching and joining rows by what their columns hold.

pandas 3's `astype(str)` keeps a missing value missing (NaN in a string column), where pandas 2 wrote "nan": joined
into a row's key it fails, sorted beside text it fails, and `groupby` drops its rows. A missing value is a level of
its own here (Namibia's country code "NA" reads as missing, and its rows are still a series).

Self-contained (pandas): generated solutions embed it before the folds and forecasting code (`agent_k.ml.render`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

MISSING = "\x00missing"
"""The level of a missing value: no text a table holds."""


def as_text(values: pd.Series) -> pd.Series:
    """Each value as text, a missing one as `MISSING`."""
    return values.astype(object).where(values.notna(), MISSING).astype(str)


def row_keys(frame: pd.DataFrame, columns: Sequence[str], sep: str = "|") -> pd.Series:
    """Each row's values in `columns` as one text key (one key for every row where there are no columns)."""
    if not columns:
        return pd.Series("all", index=frame.index)
    keys = as_text(frame[columns[0]])
    for column in columns[1:]:
        keys = keys + sep + as_text(frame[column])
    return keys
