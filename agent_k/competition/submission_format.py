"""Kaggle-style checks on a submission file, shared by the platforms and by candidate evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import IO, TYPE_CHECKING

from agent_k.competition.kinds import PredictionKind
from agent_k.competition.metric_scoring import normalize_labels
from agent_k.competition.models import Competition

if TYPE_CHECKING:
    import pandas as pd


class InvalidSubmission(ValueError):
    """The file does not match the competition's submission format; the message is one line saying how."""


def read_submission(source: Path | IO[bytes], competition: Competition, expected_ids: pd.Series) -> pd.DataFrame:
    """Read and validate a submission file; return it indexed by id in the order of `expected_ids`.

    Raises `InvalidSubmission` with a one-line reason for any mismatch.
    """
    import pandas as pd

    try:
        frame = pd.read_csv(source)
    except (OSError, ValueError) as exc:
        raise InvalidSubmission(f"cannot read submission file: {exc}") from exc
    validate_frame(frame, competition, expected_ids)
    return frame.set_index(competition.id_column).loc[expected_ids.to_numpy()]


def validate_frame(frame: pd.DataFrame, competition: Competition, expected_ids: pd.Series) -> None:
    import numpy as np

    id_col = competition.id_column
    expected_columns = [id_col, *competition.prediction_columns]
    if list(frame.columns) != expected_columns:
        raise InvalidSubmission(f"columns must be {expected_columns}, got {list(frame.columns)}")
    if len(frame) != len(expected_ids):
        raise InvalidSubmission(f"expected {len(expected_ids)} rows, got {len(frame)}")
    ids = normalize_labels(frame[id_col])
    if ids.duplicated().any():
        raise InvalidSubmission(f"duplicate ids, e.g. {ids[ids.duplicated()].iloc[0]}")
    missing = set(normalize_labels(expected_ids)) - set(ids)
    if missing:
        raise InvalidSubmission(f"{len(missing)} test ids are missing, e.g. {sorted(missing)[0]}")
    predictions = frame[competition.prediction_columns]
    kind = competition.prediction
    if kind is PredictionKind.ranked:
        _check_ranked(predictions[competition.target], competition)
        return
    if predictions.isna().to_numpy().any():
        raise InvalidSubmission("predictions contain missing values")
    if kind is PredictionKind.value and competition.classes is not None:
        unknown = set(normalize_labels(predictions[competition.target])) - set(competition.classes)
        if unknown:
            raise InvalidSubmission(f"unknown class labels: {sorted(unknown)[:5]}")
        return
    try:
        values = predictions.to_numpy(dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidSubmission("predictions must be numeric") from exc
    if not np.isfinite(values).all():
        raise InvalidSubmission("predictions contain non-finite values")
    if kind is not PredictionKind.value and ((values < 0) | (values > 1)).any():
        raise InvalidSubmission("probabilities must lie in [0, 1]")
    if competition.scored_by.non_negative and (values < 0).any():
        raise InvalidSubmission(f"{competition.metric.upper()} takes no negative predictions")


def _check_ranked(cells: pd.Series, competition: Competition) -> None:
    """A ranked list per row: at most k known labels, space-separated, none twice."""
    known, k = set(competition.classes or []), competition.top_k or 1
    for cell in cells:
        labels = str(cell).split() if cell == cell else []
        if not labels:
            raise InvalidSubmission("a row ranks no label")
        if len(labels) > k or len(set(labels)) != len(labels):
            raise InvalidSubmission(f"a row must rank at most {k} distinct labels, got {cell!r}")
        unknown = set(labels) - known
        if unknown:
            raise InvalidSubmission(f"unknown class labels: {sorted(unknown)[:5]}")
