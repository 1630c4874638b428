"""Competitions that are not plain tables: the mission against FLAML AutoML and the practitioner's baseline for
the shape, all scored on the hidden private rows.

- the mission runs through the real CLI (`agent-k run --json`) with the budget;
- FLAML gets `AutoML(time_budget=BUDGET, n_jobs=2)` on the raw table (as a user would call it: text columns are
  categories to it; a date column is parsed to a datetime, which FLAML expands), one AutoML per target column
  for several targets (the budget split between them). Metrics FLAML has no objective for are approached the
  usual way: RMSLE as RMSE of log1p(y), kappa as a regression rounded to the nearest class;
- the practitioner's baseline is the board's own reference entry for the shape: word and character TF-IDF with
  a logistic regression (ridge for numbers) for text, the better of the last value per series and the seasonal
  naive forecast for a forecast (`agent_k.platforms.local.references`).

    pip install -e '.[bench]'
    python benchmarks/shapes.py [--budget 120] [--competitions tweets txhousing ...]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from ml_quality import ratio, run_mission

from agent_k.competition import Competition, PredictionKind, TaskType, metric_scoring
from agent_k.competition.columns import looks_like_dates
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.board import read_board
from agent_k.platforms.local.references import as_submission

SHAPES = {
    "tweets": ("text", "tfidf-linear"),
    "bird-strikes": ("text", "tfidf-linear"),
    "breach-types": ("multilabel", "tfidf-linear"),
    "txhousing": ("forecast", "naive-last naive-seasonal"),
    "elecdemand": ("forecast", "naive-last naive-seasonal"),
    "vocab": ("ordinal", "logistic"),
}
FLAML_METRICS = {
    "auc": "roc_auc", "logloss": "log_loss", "accuracy": "accuracy", "rmse": "rmse", "mae": "mae", "r2": "r2",
    "f1": "f1", "f1_macro": "macro_f1", "f1_micro": "micro_f1", "rmsle": "rmse", "qwk": "rmse", "mean_auc": "roc_auc",
}  # fmt: skip


def _tables(root: Path, spec: Competition) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Training features and targets, test features, and the test rows' hidden truth with its private mask."""
    public = root / spec.id / "public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    solution = pd.read_csv(root / spec.id / "private" / "solution.csv").set_index(spec.id_column)
    solution = solution.loc[test[spec.id_column].to_numpy()].reset_index()
    features = train.drop(columns=[spec.id_column, *spec.target_columns])
    test_features = test.drop(columns=[spec.id_column])
    for column in features.columns:
        both = pd.concat([features[column], test_features[column]])
        textual = not pd.api.types.is_numeric_dtype(both) and not pd.api.types.is_bool_dtype(both)
        if textual and looks_like_dates(both):
            parsed = pd.to_datetime(both, format="mixed", errors="coerce")
        elif textual:
            parsed = both.astype("category")
        else:
            continue
        features[column], test_features[column] = parsed.iloc[: len(features)], parsed.iloc[len(features) :]
    private = (solution["Usage"] == "Private").to_numpy()
    return pd.concat([features, train[spec.target_columns]], axis=1), test_features, solution, private


class _Rounded:
    """A regression's predictions rounded to the nearest class (kappa scores ordered labels)."""

    def __init__(self, model: Any, classes: list[str]) -> None:
        self.model, self.values = model, np.array([float(c) for c in classes])

    def predict(self, features: pd.DataFrame) -> np.ndarray:
        raw = np.asarray(self.model.predict(features), dtype=float)
        return self.values[np.abs(raw[:, None] - self.values[None, :]).argmin(axis=1)]


