"""Warm workers: our templates run one after another in a long-lived bubblewrap sandbox, with the same results
as a cold candidate; a job over its time or memory takes its worker down and the next job gets a fresh one;
a model-written script never runs warm."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest

from agent_k.competition.research import CVScheme
from agent_k.ml.evaluate import CompetitionData, EvaluationRequest, evaluate
from agent_k.ml.executors import LocalEvaluator
from agent_k.ml.recipes import ModelFamily, Script
from agent_k.ml.render import render_solution
from agent_k.ml.search import default_recipe
from agent_k.platforms.local import LocalPlatform
from agent_k.sandbox import Limits, bwrap_problem
from tests.conftest import need_tool

CV = CVScheme(kind="stratified_kfold", n_folds=3)


@pytest.fixture
def penguins(home: Path) -> CompetitionData:
    need_tool(bwrap_problem())
    spec = LocalPlatform(home / "competitions").ensure("penguins")
    return CompetitionData.load(spec, home / "competitions" / "penguins" / "public")


def test_warm_runs_score_and_submit_exactly_as_cold_ones(penguins: CompetitionData, tmp_path: Path) -> None:
    recipes = [default_recipe(f) for f in (ModelFamily.linear, ModelFamily.lightgbm, ModelFamily.knn)]
    evaluator = LocalEvaluator(1)

    async def scenario() -> None:
        for recipe in recipes:
            cold = await evaluate(
                EvaluationRequest(recipe, penguins, CV, tmp_path / "cold" / recipe.key, Limits(timeout_s=120))
            )
            warm = await evaluator.evaluate(
                EvaluationRequest(recipe, penguins, CV, tmp_path / "warm" / recipe.key, Limits(timeout_s=120))
            )
            assert (warm.status, warm.fold_scores) == (cold.status, cold.fold_scores), warm.error
            assert warm.submission_path is not None and cold.submission_path is not None
            assert pd.read_csv(warm.submission_path).equals(pd.read_csv(cold.submission_path))

    try:
        asyncio.run(scenario())
    finally:
        evaluator.close()
    assert evaluator._pool.started == 1, "one worker took every job"


def test_a_job_over_its_time_takes_its_worker_down_and_the_next_gets_a_fresh_one(
    penguins: CompetitionData, tmp_path: Path
) -> None:
    """Starting a worker counts in a job's time too: a job whose time ends while its worker still starts is timed
    out then, not once the worker is up."""
    evaluator = LocalEvaluator(1)
    slow = default_recipe(ModelFamily.random_forest).model_copy(update={"params": {"n_estimators": 500}})
    fine = default_recipe(ModelFamily.linear)

    async def scenario() -> None:
        early = await evaluator.evaluate(
            EvaluationRequest(fine, penguins, CV, tmp_path / "early", Limits(timeout_s=0.2))
        )
        assert early.status == "failed" and early.error == "timed out"
        assert evaluator._pool.started == 0, "its time ended while its worker was still starting"
        before = await evaluator.evaluate(
            EvaluationRequest(fine, penguins, CV, tmp_path / "before", Limits(timeout_s=60))
        )
        assert before.status == "succeeded", before.error
        timed = await evaluator.evaluate(
            EvaluationRequest(slow, penguins, CV, tmp_path / "slow", Limits(timeout_s=0.5))
        )
        assert timed.status == "failed" and timed.error == "timed out"
        after = await evaluator.evaluate(
            EvaluationRequest(fine, penguins, CV, tmp_path / "after", Limits(timeout_s=60))
        )
        assert after.status == "succeeded", after.error

    try:
        asyncio.run(scenario())
    finally:
        evaluator.close()
    assert evaluator._pool.started == 2


def test_a_script_a_model_wrote_never_runs_warm(penguins: CompetitionData, tmp_path: Path) -> None:
    source = render_solution(default_recipe(ModelFamily.linear), penguins.spec, CV)
    evaluator = LocalEvaluator(1)
    try:
        result = asyncio.run(
            evaluator.evaluate(
                EvaluationRequest(
                    Script(source=source, note="edited"), penguins, CV, tmp_path / "s", Limits(timeout_s=120)
                )
            )
        )
    finally:
        evaluator.close()
    assert result.status == "succeeded", result.error
    assert evaluator._pool.started == 0


def test_a_warm_worker_sees_only_its_data_and_writes_nothing_of_the_host(
    penguins: CompetitionData, tmp_path: Path
) -> None:
    """A job's script (ours, but say one went wrong) cannot read the hidden labels or another mission's files,
    and cannot write the candidate folders: its outputs come back through the runner."""
    hidden = penguins.data_dir.parent / "private" / "solution.csv"
    assert hidden.exists()
    probe = tmp_path / "jobs" / "probe"
    probe.mkdir(parents=True)
    (probe / "solution.py").write_text(
        "import os, pathlib, sys\n"
        f"visible = [p for p in ({str(hidden)!r}, {str(tmp_path / 'elsewhere')!r}) if os.path.exists(p)]\n"
        "writable = [p for p in ('/sandbox/jobs', '/sandbox/data', '/') if os.access(p, os.W_OK)]\n"
        "pathlib.Path('seen.txt').write_text(repr(visible) + ' ' + repr(writable) + ' '"
        " + repr(sorted(os.listdir('/sandbox/data'))))\n"
    )
    (tmp_path / "elsewhere").write_text("secret")
    from agent_k.sandbox import Job
    from agent_k.sandbox.warm import WarmPool

    pool = WarmPool(1)
    job = Job(script=probe / "solution.py", data=penguins.data_dir, outputs={"seen.txt": 4096})
    try:
        result = asyncio.run(pool.run(job, workdir=probe, limits=Limits(timeout_s=60)))
    finally:
        pool.close()
    assert result.ok, result.stderr_tail
    seen = (probe / "seen.txt").read_text()
    assert seen.startswith("[] [] ") and "train.csv" in seen and "solution.csv" not in seen
    assert pool.started == 1
