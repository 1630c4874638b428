"""Folders shaped like MLE-bench's public folders of real Kaggle competitions (`tests/support/mlebench.py`),
added as a user adds them (`competitions add --data`): each is entered, its test rows have exactly the training
features, and what the files say only in training never becomes a feature."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agent_k.competition.research import CVScheme
from agent_k.ml.evaluate import CompetitionData, EvaluationRequest, evaluate
from agent_k.ml.profiling import profile
from agent_k.ml.recipes import ModelFamily
from agent_k.ml.search import default_recipe
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.user_files import from_folder
from agent_k.sandbox import Limits
from tests.conftest import run_cli
from tests.support.mlebench import MAKERS, spaceship_titanic


@pytest.mark.parametrize("slug", sorted(MAKERS))
def test_a_folder_shaped_like_the_real_download_is_entered(home: Path, tmp_path: Path, slug: str) -> None:
    shape = MAKERS[slug](tmp_path / slug, np.random.default_rng(3))
    tables = from_folder(tmp_path / slug, slug, list(shape.target_option), solution=None, scratch=tmp_path / "scratch")
    # the layout alone: its board (reference teams) is tested elsewhere
    spec = LocalPlatform(home / "competitions").add(slug, tables, metric=shape.metric, references=False)  # type: ignore[arg-type]

    public = home / "competitions" / slug / "public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    assert spec.target_columns == list(shape.targets) or spec.prediction_columns == list(shape.targets)
    assert len(test) == shape.n_test == spec.n_test
    features = [c for c in train.columns if c not in (*spec.target_columns, spec.id_column)]
    assert features and features == [c for c in test.columns if c != spec.id_column]
    assert set(shape.not_features) <= set(spec.train_only)
    assert not set(shape.not_features) & (set(test.columns) | set(train.columns))
    assert not test[features].isna().all().any(), "no test column is left empty by a join"
    written = (public / "description.md").read_text()
    for word in shape.notes:
        assert word in written, f"how the files were read is in the description: {written}"


def test_a_true_false_target_scores_like_its_0_1_twin(home: Path, tmp_path: Path) -> None:
    platform = LocalPlatform(home / "competitions")
    scores = {}
    for name, as_integers in (("titanic-bool", False), ("titanic-int", True)):
        shape = spaceship_titanic(tmp_path / name, np.random.default_rng(11), as_integers=as_integers)
        spec = platform.add(name, from_folder(tmp_path / name, name, [], solution=None), metric="accuracy")
        assert spec.classes == (["0", "1"] if as_integers else ["False", "True"])
        data = CompetitionData.load(spec, home / "competitions" / name / "public")
        cv = CVScheme(kind="stratified_kfold", n_folds=3)
        result = asyncio.run(
            evaluate(
                EvaluationRequest(default_recipe(ModelFamily.linear), data, cv, tmp_path / f"{name}-c", Limits(60))
            )
        )
        assert result.status == "succeeded", result.error
        scores[name] = result.cv_mean
        submission = pd.read_csv(result.submission_path, dtype=str) if result.submission_path else None
        assert submission is not None and set(submission[shape.targets[0]]) <= set(spec.classes or [])
    assert scores["titanic-bool"] == pytest.approx(scores["titanic-int"]) and scores["titanic-int"] > 0.8


def test_research_names_the_columns_only_in_training(home: Path, tmp_path: Path) -> None:
    slug = "random-acts-of-pizza"
    MAKERS[slug](tmp_path / slug, np.random.default_rng(5))
    spec = LocalPlatform(home / "competitions").add(slug, from_folder(tmp_path / slug, slug, [], solution=None),
                                                     metric="auc")  # fmt: skip
    public = home / "competitions" / slug / "public"
    findings = profile(spec, pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv"))
    assert findings.train_only == spec.train_only and "post_was_edited" in findings.train_only
    assert not {c.name for c in findings.columns} & set(spec.train_only)
    assert any("only in training" in note and "post_was_edited" in note for note in findings.notes)


def test_an_unnamed_target_among_several_training_only_columns_is_asked_for_in_one_line(tmp_path: Path) -> None:
    slug = "jigsaw-unintended-bias-in-toxicity-classification"
    MAKERS[slug](tmp_path / "jigsaw", np.random.default_rng(2))
    asked = run_cli("competitions", "add", "jigsaw", "--data", str(tmp_path / "jigsaw"), "--metric", "rmse")
    assert asked.returncode == 2 and asked.stderr.strip().count("\n") == 0
    assert "which training column is 'prediction'" in asked.stderr and "--target" in asked.stderr


def test_lists_of_numbers_become_their_summaries(tmp_path: Path) -> None:
    """statoil-iceberg's records hold two radar bands as lists of numbers, in 7-Zip archives only: each band
    becomes its mean, spread, extremes and percentiles (as text they would be thousands of one-off words)."""
    slug = "statoil-iceberg-classifier-challenge"
    MAKERS[slug](tmp_path / slug, np.random.default_rng(8))
    tables = from_folder(tmp_path / slug, slug, [], solution=None, scratch=tmp_path / "scratch")
    bands = [c for c in tables.train.columns if str(c).startswith("band_")]
    assert bands == [f"band_{k}_{s}" for k in (1, 2) for s in ("mean", "std", "min", "q10", "q50", "q90", "max")]
    assert all(pd.api.types.is_float_dtype(tables.train[c]) for c in bands)
    assert tables.test is not None and set(bands) <= set(tables.test.columns)
    first = tables.train.iloc[0]
    assert (
        first["band_1_min"] <= first["band_1_q10"] <= first["band_1_q50"] <= first["band_1_q90"] <= first["band_1_max"]
    )
