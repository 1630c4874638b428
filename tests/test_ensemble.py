"""Blends of candidates, cheap-first screening and date features, on real data in the real sandbox."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss

from agent_k.competition import Competition, TaskType
from agent_k.competition.research import CVScheme
from agent_k.competition.submission_format import read_submission
from agent_k.mission.candidates import ArchivedCandidate, best_single
from agent_k.mission.screening import (
    Screen,
    likely_runtime_s,
    may_finish,
    sample_rows,
    screen_for,
    screen_then_evaluate,
)
from agent_k.ml.ensemble import Blend, select_blend, write_blend
from agent_k.ml.evaluate import (
    CompetitionData,
    EvaluationRequest,
    OutOfFold,
    check_oof,
    check_test_predictions,
    evaluate,
    fold_scores,
)
from agent_k.ml.executors import LocalEvaluator
from agent_k.ml.profiling import profile
from agent_k.ml.recipes import Ensemble, ModelFamily, Recipe, load_solution
from agent_k.ml.search import default_recipe
from agent_k.ml.stacking import stack
from agent_k.platforms.local import LocalPlatform
from agent_k.sandbox import Limits
from agent_k.store.status import CandidateStatus

CV = CVScheme(kind="stratified_kfold", n_folds=3)
LIMITS = Limits(timeout_s=120)


FAMILIES = [ModelFamily.linear, ModelFamily.random_forest, ModelFamily.hist_gradient_boosting]


@dataclass
class Members:
    """Three families' default recipes evaluated on one competition: their out-of-fold predictions and folders."""

    data: CompetitionData
    folder: Path
    pool: dict[str, OutOfFold]


def _members(data: CompetitionData, folder: Path, families: list[ModelFamily]) -> dict[str, OutOfFold]:
    pool = {}
    for family in families:
        recipe = default_recipe(family)
        result = asyncio.run(evaluate(EvaluationRequest(recipe, data, CV, folder / recipe.key, LIMITS)))
        assert result.status == "succeeded", result.error
        assert result.oof_path is not None
        pool[recipe.key] = check_oof(data, pd.read_csv(result.oof_path))  # our own template's file
        if data.spec.task is TaskType.regression:
            assert result.log_loss is None
        else:  # the tie-break between equal CV scores, computed here independently of our metrics code
            oof = pd.read_csv(result.oof_path)
            truth = data.train_target.loc[oof[data.spec.id_column].astype(str)].astype(str)
            probabilities = oof[list(data.spec.classes or [])].to_numpy()
            probabilities /= probabilities.sum(axis=1, keepdims=True)
            expected = log_loss(truth, probabilities, labels=data.spec.classes)
            assert result.log_loss == pytest.approx(expected, abs=1e-5)
    return pool


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory, competition_cache: Path) -> Callable[[str], Members]:
    """The three members on a competition, evaluated once for the module's blend and stack tests (they only read
    the members' files)."""
    made: dict[str, Members] = {}

    def of(competition: str) -> Members:
        if competition not in made:
            folder = tmp_path_factory.mktemp(f"members-{competition}")
            shutil.copytree(competition_cache / competition, folder / "competitions" / competition)
            spec = LocalPlatform(folder / "competitions").ensure(competition)
            data = CompetitionData.load(spec, folder / "competitions" / competition / "public")
            made[competition] = Members(data, folder, _members(data, folder, FAMILIES))
        return made[competition]

    return of


@pytest.mark.parametrize("competition", ["wine", "titanic", "diabetes"])
def test_a_blend_script_reproduces_the_blended_out_of_fold_predictions(
    members: Callable[[str], Members], tmp_path: Path, competition: str
) -> None:
    """The blend's CV is computed from its members' predictions; running the blend itself must agree."""
    made_members = members(competition)
    data, pool, families = made_members.data, made_members.pool, FAMILIES
    spec = data.spec
    singles = {key: float(np.mean(fold_scores(data, oof))) for key, oof in pool.items()}
    ordered = dict(sorted(pool.items(), key=lambda kv: singles[kv[0]], reverse=spec.maximize))

    blend = select_blend(data, ordered)
    assert blend is not None, "three different families blend better than the best alone on these data"
    best_single = max(singles.values()) if spec.maximize else min(singles.values())
    assert spec.better(blend.cv_mean, best_single)

    by_key = {default_recipe(f).key: default_recipe(f) for f in families}
    ensemble = Ensemble(members=tuple(by_key[k] for k in blend.keys), weights=blend.weights)
    assert load_solution(ensemble.model_dump_json()) == ensemble
    result = asyncio.run(evaluate(EvaluationRequest(ensemble, data, CV, tmp_path / "blend", LIMITS)))
    assert result.status == "succeeded", result.error
    assert result.fold_scores == pytest.approx(blend.fold_scores, rel=1e-3, abs=1e-3)

    # Made from the members' test predictions, no model fitted: the very files the blend's own script writes.
    tests = {
        key: check_test_predictions(data, pd.read_csv(made_members.folder / key / "test_predictions.csv"))
        for key in pool
    }
    made = write_blend(ensemble, blend, data, CV, tests, tmp_path / "made")
    assert made.cv_mean == blend.cv_mean and made.submission_path is not None
    assert (tmp_path / "made" / "solution.py").read_text() == (tmp_path / "blend" / "solution.py").read_text()
    ran, written = (pd.read_csv(tmp_path / d / "test_predictions.csv") for d in ("blend", "made"))
    np.testing.assert_allclose(written.iloc[:, 1:].to_numpy(), ran.iloc[:, 1:].to_numpy(), atol=1e-6)
    ran_submission, made_submission = (pd.read_csv(tmp_path / d / "submission.csv") for d in ("blend", "made"))
    assert list(made_submission.columns) == list(ran_submission.columns)
    if spec.task is TaskType.regression or spec.prediction.value == "probability":
        np.testing.assert_allclose(made_submission.iloc[:, 1:], ran_submission.iloc[:, 1:], atol=1e-6)
    else:
        assert made_submission.equals(ran_submission)


