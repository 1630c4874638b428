"""Mission quality against FLAML, AutoGluon and default HistGradientBoosting, at the same wall budget.

All four train on a competition's public train set and are scored on its hidden private test rows. The mission
runs through the real CLI (`agent-k run --json`); FLAML gets `AutoML(time_budget=BUDGET, n_jobs=2)`, AutoGluon
`TabularPredictor(...).fit(time_limit=BUDGET, presets="medium_quality", num_cpus=2)`. With `--seeds N` every method
runs N times (seeds 0..N-1; each mission has its own id, which seeds its search), interleaved: for each seed, each
competition's four runs one after another, so a slower spell of the machine touches them alike. The table gives
medians. Also reported: each mission's candidates, whether its blend was tried (and why not), and its final pick.

AutoGluon needs pandas<3: run this in an environment of its own (the mission's CLI comes from the same one).

    python3 -m venv .venv-bench && .venv-bench/bin/pip install -e '.[bench]'
    .venv-bench/bin/python benchmarks/ml_quality.py [--budget 120] [--seeds 3] [--first-seed 0] [--competitions ...]
        [--results rows.jsonl]

A run of every method on the real-size set at 300 s takes about 4 hours on two cores. `--results` keeps each
(seed, competition)'s row in a JSON-lines file as it ends, stamped with the package code it ran (git's hash of the
committed `agent_k/`) and the rivals' versions, so that a run can be stopped and taken up again: rows already there
for this code, budget and rivals are not run again, and the summary covers every such row in the file.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from agent_k.competition import Competition, TaskType, metric_scoring
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.catalog import BUILTINS
from agent_k.platforms.local.encoding import as_object_strings, make_preprocessor
from agent_k.platforms.local.references import as_submission

FLAML_METRICS = {"accuracy": "accuracy", "logloss": "log_loss", "rmse": "rmse", "mae": "mae", "r2": "r2"}
AUTOGLUON_METRICS = {
    "auc": "roc_auc", "accuracy": "accuracy", "logloss": "log_loss", "rmse": "root_mean_squared_error",
    "mae": "mean_absolute_error", "r2": "r2",
}  # fmt: skip
METHODS = ("mission", "flaml", "autogluon", "hgb")
FLAML_ESTIMATORS = ["lgbm", "rf", "xgboost", "extra_tree", "xgb_limitdepth", "sgd"]
"""FLAML's own default list without CatBoost, which it adds whenever CatBoost is installed (AutoGluon's extra brings
it): a CatBoost trial of 8,192 rounds on tissue's wide table ran past 20 minutes of a 300 s budget. Every FLAML
figure before AutoGluon joined was without it."""


def load(root: Path, spec: Competition) -> tuple[pd.DataFrame, pd.Series, pd.DataFrame, pd.Series, pd.Series]:
    public = root / spec.id / "public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    solution = pd.read_csv(root / spec.id / "private" / "solution.csv").set_index(spec.id_column)
    solution = solution.loc[test[spec.id_column].to_numpy()]
    private = (solution["Usage"] == "Private").to_numpy()
    features = as_object_strings(train.drop(columns=[spec.id_column, spec.target]))
    target = train[spec.target]
    if spec.task is not TaskType.regression:
        target = metric_scoring.normalize_labels(target)
    test_features = as_object_strings(test.drop(columns=[spec.id_column]))
    return features, target, test_features, solution[spec.target].reset_index(drop=True), pd.Series(private)


def private_score(spec: Competition, predictions: pd.DataFrame, y: pd.Series, private: pd.Series) -> float:
    mask = private.to_numpy()
    return metric_scoring.score(spec, y[mask].reset_index(drop=True), predictions[mask].reset_index(drop=True))


def run_hgb(spec: Competition, data: tuple[Any, ...], seed: int = 0) -> float:
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.pipeline import make_pipeline

    features, target, test_features, y, private = data
    model = HistGradientBoostingRegressor if spec.task is TaskType.regression else HistGradientBoostingClassifier
    pipeline = make_pipeline(make_preprocessor(features, scale=False, one_hot=False), model(random_state=seed))
    pipeline.fit(features, target)
    return private_score(spec, as_submission(spec, pipeline, test_features), y, private)


class _Predictor:
    """An AutoGluon predictor with scikit-learn's prediction surface (`classes_`, arrays)."""

    def __init__(self, predictor: Any) -> None:
        self.predictor = predictor
        self.classes_ = list(predictor.class_labels or [])

    def predict(self, features: pd.DataFrame) -> Any:
        return self.predictor.predict(features).to_numpy()

    def predict_proba(self, features: pd.DataFrame) -> Any:
        return self.predictor.predict_proba(features, as_multiclass=True)[self.classes_].to_numpy()


