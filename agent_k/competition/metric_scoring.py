"""Competition metrics, computed by our code from prediction frames (submissions and out-of-fold files).

The kernels are `metric_kernels` (NumPy, shared with generated solutions); this module turns a competition's frames
into their arrays. NumPy and pandas are imported inside the functions, so importing the vocabulary stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_k.competition.kinds import PredictionKind, TaskType
from agent_k.competition.models import Competition

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def normalize_labels(values: pd.Series) -> pd.Series:
    """Class labels as canonical strings (`levels.label_strings`, the rule every script names classes by)."""
    from agent_k.competition.levels import label_strings

    return label_strings(values)


def class_codes(competition: Competition, labels: pd.Series) -> np.ndarray:
    """Each label's position in the competition's classes (-1 for a label that is none of them)."""
    import numpy as np

    position = {label: i for i, label in enumerate(competition.classes or [])}
    return np.array([position.get(label, -1) for label in normalize_labels(labels)], dtype=int)


def ranked_labels(values: pd.Series) -> list[list[str]]:
    """A ranked-list column (MAP@k): each cell's space-separated labels, best first."""
    return [str(v).split() if v == v else [] for v in values]


def class_values(competition: Competition) -> list[float] | None:
    """The classes as numbers, in their order, for an ordinal metric's cut points (kappa); None for any other
    metric, or classes that are not numbers."""
    ordinal = competition.scored_by.ordinal and competition.ordinal
    return [float(c) for c in competition.classes or []] if ordinal else None


def score(competition: Competition, y_true: pd.Series | pd.DataFrame, predictions: pd.DataFrame) -> float:
    """Score rows of `predictions` (the competition's submission columns, aligned with `y_true`)."""
    import numpy as np
    import pandas as pd

    metric, task = competition.scored_by, competition.task
    if task.has_several_targets:
        columns = competition.target_columns
        truth = y_true.to_frame() if isinstance(y_true, pd.Series) else y_true
        if metric.pooled:
            return metric.kernel(truth[columns].to_numpy(dtype=float), predictions[columns].to_numpy(dtype=float))
        per_column = [metric.kernel(truth[c].to_numpy(dtype=float), _floats(predictions[c])) for c in columns]
        return float(np.mean(per_column))
    if task is TaskType.regression:
        return metric.kernel(y_true.to_numpy(dtype=float), _floats(predictions[competition.target]))
    assert isinstance(y_true, pd.Series), "one target column"
    codes = class_codes(competition, y_true)
    k = len(competition.classes or [])
    kind = competition.prediction
    if kind is PredictionKind.value:
        predicted = class_codes(competition, predictions[competition.target])
        wrong = np.where(predicted < 0, (codes + 1) % max(k, 1), predicted)  # an unknown label is never right
        return metric.kernel(codes, wrong, k)
    if kind is PredictionKind.ranked:
        truths = [label.split() for label in normalize_labels(y_true)]
        return metric.kernel(truths, ranked_labels(predictions[competition.target]), competition.top_k or 1)
    if kind is PredictionKind.probability:
        return metric.kernel((codes == 1).astype(float), _floats(predictions[competition.target]))
    if metric.kernel_of_classes is None:
        raise ValueError(f"metric {metric.name} scores two classes, not {k}")
    return metric.kernel_of_classes(codes, predictions[list(competition.classes or [])].to_numpy(dtype=float))


def _floats(column: pd.Series) -> np.ndarray:
    return column.to_numpy(dtype=float)


def log_loss(competition: Competition, y_true: pd.Series | pd.DataFrame, probabilities: pd.DataFrame) -> float:
    """Log loss of a classifier's probabilities (one column per class, or per 0/1 target), whatever the
    competition's metric: it breaks ties between candidates that a coarse metric scores the same."""
    import numpy as np
    import pandas as pd

    from agent_k.competition import metric_kernels

    if competition.task is TaskType.multilabel:
        truth = y_true.to_frame() if isinstance(y_true, pd.Series) else y_true
        columns = competition.target_columns
        losses = [
            metric_kernels.binary_logloss(truth[c].to_numpy(float), probabilities[c].to_numpy(float)) for c in columns
        ]
        return float(np.mean(losses))
    assert isinstance(y_true, pd.Series), "one target column"
    matrix = probabilities[list(competition.classes or [])].to_numpy(dtype=float)
    codes = class_codes(competition, y_true)
    return metric_kernels.logloss(np.clip(codes, 0, None), matrix)
