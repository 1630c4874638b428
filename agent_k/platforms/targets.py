"""What a competition's target columns make, read the same way by every platform: the task and its classes under
the metric, and the sample submission a platform hands out."""

from __future__ import annotations

import pandas as pd

from agent_k.competition import Competition, PredictionKind, TaskType
from agent_k.competition.metric_scoring import normalize_labels
from agent_k.competition.registry import metric_named


class CompetitionInputError(ValueError):
    """The tables given for a new competition cannot make one; the message says why."""


def sorted_classes(labels: pd.Series) -> list[str]:
    """Distinct labels in their natural order: numbers by value (so "10" follows "9"), text alphabetically."""
    values = sorted(normalize_labels(labels).unique().tolist())
    try:
        return sorted(values, key=float)
    except ValueError:
        return values


def infer_task(train: pd.DataFrame, targets: list[str], metric: str) -> tuple[TaskType, list[str] | None]:
    """The task the target column(s) and the metric make, and the classes; `CompetitionInputError` when they
    do not go together."""
    if len(targets) > 1:
        return _several(train, targets, metric), None
    target, declared = train[targets[0]], metric_named(metric)
    if declared.multilabel:
        raise CompetitionInputError(f"metric {metric} averages several 0/1 target columns; give them with --targets")
    if declared.regression:
        if not pd.api.types.is_numeric_dtype(target):
            raise CompetitionInputError(f"metric {metric} needs a numeric target")
        if (declared.non_negative or declared.non_negative_target) and (target < 0).any():
            raise CompetitionInputError(f"metric {metric} needs a target without negative values")
        return TaskType.regression, None
    classes = sorted_classes(target)
    if len(classes) < 2:
        raise CompetitionInputError("the target has fewer than two classes")
    if len(classes) > declared.max_classes:
        raise CompetitionInputError(f"the target has {len(classes)} classes; use a regression metric")
    if declared.only_two_classes and len(classes) != 2:
        raise CompetitionInputError(f"metric {metric} is for two classes; the target has {len(classes)}")
    if declared.ordinal:
        try:
            [float(c) for c in classes]
        except ValueError:
            raise CompetitionInputError(f"metric {metric} needs classes that are numbers (ordered)") from None
    return (TaskType.binary if len(classes) == 2 else TaskType.multiclass), classes


def _several(train: pd.DataFrame, targets: list[str], metric: str) -> TaskType:
    numeric = [t for t in targets if pd.api.types.is_numeric_dtype(train[t])]
    if numeric != targets:
        raise CompetitionInputError(f"several targets must be numbers; not: {[t for t in targets if t not in numeric]}")
    declared = metric_named(metric)
    if declared.multilabel:
        odd = [t for t in targets if not train[t].dropna().isin([0, 1]).all()]
        if odd:
            raise CompetitionInputError(f"metric {metric} needs 0/1 targets; not: {odd}")
        return TaskType.multilabel
    if declared.regression:
        return TaskType.multioutput
    raise CompetitionInputError(
        f"several targets are scored by a metric averaged over 0/1 columns or a regression metric, not {metric}"
    )


def sample_submission(spec: Competition, test: pd.DataFrame, train: pd.DataFrame) -> pd.DataFrame:
    """The format to submit, filled with a constant guess (the most frequent label, the mean, even odds)."""
    frame = pd.DataFrame({spec.id_column: test[spec.id_column].to_numpy()})
    kind = spec.prediction
    if spec.task.is_regression:
        for column in spec.target_columns:
            frame[column] = float(train[column].mean())
    elif spec.task is TaskType.multilabel:
        for column in spec.target_columns:
            frame[column] = 0.5
    elif kind is PredictionKind.value:
        frame[spec.target] = normalize_labels(train[spec.target]).mode().iloc[0]
    elif kind is PredictionKind.ranked:
        frequent = normalize_labels(train[spec.target]).value_counts().index[: spec.top_k or 1]
        frame[spec.target] = " ".join(frequent)
    elif kind is PredictionKind.probability:
        frame[spec.target] = 0.5
    else:
        for label in spec.classes or []:
            frame[label] = 1.0 / len(spec.classes or [1])
    return frame