def run_autogluon(spec: Competition, data: tuple[Any, ...], budget: float, seed: int = 0) -> float:
    from autogluon.tabular import TabularPredictor

    features, target, test_features, y, private = data
    problem = "regression" if spec.task is TaskType.regression else spec.task.value
    with tempfile.TemporaryDirectory() as folder:
        predictor = TabularPredictor(
            label="__target__", problem_type=problem, eval_metric=AUTOGLUON_METRICS[spec.metric], path=folder,
            verbosity=0,
        )  # fmt: skip
        frame = features.assign(__target__=target.to_numpy())
        predictor.fit(
            frame, time_limit=budget, presets="medium_quality", num_cpus=2, ag_args_ensemble={"model_random_seed": seed}
        )
        return private_score(spec, as_submission(spec, _Predictor(predictor), test_features), y, private)


def run_flaml(spec: Competition, data: tuple[Any, ...], budget: float, seed: int = 0) -> float:
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
        estimator_list=FLAML_ESTIMATORS,
        n_jobs=2,
        verbose=0,
        seed=seed,
    )
    return private_score(spec, as_submission(spec, automl, test_features), y, private)


def mission_report(home: Path, competition: str, budget: float) -> dict[str, Any]:
    """One mission through the CLI: its private score, time, candidates, and what its final step did."""
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
    if not completed.stdout.strip():
        raise RuntimeError(f"agent-k run on {competition} exited {completed.returncode}: {completed.stderr[-2000:]}")
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    if report["status"] != "succeeded":
        raise RuntimeError(f"mission on {competition} failed: {report['error']}")
    with sqlite3.connect(home / "agent_k.db") as db:
        rows = db.execute(
            "select type, payload from events where mission_id = ? and type in "
            "('candidate.evaluated', 'evolution.ensemble', 'evolution.pick') order by seq",
            (report["mission_id"],),
        ).fetchall()
    blends = [json.loads(payload) for kind, payload in rows if kind == "evolution.ensemble"]
    picks = [json.loads(payload) for kind, payload in rows if kind == "evolution.pick"]
    pick = picks[-1] if picks else {}
    return {
        "mission": float(report["private_score"]),
        "mission_elapsed_s": float(report["elapsed_s"]),
        "candidates": sum(kind == "candidate.evaluated" for kind, _ in rows),
        "blends": [{k: b.get(k) for k in ("method", "kept", "reason", "cv_score")} for b in blends],
        "pick_changed": pick.get("changed"),
        "pick_reason": pick.get("reason"),
    }


def run_mission(home: Path, competition: str, budget: float) -> tuple[float, float, int]:
    """(private score, elapsed seconds, candidates) of one mission through the CLI."""
    report = mission_report(home, competition, budget)
    return report["mission"], report["mission_elapsed_s"], report["candidates"]


def ratio(mission: float, other: float, maximize: bool) -> float:
    """Above 1 means the mission is better."""
    return mission / other if maximize else other / mission


def _median(rows: list[dict[str, Any]], competition: str, method: str) -> float:
    return float(statistics.median(r[method] for r in rows if r["competition"] == competition and method in r))