def run_flaml(spec: Competition, train: pd.DataFrame, test: pd.DataFrame, budget: float) -> pd.DataFrame:
    from flaml import AutoML

    features = train.drop(columns=spec.target_columns)
    regression = spec.task in (TaskType.regression, TaskType.multioutput) or spec.metric == "qwk"
    columns: dict[str, Any] = {}
    for name in spec.target_columns:
        target = train[name]
        if spec.metric == "rmsle":
            target = np.log1p(target.clip(lower=0))
        elif not regression and spec.task is not TaskType.multilabel:
            target = metric_scoring.normalize_labels(target)
        automl = AutoML()
        metric = FLAML_METRICS[spec.metric]
        if metric == "roc_auc" and target.nunique() > 2:
            metric = "roc_auc_ovr"
        automl.fit(
            features, target, task="regression" if regression else "classification", metric=metric,
            time_budget=budget / len(spec.target_columns), n_jobs=2, verbose=0, seed=0,
        )  # fmt: skip
        if spec.task is TaskType.multilabel:
            proba = automl.predict_proba(test)
            classes = list(automl.classes_)
            columns[name] = proba[:, classes.index(1)] if 1 in classes else np.zeros(len(test))
        elif spec.metric == "rmsle":
            columns[name] = np.expm1(automl.predict(test)).clip(min=0)
        elif spec.metric == "qwk":
            return pd.DataFrame({name: _Rounded(automl, list(spec.classes or [])).predict(test)})
        else:
            return as_submission(spec, automl, test)
    return pd.DataFrame(columns)


def private_score(spec: Competition, predictions: pd.DataFrame, solution: pd.DataFrame, private: np.ndarray) -> float:
    truth = solution[spec.target_columns] if spec.targets else solution[spec.target]
    if spec.prediction is PredictionKind.value and spec.task is not TaskType.regression:
        predictions = predictions.astype({spec.target: str})
    return metric_scoring.score(
        spec, truth[private].reset_index(drop=True), predictions[private].reset_index(drop=True)
    )


def baseline(root: Path, spec: Competition, teams: str) -> tuple[str, float]:
    """The best of the board's reference entries for the shape, on the private rows."""
    board = [e for e in read_board(root / spec.id / "private" / "leaderboard.json") if e.private_score is not None]
    wanted = [e for e in board if e.team.removeprefix("reference/") in teams.split()] or board
    best = spec.scored_by.ranked(wanted, lambda e: e.private_score)[0]
    return best.team.removeprefix("reference/"), float(best.private_score or 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--competitions", nargs="*", default=list(SHAPES))
    parser.add_argument("--home", type=Path, help="keep the missions here for inspection (default: a temp dir)")
    parser.add_argument("--no-flaml", action="store_true", help="the mission and the baseline only")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp)
        platform = LocalPlatform(home / "competitions")
        for competition in args.competitions:
            spec = platform.ensure(competition)  # materialised (and its board built) before any clock starts
            shape, teams = SHAPES[competition]
            mission, elapsed, candidates = run_mission(home, competition, args.budget)
            name, practitioner = baseline(platform.root, spec, teams)
            flaml = flaml_wall = None
            if not args.no_flaml:
                train, test, solution, private = _tables(platform.root, spec)
                started = time.monotonic()
                flaml = private_score(spec, run_flaml(spec, train, test, args.budget), solution, private)
                flaml_wall = round(time.monotonic() - started, 1)
            row = {
                "competition": competition, "shape": shape, "metric": spec.metric, "maximize": spec.maximize,
                "mission": mission, "baseline": practitioner, "baseline_name": name, "flaml": flaml,
                "mission_elapsed_s": elapsed, "within_budget": elapsed <= 1.1 * args.budget, "candidates": candidates,
                "flaml_wall_s": flaml_wall, "vs_baseline": ratio(mission, practitioner, spec.maximize),
                "vs_flaml": None if flaml is None else ratio(mission, flaml, spec.maximize),
            }  # fmt: skip
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\nbudget {args.budget:.0f} s; private rows; ratios above 1 favour the mission")
    print(f"{'competition':13} {'shape':10} {'metric':9} {'mission':>9} {'baseline':>9} {'FLAML':>9} "
          f"{'vs base':>8} {'vs FLAML':>8} {'elapsed':>8} {'cands':>5}")  # fmt: skip
    for r in rows:
        flaml_text = "-" if r["flaml"] is None else f"{r['flaml']:.5g}"
        versus = "-" if r["vs_flaml"] is None else f"{r['vs_flaml']:.4f}"
        print(f"{r['competition']:13} {r['shape']:10} {r['metric']:9} {r['mission']:9.5g} {r['baseline']:9.5g} "
              f"{flaml_text:>9} {r['vs_baseline']:8.4f} {versus:>8} {r['mission_elapsed_s']:8.1f} "
              f"{r['candidates']:5d}")  # fmt: skip
    print(f"within +10% of the budget: {sum(r['within_budget'] for r in rows)}/{len(rows)}")


if __name__ == "__main__":
    main()
