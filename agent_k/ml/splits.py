"""A competition's training table cut into its validation folds, on the runner's side (the harness, the rows a
scheme scores): the very folds a rendered solution makes for itself (`agent_k.ml.folds`, which it embeds)."""

from __future__ import annotations

import pandas as pd

from agent_k.competition import Competition, TaskType
from agent_k.competition.metric_scoring import normalize_labels
from agent_k.competition.research import CVScheme
from agent_k.competition.timing import parse_time, time_order
from agent_k.ml.folds import Split, make_folds


def fold_columns(spec: Competition, cv: CVScheme) -> list[str]:
    """The training columns the folds are made from, beside the id."""
    columns = list(spec.target_columns)
    if cv.group_column:
        columns.append(cv.group_column)
    if cv.kind == "forward" and cv.time is not None:
        columns += cv.time.columns
    return list(dict.fromkeys(columns))


def splits(train: pd.DataFrame, spec: Competition, cv: CVScheme) -> list[Split]:
    """(training rows, scored rows) of each fold, as positions in `train`."""
    single_label = spec.task in (TaskType.binary, TaskType.multiclass)
    labels = normalize_labels(train[spec.target]) if single_label else None
    groups = train[cv.group_column] if cv.group_column and cv.group_column in train.columns else None
    times = None
    if cv.kind == "forward" and cv.time is not None:
        times = time_order(parse_time(train, cv.time.spec()))
    return make_folds(cv.plan(), len(train), labels=labels, groups=groups, times=times)