def summary(rows: list[dict[str, Any]], budget: float) -> None:
    """Medians per competition and method, and where the mission stands against each rival."""
    print(f"\nbudget {budget:.0f} s per method; medians of {len({r['seed'] for r in rows})} seed(s)")
    print(f"{'competition':15} {'metric':9} " + " ".join(f"{m:>10}" for m in METHODS) + "  vs best AutoML   vs HGB")
    level = ahead = beats_hgb = hgb_perfect = 0
    competitions = list(dict.fromkeys(r["competition"] for r in rows))
    for competition in competitions:
        first = next(r for r in rows if r["competition"] == competition)
        maximize = first["maximize"]
        medians = {m: _median(rows, competition, m) for m in METHODS}
        rival = max(medians["flaml"], medians["autogluon"]) if maximize else min(medians["flaml"], medians["autogluon"])
        vs_rival, vs_hgb = (
            ratio(medians["mission"], rival, maximize),
            ratio(medians["mission"], medians["hgb"], maximize),
        )
        level += vs_rival >= 1
        ahead += vs_rival > 1
        beats_hgb += vs_hgb > 1
        hgb_perfect += medians["hgb"] == (1.0 if maximize else 0.0)
        values = " ".join(f"{medians[m]:10.5g}" for m in METHODS)
        print(f"{competition:15} {first['metric']:9} {values}  {vs_rival:14.4f} {vs_hgb:8.4f}")
    n = len(competitions)
    print(f"level with the better of FLAML and AutoGluon on {level}/{n}, ahead on {ahead}/{n}")
    print(f"ahead of HGB on {beats_hgb}/{n} ({hgb_perfect} where HGB is perfect)")
    untried = [
        r
        for r in rows
        if not r["blends"] or any("no time" in b["reason"] or "timed out" in b["reason"] for b in r["blends"])
    ]
    print(f"missions whose blend was not tried for lack of time or a member's timeout: {len(untried)}/{len(rows)}")
    within = sum(r["mission_elapsed_s"] <= 1.1 * budget for r in rows)
    print(f"missions within +10% of the budget: {within}/{len(rows)}")


def package_code() -> str:
    """The committed package's tree (git's hash of `agent_k/`): commits of docs or benchmarks leave it as it is.
    Rows of uncommitted code could not be told apart, so none are kept."""
    root = Path(__file__).resolve().parent.parent
    git = ["git", "-C", str(root)]
    if subprocess.run([*git, "status", "--porcelain", "agent_k"], capture_output=True, text=True).stdout.strip():
        sys.exit("--results: agent_k has uncommitted changes; commit them first, so each row names its code")
    tree = subprocess.run([*git, "rev-parse", "HEAD:agent_k"], capture_output=True, text=True, check=True)
    return tree.stdout.strip()


def rival_versions() -> dict[str, str]:
    """The versions the rivals ran with: an AutoGluon whose XGBoost could not train is not the same rival."""
    import autogluon.tabular
    import flaml
    import xgboost

    return {"flaml": flaml.__version__, "autogluon": autogluon.tabular.__version__, "xgboost": xgboost.__version__}


def kept_rows(path: Path, stamp: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of `path` run on this code, budget and rivals (rows of others stay in the file, unused)."""
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept = [r for r in rows if all(r.get(k) == v for k, v in stamp.items())]
    if len(kept) < len(rows):
        print(f"{len(rows) - len(kept)} row(s) of {path} ran on other code, budget or rivals: not used")
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first..first+N-1 (to add runs later)")
    parser.add_argument("--competitions", nargs="*", default=list(BUILTINS))
    parser.add_argument("--methods", nargs="*", default=list(METHODS), choices=METHODS)
    parser.add_argument("--home", type=Path, help="keep the missions here for inspection (default: a temp dir)")
    parser.add_argument("--results", type=Path, help="JSON-lines file of rows: kept as they end, resumed from")
    args = parser.parse_args()
    stamp = {"agent_k": package_code(), "budget": args.budget, "rivals": rival_versions()} if args.results else {}
    rows = kept_rows(args.results, stamp) if args.results else []
    done = {(r["seed"], r["competition"]) for r in rows if set(args.methods) <= set(r)}
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp)
        platform = LocalPlatform(home / "competitions")
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            for competition in args.competitions:
                if (seed, competition) in done:
                    continue
                spec = platform.ensure(competition)  # materialised before any clock starts
                data = load(platform.root, spec)
                row: dict[str, Any] = {"seed": seed, "competition": competition, "metric": spec.metric}
                row["maximize"] = spec.maximize
                if "mission" in args.methods:
                    row.update(mission_report(home, competition, args.budget))
                for method, run in (("flaml", run_flaml), ("autogluon", run_autogluon)):
                    if method in args.methods:
                        started = time.monotonic()
                        row[method] = run(spec, data, args.budget, seed)
                        row[f"{method}_wall_s"] = round(time.monotonic() - started, 1)
                if "hgb" in args.methods:
                    row["hgb"] = run_hgb(spec, data, seed)
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.results:
                    with args.results.open("a", encoding="utf-8") as results:
                        results.write(json.dumps({**stamp, **row}) + "\n")
    if set(args.methods) == set(METHODS):
        summary(rows, args.budget)


if __name__ == "__main__":
    main()
