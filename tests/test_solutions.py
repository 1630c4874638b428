"""Rendered solutions run standalone, and their CV is computed by our code from out-of-fold predictions."""

from __future__ import annotations

import asyncio
import os
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
from agent_k.ml.evaluate import CompetitionData, EvaluationRequest, check_oof, evaluate, fold_scores, read_oof
from agent_k.ml.prior import evaluate_prior
from agent_k.ml.profiling import profile
from agent_k.ml.recipes import ModelFamily
from agent_k.ml.render import refits, render_solution
from agent_k.ml.search import FeatureOptions, default_recipe, feature_options, mutate, starting_recipe
from agent_k.platforms.local import LocalPlatform
from agent_k.sandbox import Limits
from tests.support.builtins import prepared_builtin

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


def test_a_submission_averages_the_fold_models_unless_refitted(home: Path, tmp_path: Path) -> None:
    """A script that cross-validates (`--oof`, as the mission runs it) submits the average of its fold models'
    test predictions (no final fit); `--refit` fits once more on all rows instead, as a plain run does (the harness
    runs model-written scripts plainly on each fold), and a forecast's script refits by default."""
    spec = LocalPlatform(home / "competitions").ensure("diabetes")
    data = home / "competitions" / "diabetes" / "public"
    source = render_solution(default_recipe(ModelFamily.lightgbm), spec, CV)
    assert "REFIT = False" in source
    script = tmp_path / "solution.py"
    script.write_text(source)
    test_ids = pd.read_csv(data / "test.csv")[spec.id_column]
    runs = {}
    for flag in ("--no-refit", "--refit"):
        out, oof, predictions = (tmp_path / f"{name}{flag}.csv" for name in ("submission", "oof", "predictions"))
        command = [sys.executable, str(script), "--data", str(data), "--out", str(out), "--oof", str(oof)]
        command += ["--predictions", str(predictions), flag]
        completed = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert completed.returncode == 0, completed.stderr
        runs[flag] = read_submission(out, spec, test_ids)[spec.target].to_numpy()
        written = pd.read_csv(predictions)
        assert written[spec.id_column].equals(test_ids)
        np.testing.assert_allclose(written[spec.target].to_numpy(), runs[flag])  # what the submission is made of
        assert pd.read_csv(oof).equals(pd.read_csv(tmp_path / "oof--no-refit.csv"))  # the same CV either way
    averaged, refit = runs["--no-refit"], runs["--refit"]
    plain = tmp_path / "plain.csv"
    completed = subprocess.run(
        [sys.executable, str(script), "--data", str(data), "--out", str(plain)], capture_output=True, timeout=120
    )
    assert completed.returncode == 0 and np.allclose(read_submission(plain, spec, test_ids)[spec.target], refit)
    assert not np.allclose(refit, averaged)  # other models made them...
    assert np.corrcoef(refit, averaged)[0, 1] > 0.9  # ...that learnt the same thing
    forward = CVScheme(kind="forward", n_folds=3, time=None)
    assert refits(forward) and not refits(CV)


def test_cv_comes_from_out_of_fold_predictions(home: Path, tmp_path: Path) -> None:
    spec = LocalPlatform(home / "competitions").ensure("wine")
    data = CompetitionData.load(spec, home / "competitions" / "wine" / "public")
    result = asyncio.run(
        evaluate(EvaluationRequest(default_recipe(ModelFamily.linear), data, CV, tmp_path / "c", Limits(timeout_s=60)))
    )
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
    result = asyncio.run(evaluate(EvaluationRequest(recipe, data, CV, tmp_path / "c", Limits(timeout_s=60))))
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
    result = asyncio.run(evaluate(EvaluationRequest(recipe, data, CV, workdir, Limits(timeout_s=120))))
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
    result = asyncio.run(evaluate(EvaluationRequest(recipe, data, CV, tmp_path / "c", Limits(timeout_s=60))))
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


def test_several_targets_share_the_features_that_read_no_target(tmp_path: Path) -> None:
    """A multi-label text model makes its TF-IDF once per fold for all of its targets, not once per target: the
    same out-of-fold predictions as fitting each target's pipeline whole, in less time."""
    prepared = prepared_builtin("breach-types")
    spec, data = prepared.spec, tmp_path / "data"
    data.mkdir()
    train, test = prepared.train.head(400), prepared.test.head(50)
    train.to_csv(data / "train.csv", index=False)
    test.to_csv(data / "test.csv", index=False)
    findings = profile(spec, train, test)
    options = feature_options(findings, spec, ())
    recipe = starting_recipe(ModelFamily.linear, options, tuple(findings.id_like))
    assert recipe.text_columns and len(spec.target_columns) > 2
    source = render_solution(recipe, spec, CV)
    assert "    shared = not (" in source
    oofs = {}
    one_thread = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}  # as a sandbox's one thread
    for name, text in (
        ("shared", source),
        ("each", source.replace("    shared = not (", "    shared = False and not (")),
    ):
        script, oof = tmp_path / f"{name}.py", tmp_path / f"{name}-oof.csv"
        script.write_text(text)
        command = [sys.executable, str(script), "--data", str(data), "--out", "x.csv", "--oof", str(oof), "--cv-only"]
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path, env=one_thread
        )
        assert completed.returncode == 0, completed.stderr
        oofs[name] = pd.read_csv(oof)
    assert list(oofs["shared"].columns) == list(oofs["each"].columns)
    np.testing.assert_allclose(oofs["shared"].iloc[:, 2:], oofs["each"].iloc[:, 2:], atol=1e-9)