@pytest.mark.parametrize("competition", ["wine", "titanic", "diabetes"])
def test_a_stack_script_reproduces_the_stacked_test_predictions(
    members: Callable[[str], Members], tmp_path: Path, competition: str
) -> None:
    """A stacker fitted on the members' out-of-fold predictions (nested for its CV) mixes their test predictions;
    the stack's own script, holding the stacker's coefficients, writes the same test predictions."""
    made_members = members(competition)
    data, pool, families = made_members.data, made_members.pool, FAMILIES
    made = stack(data, pool)
    assert made is not None
    stacker, oof, scores = made
    assert len(scores) == CV.n_folds and oof.predictions.shape == next(iter(pool.values())).predictions.shape
    by_key = {default_recipe(f).key: default_recipe(f) for f in families}
    ensemble = Ensemble(members=tuple(by_key[k] for k in pool), weights=(1.0,) * 3, stacker=stacker)
    assert load_solution(ensemble.model_dump_json()) == ensemble
    blend = Blend(tuple(pool), (1.0,) * 3, scores, oof, stacker)
    tests = {
        key: check_test_predictions(data, pd.read_csv(made_members.folder / key / "test_predictions.csv"))
        for key in pool
    }
    made_files = write_blend(ensemble, blend, data, CV, tests, tmp_path / "made")
    assert made_files.cv_mean == pytest.approx(float(np.mean(scores)))
    ran = asyncio.run(evaluate(EvaluationRequest(ensemble, data, CV, tmp_path / "ran", LIMITS)))
    assert ran.status == "succeeded", ran.error
    written, run = (pd.read_csv(tmp_path / d / "test_predictions.csv") for d in ("made", "ran"))
    np.testing.assert_allclose(written.iloc[:, 1:].to_numpy(), run.iloc[:, 1:].to_numpy(), atol=1e-6)


def test_blend_selection_moves_weight_away_from_a_useless_member(home: Path, tmp_path: Path) -> None:
    spec = LocalPlatform(home / "competitions").ensure("diabetes")
    data = CompetitionData.load(spec, home / "competitions" / "diabetes" / "public")
    pool = _members(data, tmp_path, [ModelFamily.linear, ModelFamily.random_forest])
    first = next(iter(pool.values()))
    noise = np.random.default_rng(0).normal(data.train_target.mean(), data.train_target.std(), len(first.ids))
    pool = {"noise": OutOfFold(first.ids, first.folds, pd.DataFrame({spec.target: noise})), **pool}
    blend = select_blend(data, pool)
    assert blend is not None
    assert blend.cv_mean < float(np.mean(fold_scores(data, pool["noise"])))
    shares = dict(zip(blend.keys, np.array(blend.weights) / sum(blend.weights), strict=True))
    assert shares.get("noise", 0.0) <= 0.1, shares


def test_a_screen_runs_only_the_first_folds_and_writes_no_submission(home: Path, tmp_path: Path) -> None:
    spec = LocalPlatform(home / "competitions").ensure("wine")
    data = CompetitionData.load(spec, home / "competitions" / "wine" / "public")
    recipe = default_recipe(ModelFamily.extra_trees)
    quick = asyncio.run(evaluate(EvaluationRequest(recipe, data, CV, tmp_path / "quick", LIMITS, folds=1)))
    assert quick.status == "succeeded", quick.error
    assert len(quick.fold_scores) == 1 and quick.submission_path is None
    assert not (tmp_path / "quick" / "submission.csv").exists()

    full = asyncio.run(evaluate(EvaluationRequest(recipe, data, CV, tmp_path / "full", LIMITS)))
    assert full.fold_scores[0] == pytest.approx(quick.fold_scores[0]), "the screen must use the same first fold"


