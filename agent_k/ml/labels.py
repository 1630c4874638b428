"""Rows with a label we can score against, as opposed to rows a file carries for other reasons (a units row
under the header, a blank separator line): those have no id, or a target that is no label for the task."""

from __future__ import annotations

import io

import pandas as pd

from agent_k.competition import Competition, TaskType


def labelled(frame: pd.DataFrame, competition: Competition) -> pd.Series:
    """True for each row with an id and a target that is a label for the task (a number, for regression)."""
    target = frame[competition.target]
    usable = frame[competition.id_column].notna() & target.notna()
    if competition.task is TaskType.regression and not pd.api.types.is_numeric_dtype(target):
        usable &= pd.to_numeric(target, errors="coerce").notna()
    return usable


def reinfer(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows again with the types pandas infers for them alone (a units row had made every column text)."""
    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))