def _mpls_stops(rows: int, tmp_path: Path) -> tuple[CompetitionData, str]:
    """The first `rows` of mpls-stops (real police stops: dates, categories, missing values, string labels) in a
    folder of their own, and a LightGBM recipe's script over them: 128 leaves at rate 0.3, which overfits soon."""
    prepared = prepared_builtin("mpls-stops")
    spec = prepared.spec
    options = feature_options(profile(spec, prepared.train, prepared.test), spec, ())
    recipe = starting_recipe(ModelFamily.lightgbm, options, ())
    overlong = {"n_estimators": 600, "learning_rate": 0.3, "num_leaves": 128, "min_child_samples": 2}
    source = render_solution(recipe.model_copy(update={"params": {**recipe.params, **overlong}}), spec, CV)
    data = tmp_path / str(rows)
    data.mkdir()
    prepared.train.head(rows).to_csv(data / "train.csv", index=False)
    prepared.test.head(100).to_csv(data / "test.csv", index=False)
    return CompetitionData.load(spec, data), source


def _cross_validate(
    competition: CompetitionData, source: str, name: str, *args: str, timeout: float = 300
) -> tuple[list[float], pd.DataFrame]:
    """The script's fold scores and out-of-fold predictions, run on one thread (as a sandbox slot: the other core
    runs tests)."""
    data = competition.data_dir
    script, oof = data / f"{name}.py", data / f"{name}-oof.csv"
    script.write_text(source)
    command = [sys.executable, str(script), "--data", str(data), "--out", "x.csv", "--oof", str(oof), "--cv-only"]
    one_thread = {**os.environ, "OMP_NUM_THREADS": "1"}
    completed = subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=timeout, check=False, env=one_thread, cwd=data
    )
    assert completed.returncode == 0, completed.stderr
    return fold_scores(competition, asyncio.run(read_oof(competition, oof))), pd.read_csv(oof)


def test_boosting_stops_early_on_a_held_out_tenth_of_a_large_table(tmp_path: Path) -> None:
    """Past `EARLY_STOPPING_ROWS` fit rows a LightGBM member stops when a held-out tenth of them stops improving: an
    over-long, fast-learning recipe then cross-validates better than the same script made to run every round. On
    fewer rows the switch is off and both scripts give the same out-of-fold predictions. (The threshold is lowered
    in the stopping copy, so that a few thousand rows show it.)"""
    for rows, held_out_helps in ((18_000, True), (3_000, False)):
        competition, every_round = _mpls_stops(rows, tmp_path)
        assert "stops_early=True" in every_round and "EARLY_STOPPING_ROWS = 100000" in every_round
        stops = every_round.replace("EARLY_STOPPING_ROWS = 100000", "EARLY_STOPPING_ROWS = 10000")
        (stopped, stopped_oof), (full, full_oof) = (
            (float(np.mean(scores)), oof)
            for scores, oof in (
                _cross_validate(competition, source, name)
                for name, source in (("stops", stops), ("every", every_round))
            )
        )
        if held_out_helps:
            assert stopped > full + 0.005, (stopped, full)  # AUC 0.773 against 0.761: 600 rounds at 0.3 overfit
        else:
            assert stopped_oof.equals(full_oof)


def test_boosting_ends_its_rounds_at_its_share_of_the_run_s_time(tmp_path: Path) -> None:
    """Given `--seconds`, a LightGBM member stops adding rounds at its fit's share of the time left: a recipe of
    50,000 rounds (minutes on one thread) cross-validates in about the time given, and still predicts every row.
    The first fold cut short sets the rounds of the next, so the last fold is a model too, not a round or two."""
    competition, source = _mpls_stops(18_000, tmp_path)
    endless = source.replace("n_estimators=600", "n_estimators=50000")
    assert endless != source
    scores, oof = _cross_validate(competition, endless, "timed", "--seconds", "6", timeout=60)
    assert len(oof) == 18_000 and oof.notna().all().all()
    assert min(scores) > 0.7, scores  # each fold a few seconds' rounds: a real model, not a constant (AUC 0.5)