@pytest.mark.parametrize(("threshold", "status"), [(1.01, "screened_out"), (0.5, "succeeded")])
def test_a_screened_candidate_goes_on_to_full_cv_only_if_its_first_fold_is_good_enough(
    home: Path, tmp_path: Path, threshold: float, status: str
) -> None:
    spec = LocalPlatform(home / "competitions").ensure("wine")
    data = CompetitionData.load(spec, home / "competitions" / "wine" / "public")
    recipe = default_recipe(ModelFamily.linear)
    screen = Screen(folds=1, threshold=threshold)
    result, outcome = asyncio.run(
        screen_then_evaluate(LocalEvaluator(1), EvaluationRequest(recipe, data, CV, tmp_path / "c", LIMITS), screen)
    )
    assert outcome == status, result.error
    if status == "screened_out":
        assert len(result.fold_scores) == 1 and result.error and result.error.startswith("screened out")
        assert not (tmp_path / "c" / "submission.csv").exists()
    else:
        assert len(result.fold_scores) == CV.n_folds and (tmp_path / "c" / "submission.csv").exists()


def test_a_candidate_whose_full_cv_would_not_end_in_time_is_not_run_after_its_screen(
    home: Path, tmp_path: Path
) -> None:
    """It would only time out: it is screened out on the fold it ran, with the reason, and nothing more runs."""
    spec = LocalPlatform(home / "competitions").ensure("wine")
    data = CompetitionData.load(spec, home / "competitions" / "wine" / "public")
    recipe, ten_folds = default_recipe(ModelFamily.extra_trees), CVScheme(kind="stratified_kfold", n_folds=10)
    cold = LocalEvaluator(1, warm=False)  # the fold measured and the screen cost the same
    measured = cold.evaluate(EvaluationRequest(recipe, data, ten_folds, tmp_path / "measured", LIMITS, folds=1))
    limits = Limits(timeout_s=3 * asyncio.run(measured).runtime_s)  # room for its screen, not for ten folds
    passing = Screen(folds=1, threshold=0.0)
    result, outcome = asyncio.run(
        screen_then_evaluate(cold, EvaluationRequest(recipe, data, ten_folds, tmp_path / "c", limits), passing)
    )
    assert outcome == "screened_out" and len(result.fold_scores) == 1
    assert result.error and "its full CV would take" in result.error
    assert not (tmp_path / "c" / "submission.csv").exists()


def test_boosting_whose_rounds_end_with_the_time_may_start_past_the_time_left() -> None:
    """LightGBM ends its rounds at its share of the time (`agent_k.ml.rounds`) and comes back with fewer of them
    where a forest would time out and leave nothing: so it starts where its likely CV is up to twice the time left,
    a forest (or LightGBM over text, whose text models' fits do not end early) only where it fits."""
    cv, limits = CVScheme(kind="kfold", n_folds=3), Limits(timeout_s=40)
    lightgbm, forest = default_recipe(ModelFamily.lightgbm), default_recipe(ModelFamily.random_forest)
    assert may_finish(lightgbm, 70, cv, None, limits)
    assert not may_finish(forest, 70, cv, None, limits)
    assert may_finish(forest, 40, cv, None, limits)
    assert not may_finish(lightgbm, 90, cv, None, limits)
    with_text = lightgbm.model_copy(update={"text_columns": ("review",)})  # its text models' fits do not end early
    assert not may_finish(with_text, 70, cv, None, limits)


def test_a_recipe_is_screened_when_its_family_is_costly_and_compared_with_the_third_best(tmp_path: Path) -> None:
    spec = Competition(id="c", title="c", task=TaskType.regression, metric="rmse", target="y")
    linear, forest = default_recipe(ModelFamily.linear), default_recipe(ModelFamily.random_forest)

    def done(recipe: Recipe, cv: float, first_fold: float, runtime_s: float) -> ArchivedCandidate:
        return ArchivedCandidate(
            key=f"{recipe.family}-{cv}",
            recipe=recipe,
            generation=1,
            status=CandidateStatus.succeeded,
            cv=cv,
            fold_scores=[first_fold, cv],
            runtime_s=runtime_s,
            error=None,
            folder=tmp_path,
        )

    # Cheap linear models are the usual case; the one forest costs twenty times as much.
    history = [done(linear, 10.0, 9.0, 1.0), done(linear, 12.0, 11.0, 1.0), done(linear, 11.0, 13.0, 1.0)]
    history.append(done(forest, 20.0, 19.0, 20.0))
    kfold = CVScheme(kind="kfold", n_folds=5)
    costly, cheap = likely_runtime_s(forest, history), likely_runtime_s(linear, history)
    assert (costly, cheap) == (20.0, 1.0)
    assert likely_runtime_s(default_recipe(ModelFamily.knn), history) == 1.0, "no run of its own: all runs' median"
    assert likely_runtime_s(forest, []) is None
    assert screen_for(history, spec, kfold, costly) == Screen(folds=1, threshold=11.0)
    assert screen_for(history, spec, kfold, cheap) is None, "cheap families are evaluated in full"
    assert screen_for(history, spec, kfold, None) is None, "nothing known of its cost yet"
    assert screen_for(history[2:], spec, kfold, costly) is None, "no third-best to compare with"
    assert screen_for(history, spec, CVScheme(kind="kfold", n_folds=2), costly) is None


