"""Rendered solutions run standalone, and their CV is computed by our code from out-of-fold predictions."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_k.competition import InvalidSubmission
from agent_k.competition.research import CVScheme
from agent_k.competition.submission_format import read_submission
from agent_k.ml.evaluate import CompetitionData, check_oof, evaluate, fold_scores, read_oof
from agent_k.ml.prior import evaluate_prior
from agent_k.ml.recipes import ModelFamily
from agent_k.ml.render import render_solution
from agent_k.ml.sandbox import Limits
from agent_k.ml.search import FeatureOptions, default_recipe, mutate
from agent_k.platforms.local import LocalPlatform

CV = CVScheme(kind="stratified_kfold", n_folds=3)
FEATURE_OPTIONS = {
    "penguins": FeatureOptions(
        skewed=("body_mass_g",),
        high_cardinality=("island", "sex"),
        ratios=(("bill_length_mm", "bill_depth_mm"), ("body_mass_g", "flipper_length_mm")),
    ),
    "diabetes": FeatureOptions(skewed=("s4",), log_target=True),
}


MODELS = [f for f in ModelFamily if not f.spec.model_free and not f.spec.pixels]
"""A naive forecast needs a forecast (test_forecasts.py), the network trained from scratch pixels (test_cnn.py)."""


@pytest.mark.parametrize("competition", ["penguins", "titanic", "diabetes"])
@pytest.mark.parametrize("family", MODELS)
def test_every_family_renders_a_script_that_runs_on_its_own(
    home: Path, tmp_path: Path, competition: str, family: ModelFamily
) -> None:
    platform = LocalPlatform(home / "competitions")
    spec = platform.ensure(competition)
    data = home / "competitions" / competition / "public"
    script = tmp_path / "solution.py"
    source = render_solution(default_recipe(family), spec, CV)
    assert "agent_k" not in source
    script.write_text(source)
    out = tmp_path / "submission.csv"
    completed = subprocess.run(
        [sys.executable, str(script), "--data", str(data), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    test_ids = pd.read_csv(data / "test.csv")[spec.id_column]
    read_submission(out, spec, test_ids)


def test_large_data_submits_the_average_of_its_fold_models(home: Path, tmp_path: Path) -> None:
    """Above the threshold the fold models predict the test set (no final fit); below it, one fit on all rows."""
    spec = LocalPlatform(home / "competitions").ensure("diabetes")
    data = home / "competitions" / "diabetes" / "public"
    source = render_solution(default_recipe(ModelFamily.lightgbm), spec, CV)
    assert "FOLD_AVERAGE_ROWS = 100000" in source
    submissions = {}
    for threshold in (100000, 0):
        script = tmp_path / f"solution_{threshold}.py"
        script.write_text(source.replace("FOLD_AVERAGE_ROWS = 100000", f"FOLD_AVERAGE_ROWS = {threshold}"))
        out, oof = tmp_path / f"submission_{threshold}.csv", tmp_path / f"oof_{threshold}.csv"
        command = [sys.executable, str(script), "--data", str(data), "--out", str(out), "--oof", str(oof)]
        completed = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert completed.returncode == 0, completed.stderr
        submissions[threshold] = read_submission(out, spec, pd.read_csv(data / "test.csv")[spec.id_column])
        assert pd.read_csv(oof).equals(pd.read_csv(tmp_path / "oof_100000.csv"))  # the same CV either way
    refit, averaged = (submissions[t][spec.target].to_numpy() for t in (100000, 0))
    assert not np.allclose(refit, averaged)  # other models made them...
    assert np.corrcoef(refit, averaged)[0, 1] > 0.9  # ...that learnt the same thing


def test_cv_comes_from_out_of_fold_predictions(home: Path, tmp_path: Path) -> None:
    spec = LocalPlatform(home / "competitions").ensure("wine")
    data = CompetitionData.load(spec, home / "competitions" / "wine" / "public")
    result = asyncio.run(evaluate(default_recipe(ModelFamily.linear), data, CV, tmp_path / "c", Limits(timeout_s=60)))
    assert result.status == "succeeded", result.error
    assert len(result.fold_scores) == 3 and result.cv_mean == pytest.approx(sum(result.fold_scores) / 3)
    assert result.oof_path is not None
    read_back = asyncio.run(read_oof(data, result.oof_path))
    assert fold_scores(data, read_back) == pytest.approx(result.fold_scores, abs=1e-6)

    oof = pd.read_csv(result.oof_path)
    with pytest.raises(InvalidSubmission, match="every row a fold scores exactly once"):
        check_oof(data, oof.iloc[1:])


def test_a_broken_recipe_is_a_failed_candidate_with_its_reason(home: Path, tmp_path: Path) -> None:
    spec = LocalPlatform(home / "competitions").ensure("penguins")
    data = CompetitionData.load(spec, home / "competitions" / "penguins" / "public")
    recipe = default_recipe(ModelFamily.knn).model_copy(update={"params": {"n_neighbors": 0, "weights": "uniform"}})
    result = asyncio.run(evaluate(recipe, data, CV, tmp_path / "c", Limits(timeout_s=60)))
    assert result.status == "failed" and result.cv_mean is None
    assert result.error and "n_neighbors" in result.error


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    family=st.sampled_from(MODELS),
    seed=st.integers(0, 10_000),
    steps=st.integers(1, 5),
    competition=st.sampled_from(["penguins", "diabetes"]),
)
def test_random_recipes_run_standalone_and_score(
    home: Path, tmp_path_factory: pytest.TempPathFactory, family: ModelFamily, seed: int, steps: int, competition: str
) -> None:
    spec = LocalPlatform(home / "competitions").ensure(competition)
    data = CompetitionData.load(spec, home / "competitions" / competition / "public")
    rng = random.Random(seed)
    recipe = default_recipe(family)
    for _ in range(steps):
        recipe = mutate(recipe, rng, FEATURE_OPTIONS[competition])
    workdir = tmp_path_factory.mktemp("random-recipe")
    result = asyncio.run(evaluate(recipe, data, CV, workdir, Limits(timeout_s=120)))
    assert result.status == "succeeded", f"{recipe.summary()}: {result.error}"
    assert result.cv_mean is not None and np.isfinite(result.cv_mean)


def test_feature_operations_run_standalone(home: Path, tmp_path: Path) -> None:
    spec = LocalPlatform(home / "competitions").ensure("penguins")
    data = CompetitionData.load(spec, home / "competitions" / "penguins" / "public")
    recipe = default_recipe(ModelFamily.linear).model_copy(
        update={
            "log_columns": ("body_mass_g", "flipper_length_mm"),
            "frequency_columns": ("island", "sex"),
            "ratio_columns": (("bill_length_mm", "bill_depth_mm"),),
        }
    )
    assert recipe.summary().endswith("[log+frequency+ratio]")
    result = asyncio.run(evaluate(recipe, data, CV, tmp_path / "c", Limits(timeout_s=60)))
    assert result.status == "succeeded", result.error
    source = (tmp_path / "c" / "solution.py").read_text()
    assert "log_columns=['body_mass_g', 'flipper_length_mm']" in source
    assert "frequency_columns=['island', 'sex']" in source
    assert "ratio_columns=[('bill_length_mm', 'bill_depth_mm')]" in source


@pytest.mark.parametrize("competition", ["penguins", "diabetes"])
def test_the_prior_is_computed_by_our_code_and_its_script_reproduces_it(
    home: Path, tmp_path: Path, competition: str
) -> None:
    """The runner computes the prior itself (no rendered script runs in its process); the script it archives
    writes the very same files standalone."""
    spec = LocalPlatform(home / "competitions").ensure(competition)
    data = CompetitionData.load(spec, home / "competitions" / competition / "public", CV)
    result = asyncio.run(evaluate_prior(data, CV, tmp_path / "prior"))
    assert result.status == "succeeded" and result.cv_mean is not None, result.error
    assert result.script_path is not None and result.submission_path is not None and result.oof_path is not None
    out, oof = tmp_path / "submission.csv", tmp_path / "oof.csv"
    completed = subprocess.run(
        [sys.executable, str(result.script_path), "--data", str(data.data_dir), "--out", str(out), "--oof", str(oof)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert out.read_bytes() == result.submission_path.read_bytes()
    assert oof.read_bytes() == result.oof_path.read_bytes()
