"""Feature operations a grandmaster starts with: out-of-fold target encoding, count encoding, dates; and the
search that tries them early, seeds the best recipe and keeps spending the budget once it has converged."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from agent_k.competition.research import CVScheme
from agent_k.config import SEARCH_PATIENCE as PATIENCE
from agent_k.mission.nodes.evolution import settle
from agent_k.mission.state import EvolutionState
from agent_k.ml.evaluate import CompetitionData, EvaluationRequest, evaluate
from agent_k.ml.recipes import ModelFamily
from agent_k.ml.search import FeatureOptions, Scored, default_recipe, starting_recipe
from agent_k.ml.search.selection import MAX_SEEDS, feature_starters
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.user_files import from_files
from agent_k.sandbox import Limits

CV = CVScheme(kind="stratified_kfold", n_folds=5)


def _noise_competition(root: Path, tmp_path: Path) -> CompetitionData:
    """A binary target of pure noise and a user id with about two rows per level: nothing to learn."""
    rng = np.random.default_rng(7)
    n = 4_000
    frame = pd.DataFrame(
        {
            "row": np.arange(n),
            "user": [f"u{v}" for v in rng.integers(0, n // 2, n)],
            "visited": pd.date_range("2020-01-01", periods=n, freq="6h").strftime("%Y-%m-%d %H:%M"),
            "y": rng.integers(0, 2, n),
        }
    )
    frame.to_csv(tmp_path / "noise.csv", index=False)
    platform = LocalPlatform(root)
    tables = from_files(tmp_path / "noise.csv", ["y"], id_column="row", test=None, solution=None)
    spec = platform.add("noise", tables, metric="auc")
    return CompetitionData.load(spec, root / "noise" / "public")


def test_target_encoding_is_fitted_out_of_fold(tmp_path: Path) -> None:
    data = _noise_competition(tmp_path / "competitions", tmp_path)
    recipe = default_recipe(ModelFamily.lightgbm).model_copy(
        update={"target_columns": ("user",), "frequency_columns": ("user",), "date_columns": ("visited",)}
    )
    result = asyncio.run(evaluate(EvaluationRequest(recipe, data, CV, tmp_path / "c", Limits(timeout_s=240))))
    assert result.status == "succeeded", result.error
    assert result.cv_mean is not None and result.cv_mean < 0.55, f"CV {result.cv_mean} on noise: a leak"
    source = (tmp_path / "c" / "solution.py").read_text()
    assert "target_columns=['user']" in source and "TargetEncoder(" in source

    # The same encoding fitted on the rows it scores reads the noise back: the assertion above would catch it.
    train = pd.read_csv(data.data_dir / "train.csv")
    leaky = train.groupby("user")["y"].transform("mean")
    assert roc_auc_score(train["y"], leaky) > 0.85


def test_the_search_tries_encodings_early_and_seeds_the_best_once_widened() -> None:
    best = default_recipe(ModelFamily.lightgbm)
    options = FeatureOptions(high_cardinality=("user", "movie"))
    starters = feature_starters(best, [Scored(best, 0.8)], options)
    assert [s.feature_set for s in starters] == ["target", "frequency"]
    assert starters[0].target_columns == ("user", "movie")
    tried = [Scored(best, 0.8), Scored(starters[0], 0.79), Scored(starters[1], 0.78)]
    assert feature_starters(best, tried, options) == []
    assert feature_starters(best, [Scored(best, 0.8)], FeatureOptions()) == []
    categorical = FeatureOptions(categorical=("city",))
    (native,) = feature_starters(best, [Scored(best, 0.8)], categorical)
    assert native.native_categorical and native.feature_set == "native"
    assert feature_starters(best, [Scored(best, 0.8), Scored(native, 0.79)], categorical) == []
    linear = default_recipe(ModelFamily.linear)
    assert feature_starters(linear, [Scored(linear, 0.8)], categorical) == []  # LightGBM's own splits only

    # LightGBM starts on the categories themselves; ordinal codes are then its first alternative.
    first = starting_recipe(ModelFamily.lightgbm, categorical, ())
    assert first.native_categorical and "native" in first.feature_set
    (codes,) = feature_starters(first, [Scored(first, 0.8)], categorical)
    assert not codes.native_categorical and codes.params == first.params
    assert not starting_recipe(ModelFamily.lightgbm, FeatureOptions(), ()).native_categorical
    assert not starting_recipe(ModelFamily.random_forest, categorical, ()).native_categorical

    skewed = FeatureOptions(log_target=True)
    (logged,) = feature_starters(best, [Scored(best, 0.8)], skewed)
    assert logged.log_target and logged.params == best.params
    assert logged.niche != best.niche, "a model of log(1 + y) keeps its own elite while its parameters catch up"
    assert feature_starters(best, [Scored(best, 0.8), Scored(logged, 0.81)], skewed) == []

    seeded = [best.model_copy(update={"seed": n}) for n in range(1, MAX_SEEDS + 1)]
    assert len({r.key for r in [best, *seeded]}) == MAX_SEEDS + 1
    assert all(r.without_seed() == best for r in seeded) and "seed=2" in seeded[1].summary()
    assert best.key == default_recipe(ModelFamily.lightgbm).key  # no seed: the key of before


@pytest.mark.parametrize("stop_early", [True, False])
def test_a_converged_search_stops_early_only_when_asked(stop_early: bool) -> None:
    evolution = EvolutionState()
    for generation in range(1, PATIENCE + 1):
        settle(evolution, generation, improved=generation == 1, stop_early=stop_early, patience=PATIENCE)
    assert evolution.stop_reason is None and evolution.widened_at is None
    settle(evolution, PATIENCE + 1, improved=False, stop_early=stop_early, patience=PATIENCE)
    if stop_early:
        assert evolution.stop_reason == "converged"
        return
    assert evolution.stop_reason is None and evolution.widened_at == PATIENCE + 1
    rng = random.Random(1)
    for generation in range(PATIENCE + 2, 4 * PATIENCE):
        settle(evolution, generation, improved=rng.random() < 0.1, stop_early=False, patience=PATIENCE)
    assert evolution.stop_reason is None, "a widened search runs until the budget ends"


def test_lightgbm_splits_on_categories_natively_when_asked(home: Path, tmp_path: Path) -> None:
    spec = LocalPlatform(home / "competitions").ensure("titanic")
    data = CompetitionData.load(spec, home / "competitions" / "titanic" / "public")
    recipe = default_recipe(ModelFamily.lightgbm).model_copy(update={"native_categorical": True})
    result = asyncio.run(evaluate(EvaluationRequest(recipe, data, CV, tmp_path / "c", Limits(timeout_s=120))))
    assert result.status == "succeeded", result.error
    assert result.cv_mean is not None and result.cv_mean > 0.75
    assert "native_categorical=True" in (tmp_path / "c" / "solution.py").read_text()