def test_a_generation_with_a_family_new_to_large_data_first_looks_at_a_sample() -> None:
    """Others' runs say nothing of a new family's cost (forests timed out on diamonds where boosting took 8 s):
    on large data its generation is scored on a sample first; on small data full CV stays cheap whatever runs."""
    assert sample_rows(40_000, 5.0) is None, "cheap runs so far, no new family: full CV"
    assert sample_rows(40_000, 5.0, new_family=True) == 5_000
    assert sample_rows(40_000, 8.0) == 5_000
    assert sample_rows(160_000, 2.0, new_family=True) == 20_000
    assert sample_rows(10_000, 60.0, new_family=True) is None, "small data: a sample would favour simple models"


def test_equal_cv_scores_are_told_apart_by_out_of_fold_log_loss(tmp_path: Path) -> None:
    spec = Competition(id="c", title="c", task=TaskType.multiclass, metric="accuracy", target="y", classes=["a", "b"])
    linear, forest = default_recipe(ModelFamily.linear), default_recipe(ModelFamily.random_forest)

    def done(recipe: Recipe, key: str, cv: float, log_loss: float | None) -> ArchivedCandidate:
        status = CandidateStatus.succeeded
        return ArchivedCandidate(key, recipe, 1, status, cv, [cv], 1.0, None, tmp_path, log_loss=log_loss)

    unsure, confident = done(forest, "unsure", 1.0, 0.19), done(linear, "confident", 1.0, 0.05)
    assert best_single([unsure, confident], spec) == confident
    assert best_single([confident, unsure], spec) == confident, "whichever was reached first"
    assert best_single([done(linear, "unknown", 1.0, None), unsure], spec) == unsure, "a known log loss wins"
    better = done(forest, "better", 0.99, 0.02)
    assert best_single([better, unsure], spec) == unsure, "CV decides first"
    minimized = spec.model_copy(update={"metric": "logloss"})
    assert best_single([better, unsure], minimized) == better


def test_date_columns_are_found_and_become_date_parts(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 400
    days = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 730, size=n), unit="D")
    frame = pd.DataFrame(
        {
            "id": np.arange(n),
            "sold_on": days.strftime("%Y-%m-%d"),
            "size": rng.uniform(10, 100, size=n),
        }
    )
    frame["price"] = frame["size"] * 3 + np.where(days.day_of_week >= 5, 50.0, 0.0) + rng.normal(0, 1, size=n)
    data_dir = tmp_path / "public"
    data_dir.mkdir()
    frame.iloc[:300].to_csv(data_dir / "train.csv", index=False)
    frame.iloc[300:].drop(columns="price").to_csv(data_dir / "test.csv", index=False)
    spec = Competition(id="sales", title="Sales", task=TaskType.regression, metric="rmse", target="price")

    findings = profile(spec, frame.iloc[:300], frame.iloc[300:].drop(columns="price"))
    kinds = {c.name: c.kind for c in findings.columns}
    assert kinds == {"sold_on": "datetime", "size": "numeric"}

    data = CompetitionData.load(spec, data_dir)
    kfold = CVScheme(kind="kfold", n_folds=3)
    with_dates = default_recipe(ModelFamily.hist_gradient_boosting, date_columns=("sold_on",))
    without = default_recipe(ModelFamily.hist_gradient_boosting, drop_columns=("sold_on",))
    scored = {
        r.key: asyncio.run(evaluate(EvaluationRequest(r, data, kfold, tmp_path / r.key, LIMITS)))
        for r in (with_dates, without)
    }
    assert all(e.status == "succeeded" for e in scored.values())
    dated, plain = scored[with_dates.key].cv_mean, scored[without.key].cv_mean
    assert dated is not None and plain is not None
    assert dated < plain * 0.5, "the weekday effect is only learnable from the date parts"

    script = tmp_path / with_dates.key / "solution.py"
    out = tmp_path / "standalone.csv"
    subprocess.run([sys.executable, str(script), "--data", str(data_dir), "--out", str(out)], check=True, cwd=tmp_path)
    read_submission(out, spec, pd.read_csv(data_dir / "test.csv")["id"])
