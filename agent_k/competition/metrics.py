"""Competition metrics, computed by our code from prediction frames (submissions and out-of-fold files).

NumPy, pandas and scikit-learn are imported inside the functions, so importing the vocabulary stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_k.competition.kinds import PredictionKind, TaskType
from agent_k.competition.models import Competition

if TYPE_CHECKING:
    import pandas as pd


def normalize_labels(values: pd.Series) -> pd.Series:
    """Class labels as canonical strings, so `1`, `1.0` and `"1"` from different CSVs compare equal."""
    import numpy as np
    import pandas as pd

    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        numeric = values.astype(float)
        if np.all(np.isfinite(numeric)) and np.all(numeric == np.round(numeric)):
            return numeric.astype("int64").astype(str)
    return values.astype(str)


def score(competition: Competition, y_true: pd.Series, predictions: pd.DataFrame) -> float:
    """Score rows of `predictions` (aligned with `y_true`) under the competition's metric."""
    import numpy as np
    from sklearn import metrics as skm

    metric = competition.metric
    kind = competition.prediction
    if competition.task is TaskType.regression:
        y = y_true.to_numpy(dtype=float)
        pred = predictions[competition.target].to_numpy(dtype=float)
        if metric == "rmse":
            return float(np.sqrt(skm.mean_squared_error(y, pred)))
        if metric == "mae":
            return float(skm.mean_absolute_error(y, pred))
        return float(skm.r2_score(y, pred))

    labels = normalize_labels(y_true).to_numpy()
    if kind is PredictionKind.value:
        predicted = normalize_labels(predictions[competition.target]).to_numpy()
        return float(np.mean(predicted == labels))
    if kind is PredictionKind.probability:
        positive = competition.positive_class
        y = (labels == positive).astype(int)
        p = np.clip(predictions[competition.target].to_numpy(dtype=float), 1e-15, 1 - 1e-15)
        if metric == "auc":
            return float(skm.roc_auc_score(y, p))
        return float(skm.log_loss(y, p, labels=[0, 1]))

    classes = list(competition.classes or [])
    matrix = predictions[classes].to_numpy(dtype=float)
    matrix = np.clip(matrix, 1e-15, None)
    matrix = matrix / matrix.sum(axis=1, keepdims=True)
    if metric == "auc":
        return float(skm.roc_auc_score(labels, matrix, multi_class="ovr", labels=classes))
    if metric == "logloss":
        return float(skm.log_loss(labels, matrix, labels=classes))
    predicted = np.asarray(classes)[matrix.argmax(axis=1)]
    return float(np.mean(predicted == labels))


def log_loss(competition: Competition, y_true: pd.Series, probabilities: pd.DataFrame) -> float:
    """Log loss of per-class probabilities (one column per class), whatever the competition's metric: it breaks
    ties between candidates that a coarse metric (accuracy on a few hundred rows) scores the same."""
    import numpy as np
    from sklearn import metrics as skm

    classes = list(competition.classes or [])
    matrix = np.clip(probabilities[classes].to_numpy(dtype=float), 1e-15, None)
    matrix = matrix / matrix.sum(axis=1, keepdims=True)
    return float(skm.log_loss(normalize_labels(y_true).to_numpy(), matrix, labels=classes))
