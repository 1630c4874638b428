"""Mission quality against FLAML AutoML and default HistGradientBoosting, at the same wall budget.

All three train on a competition's public train set and are scored on its hidden private test rows.
The mission runs through the real CLI (`agent-k run --json`); FLAML gets `time_budget=BUDGET, n_jobs=2`.
Also reported: the candidates each mission evaluated, and whether it ended within +10% of its budget.

    pip install -e '.[bench]'
    python benchmarks/ml_quality.py [--budget 120] [--competitions penguins wine ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from agent_k.competition import Competition, TaskType, metrics
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.catalog import BUILTINS
from agent_k.platforms.local.references import as_object_strings, as_submission, make_preprocessor

FLAML_METRICS = {"accuracy": "accuracy", "logloss": "log_loss", "rmse": "rmse", "mae": "mae", "r2": "r2"}


def load(root: Path, spec: Competition) -> tuple[pd.DataFrame, pd.Series, pd.DataFrame, pd.Series, pd.Series]:
    public = root / spec.id / "public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    solution = pd.read_csv(root / spec.id / "private" / "solution.csv").set_index(spec.id_column)
    solution = solution.loc[test[spec.id_column].to_numpy()]
    private = (solution["Usage"] == "Private").to_numpy()
    features = as_object_strings(train.drop(columns=[spec.id_column, spec.target]))
    target = train[spec.target]
    if spec.task is not TaskType.regression:
        target = metrics.normalize_labels(target)
    test_features = as_object_strings(test.drop(columns=[spec.id_column]))
    return features, target, test_features, solution[spec.target].reset_index(drop=True), pd.Series(private)


def private_score(spec: Competition, predictions: pd.DataFrame, y: pd.Series, private: pd.Series) -> float:
    mask = private.to_numpy()
    return metrics.score(spec, y[mask].reset_index(drop=True), predictions[mask].reset_index(drop=True))


def run_hgb(spec: Competition, data: tuple[Any, ...]) -> float:
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.pipeline import make_pipeline

    features, target, test_features, y, private = data
    model = HistGradientBoostingRegressor if spec.task is TaskType.regression else HistGradientBoostingClassifier
    pipeline = make_pipeline(make_preprocessor(features, scale=False, one_hot=False), model(random_state=0))
    pipeline.fit(features, target)
    return private_score(spec, as_submission(spec, pipeline, test_features), y, private)


def run_flaml(spec: Competition, data: tuple[Any, ...], budget: float) -> float:
    from flaml import AutoML

    features, target, test_features, y, private = data
    categorical = [c for c in features.columns if features[c].dtype == object]
    features = features.astype({c: "category" for c in categorical})
    test_features = test_features.astype({c: "category" for c in categorical})
    if spec.metric == "auc":
        metric = "roc_auc" if spec.task is TaskType.binary else "roc_auc_ovr"
    else:
        metric = FLAML_METRICS[spec.metric]
    automl = AutoML()
    automl.fit(
        features,
        target,
        task="regression" if spec.task is TaskType.regression else "classification",
        metric=metric,
        time_budget=budget,
        n_jobs=2,
        verbose=0,
        seed=0,
    )
    return private_score(spec, as_submission(spec, automl, test_features), y, private)


def run_mission(home: Path, competition: str, budget: float) -> tuple[float, float, int]:
    env = {**os.environ, "AGENT_K_HOME": str(home)}
    env.pop("AGENT_K_DATABASE_URL", None)
    agent_k = str(Path(sys.executable).parent / "agent-k")
    completed = subprocess.run(
        [agent_k, "run", "--competition", competition, "--time-budget", str(budget), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    if report["status"] != "succeeded":
        raise RuntimeError(f"mission on {competition} failed: {report['error']}")
    with sqlite3.connect(home / "agent_k.db") as db:
        (candidates,) = db.execute(
            "select count(*) from events where mission_id = ? and type = 'candidate.evaluated'", (report["mission_id"],)
        ).fetchone()
    return float(report["private_score"]), float(report["elapsed_s"]), int(candidates)


def ratio(mission: float, other: float, maximize: bool) -> float:
    """Above 1 means the mission is better."""
    return mission / other if maximize else other / mission


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--competitions", nargs="*", default=list(BUILTINS))
    parser.add_argument("--home", type=Path, help="keep the missions here for inspection (default: a temp dir)")
    parser.add_argument(
        "--mission-only", action="store_true", help="run the missions only (a regression check against the doc)"
    )
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp)
        platform = LocalPlatform(home / "competitions")
        for competition in args.competitions:
            spec = platform.ensure(competition)  # materialised before any clock starts
            data = load(platform.root, spec)
            mission, elapsed, candidates = run_mission(home, competition, args.budget)
            if args.mission_only:
                print(
                    json.dumps(
                        {
                            "competition": competition,
                            "metric": spec.metric,
                            "mission": mission,
                            "mission_elapsed_s": elapsed,
                            "candidates": candidates,
                        }
                    ),
                    flush=True,
                )
                continue
            started = time.monotonic()
            flaml = run_flaml(spec, data, args.budget)
            flaml_wall = time.monotonic() - started
            hgb = run_hgb(spec, data)
            row = {
                "competition": competition,
                "metric": spec.metric,
                "maximize": spec.maximize,
                "mission": mission,
                "flaml": flaml,
                "hgb": hgb,
                "mission_elapsed_s": elapsed,
                "within_budget": elapsed <= 1.1 * args.budget,
                "candidates": candidates,
                "flaml_wall_s": round(flaml_wall, 1),
                "vs_flaml": ratio(mission, flaml, spec.maximize),
                "vs_hgb": ratio(mission, hgb, spec.maximize),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.mission_only:
        return
    print(f"\nbudget {args.budget:.0f} s per method; ratios above 1 favour the mission")
    print(
        f"{'competition':14} {'metric':9} {'mission':>10} {'FLAML':>10} {'HGB':>10} {'vs FLAML':>9} {'vs HGB':>8} "
        f"{'elapsed':>8} {'cands':>6}"
    )
    for r in rows:
        print(
            f"{r['competition']:14} {r['metric']:9} {r['mission']:10.5g} {r['flaml']:10.5g} {r['hgb']:10.5g} "
            f"{r['vs_flaml']:9.4f} {r['vs_hgb']:8.4f} {r['mission_elapsed_s']:8.1f} {r['candidates']:6d}"
        )
    beats_hgb = sum(r["vs_hgb"] > 1 for r in rows)
    matches_flaml = sum(r["vs_flaml"] >= 1 for r in rows)
    within = sum(r["within_budget"] for r in rows)
    print(f"beats HGB on {beats_hgb}/{len(rows)}; matches or beats FLAML on {matches_flaml}/{len(rows)}")
    print(f"within +10% of the budget: {within}/{len(rows)}")


if __name__ == "__main__":
    main()
