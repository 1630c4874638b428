"""The fixed cost of a candidate: the cheapest recipe (a default linear model) on `penguins`, in bubblewrap,
cold (`run_sandboxed`: a new interpreter that imports the libraries) and warm (a worker that has them
imported), in turns, after one warm-up of each; medians and the pairwise ratio.

With --dask, the same through a Dask cluster (a LocalCluster of one worker process, one thread), cold (each
candidate a new sandboxed interpreter on the worker) and warm (the worker's warm pool, `agent_k.ml.dask_warm`).
With --missions, also the candidates a 120 s mission evaluates on each small built-in, through the CLI of
the Python environment given by --agent-k (run it once with an older checkout's environment for "before").

    python benchmarks/candidate_cost.py [--runs 20] [--dask] [--missions] [--agent-k PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent_k.competition.research import CVScheme
from agent_k.ml.evaluate import CompetitionData
from agent_k.ml.executors import DaskEvaluator, Evaluator, LocalEvaluator
from agent_k.ml.recipes import ModelFamily
from agent_k.ml.requests import EvaluationRequest
from agent_k.ml.search import default_recipe
from agent_k.platforms.local import LocalPlatform
from agent_k.sandbox import Limits

SMALL = ("penguins", "titanic", "breast-cancer", "wine", "digits", "diabetes", "diamonds")


async def costs(
    data: CompetitionData, root: Path, runs: int, scheduler: str | None = None
) -> tuple[list[float], list[float]]:
    cv = CVScheme(kind="stratified_kfold", n_folds=5)
    cold: Evaluator = LocalEvaluator(1, warm=False)
    warm: Evaluator = LocalEvaluator(1)
    if scheduler is not None:
        cold, warm = DaskEvaluator(scheduler, warm=False), DaskEvaluator(scheduler)
    times: dict[bool, list[float]] = {False: [], True: []}
    try:
        for run in range(runs + 1):
            for is_warm, evaluator in ((False, cold), (True, warm)):
                recipe = default_recipe(ModelFamily.linear).model_copy(update={"params": {"C": 1.0 + run / 1000}})
                started = time.monotonic()
                result = await evaluator.evaluate(
                    EvaluationRequest(recipe, data, cv, root / f"{is_warm}-{run}", Limits(timeout_s=60))
                )
                assert result.status == "succeeded", result.error
                if run:  # the first of each is a warm-up (the warm one starts its worker)
                    times[is_warm].append(time.monotonic() - started)
    finally:
        cold.close()
        warm.close()
    return times[False], times[True]


def candidates_per_mission(agent_k: str, budget: float) -> dict[str, int]:
    counts = {}
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "AGENT_K_HOME": home}
        env.pop("AGENT_K_DATABASE_URL", None)
        for competition in SMALL:
            command = [agent_k, "run", "--competition", competition, "--time-budget", str(budget), "--json"]
            done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
            mission_id = json.loads(done.stdout.strip().splitlines()[-1])["mission_id"]
            with sqlite3.connect(Path(home) / "agent_k.db") as db:
                (n,) = db.execute(
                    "select count(*) from events where mission_id = ? and type = 'candidate.evaluated'", (mission_id,)
                ).fetchone()
            counts[competition] = n
            print(json.dumps({"competition": competition, "candidates": n}), flush=True)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--dask", action="store_true", help="through a local Dask cluster")
    parser.add_argument("--missions", action="store_true")
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--agent-k", default=str(Path(sys.executable).parent / "agent-k"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        spec = LocalPlatform(root / "competitions").ensure("penguins")
        data = CompetitionData.load(spec, root / "competitions" / "penguins" / "public")
        (root / "candidates").mkdir()
        if args.dask:
            from distributed import LocalCluster

            with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
                cold, warm = asyncio.run(costs(data, root / "candidates", args.runs, cluster.scheduler_address))
        else:
            cold, warm = asyncio.run(costs(data, root / "candidates", args.runs))
    ratios = [w / c for c, w in zip(cold, warm, strict=True)]
    print(
        json.dumps(
            {
                "executor": "dask" if args.dask else "local",
                "runs": args.runs,
                "cold_median_s": round(statistics.median(cold), 3),
                "warm_median_s": round(statistics.median(warm), 3),
                "pairwise_ratio_median": round(statistics.median(ratios), 3),
            }
        )
    )
    if args.missions:
        counts = candidates_per_mission(args.agent_k, args.budget)
        print(json.dumps({"agent_k": args.agent_k, "budget": args.budget, "candidates": counts}))


if __name__ == "__main__":
    main()
