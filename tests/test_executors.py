"""Candidate evaluation on a Dask distributed cluster (an in-process LocalCluster with worker processes)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_k.competition import Criteria
from agent_k.competition.research import CVScheme
from agent_k.config import Settings
from agent_k.mission.launch import MissionSpec
from agent_k.mission.runner import MissionRunner
from agent_k.ml.evaluate import CompetitionData, EvaluationRequest
from agent_k.ml.executors import DaskEvaluator, ExecutorError, LocalEvaluator, make_evaluator
from agent_k.ml.recipes import ModelFamily
from agent_k.ml.search import default_recipe
from agent_k.platforms.local import LocalPlatform
from agent_k.sandbox import Limits, bwrap_problem
from agent_k.store.repository import Store
from tests.conftest import need_tool


def test_executor_specs() -> None:
    assert isinstance(make_evaluator(None, 3), LocalEvaluator) and make_evaluator("local", 3).parallelism == 3
    with pytest.raises(ExecutorError, match="unknown executor 'ssh://x'"):
        make_evaluator("ssh://x", 2)
    with pytest.raises(ExecutorError, match="cannot reach the Dask scheduler"):
        DaskEvaluator("tcp://127.0.0.1:9", timeout_s=1)


@pytest.mark.slow
def test_a_mission_evaluates_its_candidates_on_a_dask_cluster(home: Path, tmp_path: Path) -> None:
    from distributed import Client, LocalCluster, get_task_stream

    url = f"sqlite:///{tmp_path / 'dask.db'}"
    settings = Settings(home=home, database_url=url)
    store = Store.open(url)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        evaluator = DaskEvaluator(cluster.scheduler_address)
        assert evaluator.parallelism == 2
        observer = Client(cluster.scheduler_address)
        runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir), evaluator=evaluator)
        spec = MissionSpec(mission_id="dask", criteria=Criteria(competition="wine"), time_budget=35, stop_early=True)
        runner.create(spec)
        workers = set(observer.scheduler_info()["workers"])
        with get_task_stream(observer) as stream:
            result = asyncio.run(runner.run("dask"))
        evaluator.close()
        observer.close()

    assert result.success, result.detail
    candidates = store.candidates("dask")
    ran_on_workers = [t for t in stream.data if str(t["key"]).startswith("evaluate_on_worker")]
    # The prior is computed in the runner, the blends from their members' predictions: neither runs on a worker.
    models = [c for c in candidates if '"kind":"prior"' not in c.recipe and '"members"' not in c.recipe]
    assert len(models) >= 3
    assert len(ran_on_workers) >= len(models)  # a candidate screened first runs twice: its first fold, then all
    assert len(workers) == 2 and {t["worker"] for t in ran_on_workers} <= workers
    store.close()


def test_candidates_on_a_dask_worker_run_in_its_warm_pool(home: Path, tmp_path: Path) -> None:
    """Each Dask worker holds warm workers, as the local evaluator does: one warm worker, started with the first
    candidate, runs them all (a cold start each would cost an interpreter and the libraries' imports)."""
    from distributed import Client, LocalCluster

    from agent_k.ml.dask_warm import PLUGIN

    need_tool(bwrap_problem())
    spec = LocalPlatform(home / "competitions").ensure("penguins")
    data = CompetitionData.load(spec, home / "competitions" / "penguins" / "public")
    cv = CVScheme(kind="stratified_kfold", n_folds=3)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        evaluator = DaskEvaluator(cluster.scheduler_address)
        results = []
        for c in (0.5, 1.0, 2.0):
            recipe = default_recipe(ModelFamily.linear).model_copy(update={"params": {"C": c}})
            results.append(
                asyncio.run(
                    evaluator.evaluate(EvaluationRequest(recipe, data, cv, tmp_path / str(c), Limits(timeout_s=60)))
                )
            )
        cold = DaskEvaluator(cluster.scheduler_address, warm=False)  # the same worker, asked to start cold
        results.append(
            asyncio.run(cold.evaluate(EvaluationRequest(recipe, data, cv, tmp_path / "cold", Limits(timeout_s=60))))
        )
        with Client(cluster.scheduler_address) as observer:
            started = observer.run(lambda dask_worker: dask_worker.plugins[PLUGIN].pool.started)
            jobs = observer.run(lambda dask_worker: dask_worker.plugins[PLUGIN].pool.jobs)
        cold.close()
        evaluator.close()
    assert all(r.status == "succeeded" for r in results), [r.error for r in results]
    assert list(started.values()) == [1] and list(jobs.values()) == [3]
