"""The reference entries of a media competition's leaderboard: the practitioner's strong baseline (pretrained
embeddings and a logistic regression or ridge; for audio, MFCC statistics and the same) and a weak one (colour
histograms, or the spectrum's shape, with LightGBM), beside the constant prior."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from agent_k.competition import Competition
from agent_k.media.embedder import exported
from agent_k.media.tables import media_table

Make = Callable[[], Any]


def media_teams(
    spec: Competition, train: pd.DataFrame, test: pd.DataFrame, files: dict[str, Path], models: Path,
    fit_predict: Callable[[Competition, Make, pd.DataFrame, pd.DataFrame, pd.DataFrame], pd.DataFrame],
) -> list[tuple[str, pd.DataFrame]]:  # fmt: skip
    """(team, its predictions of the test rows) for each baseline."""
    assert spec.media is not None
    kind, column = spec.media.kind, spec.media.column
    model = exported(128, models) if kind == "image" else None
    table = media_table(kind, [files[p] for p in (*train[column], *test[column])], model=model)
    x, test_x = table.iloc[: len(train)].reset_index(drop=True), table.iloc[len(train) :].reset_index(drop=True)
    strong = [c for c in table.columns if c.startswith("emb" if kind == "image" else "mfcc")]
    weak = [c for c in table.columns if c.startswith("img_hist_" if kind == "image" else "snd_")]
    regression = spec.task.is_regression
    y = train.reset_index(drop=True)
    return [
        ("constant-prior", fit_predict(spec, _prior(regression), x[weak], y, test_x[weak])),
        (f"{'embeddings' if kind == 'image' else 'mfcc'}-{'ridge' if regression else 'logistic'}",
         fit_predict(spec, _linear(regression), x[strong], y, test_x[strong])),
        (f"{'colour-histogram' if kind == 'image' else 'spectral-shape'}-lightgbm",
         fit_predict(spec, _lightgbm(regression), x[weak], y, test_x[weak])),
    ]  # fmt: skip


def _prior(regression: bool) -> Make:
    from sklearn.dummy import DummyClassifier, DummyRegressor

    return lambda: DummyRegressor() if regression else DummyClassifier(strategy="prior")


def _linear(regression: bool) -> Make:
    import numpy as np
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def make() -> Any:
        model = RidgeCV(alphas=np.logspace(-2, 4, 13)) if regression else LogisticRegression(max_iter=3000)
        return make_pipeline(SimpleImputer(), StandardScaler(), model)

    return make


def _lightgbm(regression: bool) -> Make:
    from lightgbm import LGBMClassifier, LGBMRegressor

    return lambda: LGBMRegressor(verbosity=-1, n_jobs=2) if regression else LGBMClassifier(verbosity=-1, n_jobs=2)
