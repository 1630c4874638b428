"""Validation folds: the one definition every candidate is cross-validated with.

Our templates embed this source (`agent_k.ml.render`), the harness imports it to cut a model's script its folds,
the training prior and the runner use it to know which rows each fold scores: so a fold is the same rows
everywhere. Self-contained (NumPy, pandas, scikit-learn, and the levels module embedded before it).

A scheme is a plain dict (it is rendered into scripts as a constant): `kind`, `n_folds`, `seed`, and for
`forward` the `horizon` (time steps a fold scores) and `gap` (steps left out between training and scoring).
- `kfold`, `stratified_kfold`: shuffled folds;
- `group_kfold`, `stratified_group_kfold`: an entity's rows all on one side;
- `forward`: forward chaining over time: each fold trains on the past and scores the `horizon` steps that
  follow (after `gap`), the last fold ending at the last training step; rows before the first window are never
  scored.
"""

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from sklearn.model_selection import GroupKFold, KFold, StratifiedGroupKFold, StratifiedKFold

from agent_k.competition.levels import as_text

Indices = npt.NDArray[np.int64]
Split = tuple[Indices, Indices]


def make_folds(
    scheme: dict[str, Any],
    n_rows: int,
    *,
    labels: Any = None,
    groups: Any = None,
    times: Any = None,
) -> list[Split]:
    """(train rows, scored rows) per fold, as positions 0..n_rows-1. `labels` stratify, `groups` keep an
    entity together, `times` (sortable, one per row) order a forward scheme."""
    kind, n_folds, seed = scheme["kind"], int(scheme["n_folds"]), int(scheme.get("seed", 42))
    rows = np.arange(n_rows)
    if kind == "forward":
        return _forward(np.asarray(times), int(scheme["horizon"]), int(scheme.get("gap", 0)), n_folds)
    stratify = labels is not None and kind.startswith("stratified") and _stratifiable(labels, n_folds)
    if kind in ("group_kfold", "stratified_group_kfold") and groups is not None:
        group_values = as_text(pd.Series(groups)).to_numpy()
        n_folds = min(n_folds, len(np.unique(group_values)))
        if stratify:
            splitter = StratifiedGroupKFold(n_folds, shuffle=True, random_state=seed)
            return _as_int(splitter.split(rows, np.asarray(labels).astype(str), group_values))
        return _as_int(GroupKFold(n_folds).split(rows, groups=group_values))
    if stratify:
        splitter = StratifiedKFold(n_folds, shuffle=True, random_state=seed)
        return _as_int(splitter.split(rows, np.asarray(labels).astype(str)))
    return _as_int(KFold(n_folds, shuffle=True, random_state=seed).split(rows))


def _stratifiable(labels: Any, n_folds: int) -> bool:
    counts = pd.Series(np.asarray(labels).astype(str)).value_counts()
    return len(counts) > 1 and int(counts.min()) >= n_folds


def _as_int(splits: Any) -> list[Split]:
    return [(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)) for a, b in splits]


def _forward(times: npt.NDArray[Any], horizon: int, gap: int, n_folds: int) -> list[Split]:
    steps = np.unique(times)
    position = np.searchsorted(steps, times)
    horizon = max(1, min(horizon, len(steps) // 2))
    splits: list[Split] = []
    for k in range(n_folds, 0, -1):
        end = len(steps) - (k - 1) * horizon  # this window scores steps [end - horizon, end)
        start = end - horizon
        fit_end = start - gap
        if fit_end < max(2, horizon // 2):
            continue  # too little past to learn from
        fit = np.flatnonzero(position < fit_end)
        scored = np.flatnonzero((position >= start) & (position < end))
        if len(fit) and len(scored):
            splits.append((fit.astype(np.int64), scored.astype(np.int64)))
    if not splits:  # a very short history: one window of whatever it allows
        cut = max(1, len(steps) - horizon)
        splits.append(
            (np.flatnonzero(position < cut).astype(np.int64), np.flatnonzero(position >= cut).astype(np.int64))
        )
    return splits


def scored_rows(splits: list[Split]) -> Indices:
    """The rows some fold scores (every row, but for a forward scheme's earliest ones)."""
    return np.unique(np.concatenate([scored for _, scored in splits])).astype(np.int64)
