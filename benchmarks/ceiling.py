"""The best private score any model of a table's features can reach, where its feature rows take few distinct values.

A table of a few categorical columns has few cells (titanic: class x age x sex, 12); every model is then a score per
cell, and on a ranking metric only the cells' order counts. Three lookups over the cells, scored on the private rows
beside default HistGradientBoosting (as `ml_quality.py` fits it):

- **the ceiling**: each cell's private rows' own mean, an oracle no model can beat;
- **the training rates**: each cell's training rows' mean (a cell no training row has gets the overall mean), the
  maximum-likelihood model of such a table;
- default HGB.

Where HGB is within a hair of the ceiling, the pairs of cells that separate them say whether a model that follows its
training rows could close the gap: the script lists each cell's training and private rows.

    .venv/bin/python benchmarks/ceiling.py [--competitions titanic]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from ml_quality import load, private_score, run_hgb

from agent_k.competition import Competition, TaskType
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.references import as_submission

MAX_CELLS = 100
"""More distinct feature rows than this and the cells are too thin for a lookup to mean anything."""


class CellLookup:
    """A model with scikit-learn's prediction surface that answers each feature row with its cell's mean."""

    def __init__(self, features: pd.DataFrame, target: pd.Series, task: TaskType) -> None:
        self.regression = task is TaskType.regression
        if self.regression:
            values = pd.DataFrame({"value": target.to_numpy(dtype=float)})
        else:
            self.classes_ = sorted(target.unique())
            values = pd.get_dummies(target).reindex(columns=self.classes_, fill_value=0).astype(float)
        self.means = values.groupby(_cells(features).to_numpy()).mean()
        self.overall = values.mean().to_numpy()  # for a cell no row of these has

    def predict_proba(self, features: pd.DataFrame) -> np.ndarray[Any, Any]:
        found = self.means.reindex(_cells(features).to_numpy())
        return np.where(found.isna().to_numpy(), self.overall, found.to_numpy())

    def predict(self, features: pd.DataFrame) -> np.ndarray[Any, Any]:
        values = self.predict_proba(features)
        return values[:, 0] if self.regression else np.asarray(self.classes_)[values.argmax(axis=1)]


def _cells(features: pd.DataFrame) -> pd.Series:
    return features.astype(object).fillna("<empty>").astype(str).agg("|".join, axis=1)


def report(spec: Competition, root: Path) -> None:
    features, target, test_features, y, private = load(root, spec)
    cells = _cells(pd.concat([features, test_features])).nunique()
    if cells > MAX_CELLS:
        print(f"{spec.id}: {cells} distinct feature rows, more than {MAX_CELLS}: no lookup ceiling")
        return
    mask = private.to_numpy()
    truth = y[mask].reset_index(drop=True)
    if spec.task is not TaskType.regression:
        truth = truth.astype(target.dtype)
    lookups = {
        "ceiling": CellLookup(test_features[mask].reset_index(drop=True), truth, spec.task),
        "training rates": CellLookup(features, target, spec.task),
    }
    scores = {
        **{name: private_score(spec, as_submission(spec, m, test_features), y, private) for name, m in lookups.items()},
        "default HGB": run_hgb(spec, (features, target, test_features, y, private)),
    }
    print(f"{spec.id} ({spec.metric}, {cells} cells): " + ", ".join(f"{k} {v:.5f}" for k, v in scores.items()))
    rows = {"train": (features, target), "private": (test_features[mask], truth)}
    positive = None if spec.task is TaskType.regression else sorted(target.unique())[-1]
    table = pd.concat({name: _by_cell(x, values, positive) for name, (x, values) in rows.items()}, axis=1)
    table = table.astype({(name, "size"): "Int64" for name in rows})
    print(table.sort_values(("train", "mean")).to_string(float_format="{:.4f}".format))


def _by_cell(features: pd.DataFrame, target: pd.Series, positive: Any) -> pd.DataFrame:
    """Each cell's rows and its mean: of a regression's target, else the share of `positive` (binary: the last
    class)."""
    values = target.to_numpy(dtype=float) if positive is None else (target == positive).to_numpy(dtype=float)
    table = pd.Series(values).groupby(_cells(features).to_numpy()).agg(["size", "mean"])
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--competitions", nargs="*", default=["titanic"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        platform = LocalPlatform(Path(tmp))
        for competition in args.competitions:
            report(platform.ensure(competition), platform.root)


if __name__ == "__main__":
    main()
