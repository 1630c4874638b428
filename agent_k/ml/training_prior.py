"""The training prior: what the training labels say before any feature is looked at. Each class's frequency
(classification), or the constant the metric rewards most (regression); each fold's prior from the rows that
fold trains on.

The runner computes it here, in its own process, in milliseconds (`agent_k.ml.prior`): code of ours, never a
rendered script. The prior's standalone `solution.py` embeds this source (`agent_k.ml.render`), with the same
spec as a literal, so the file a mission submits is reproduced by the script it ships. Self-contained (NumPy,
pandas).

The spec is a plain dict: targets, id_column, task, prediction, classes, statistic (mean, median or log-mean),
top_k, folds, group_column, time.
"""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agent_k.competition.levels import label_strings
from agent_k.competition.timing import parse_time, time_order
from agent_k.ml.folds import make_folds

SMOOTHING = 1e-3  # every class keeps a little probability, so a log loss stays finite


def constant(spec: dict[str, Any], values: pd.Series) -> float:
    values = values.dropna().astype(float)
    if spec["statistic"] == "median":
        return float(values.median())
    if spec["statistic"] == "log-mean":
        return float(np.expm1(np.log1p(values.clip(lower=0)).mean()))
    return float(values.mean())


def prior(spec: dict[str, Any], targets: pd.DataFrame) -> np.ndarray:
    """The prediction for any row: one value per target, a 0/1 target's frequency, or class probabilities."""
    if spec["task"] in ("multioutput", "regression"):
        return np.array([constant(spec, targets[t]) for t in spec["targets"]])
    if spec["task"] == "multilabel":
        means = [targets[t].astype(float).mean() for t in spec["targets"]]
        return np.array([float(np.clip(m, SMOOTHING, 1 - SMOOTHING)) for m in means])
    labels = label_strings(targets[spec["targets"][0]].dropna())
    counts = labels.value_counts().reindex(spec["classes"], fill_value=0).to_numpy(dtype=float) + SMOOTHING
    shares: np.ndarray = counts / counts.sum()
    return shares


def out_of_fold_columns(spec: dict[str, Any], values: np.ndarray, rows: int) -> pd.DataFrame:
    names = spec["classes"] if spec["task"] in ("binary", "multiclass") else spec["targets"]
    return pd.DataFrame(np.tile(values, (rows, 1)), columns=names)


def submission_columns(spec: dict[str, Any], values: np.ndarray, rows: int) -> pd.DataFrame:
    target, classes = spec["targets"][0], spec["classes"]
    if spec["task"] not in ("binary", "multiclass") or spec["prediction"] == "probabilities":
        return out_of_fold_columns(spec, values, rows)
    if spec["prediction"] == "value":
        return pd.DataFrame({target: [classes[int(np.argmax(values))]] * rows})
    if spec["prediction"] == "ranked":
        ranked = " ".join(np.asarray(classes)[np.argsort(-values, kind="stable")[: spec["top_k"]]])
        return pd.DataFrame({target: [ranked] * rows})
    return pd.DataFrame({target: [values[-1]] * rows})


def write_prior(spec: dict[str, Any], data: Path, out: Path, oof: Path | None = None) -> None:
    """The submission for DATA/test.csv, and with `oof` the out-of-fold predictions of the spec's folds."""
    train = pd.read_csv(Path(data) / "train.csv")
    test = pd.read_csv(Path(data) / "test.csv", usecols=[spec["id_column"]])
    targets = train[spec["targets"]]
    if oof is not None:
        labels = label_strings(train[spec["targets"][0]]) if spec["task"] in ("binary", "multiclass") else None
        groups = train[spec["group_column"]] if spec["group_column"] else None
        times = time_order(parse_time(train, spec["time"])) if spec["time"] else None
        parts = []
        folds = make_folds(spec["folds"], len(train), labels=labels, groups=groups, times=times)
        for fold, (fit_rows, rows) in enumerate(folds):
            part = out_of_fold_columns(spec, prior(spec, targets.iloc[fit_rows]), len(rows))
            part.insert(0, "fold", fold)
            part.insert(0, spec["id_column"], train[spec["id_column"]].iloc[rows].to_numpy())
            parts.append(part)
        pd.concat(parts, ignore_index=True).to_csv(oof, index=False)
    submission = submission_columns(spec, prior(spec, targets), len(test))
    submission.insert(0, spec["id_column"], test[spec["id_column"]].to_numpy())
    submission.to_csv(out, index=False)
