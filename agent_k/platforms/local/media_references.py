"""The reference entries of a media competition's leaderboard: the practitioner's strong baseline (pretrained
embeddings at the network's own 224 px and a logistic regression or ridge; for audio, MFCC statistics and the
same) and a weak one (colour histograms, or the spectrum's shape, with LightGBM), beside the constant prior."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from agent_k.competition import Competition
from agent_k.media.embedder import exported
from agent_k.media.tables import media_table

Make = Callable[[], Any]
EMBEDDING_SIZE = 224
"""The pretrained network's own resolution, as a practitioner embeds images."""


def media_teams(
    spec: Competition, train: pd.DataFrame, test: pd.DataFrame, files: dict[str, Path], models: Path,
    fit_predict: Callable[[Competition, Make, pd.DataFrame, pd.DataFrame, pd.DataFrame], pd.DataFrame],
) -> list[tuple[str, Callable[[], pd.DataFrame]]]:  # fmt: skip
    """(team, how it trains and predicts the test rows) for each baseline. The strong one comes first: its build
    time includes reading and embedding every file, which the others then reuse."""
    assert spec.media is not None
    kind, column = spec.media.kind, spec.media.column

    @cache
    def table() -> tuple[pd.DataFrame, pd.DataFrame]:
        model = exported(EMBEDDING_SIZE, models) if kind == "image" else None
        paths = [files[p] for p in (*train[column], *test[column])]
        whole = media_table(kind, paths, model=model, size=EMBEDDING_SIZE)
        return whole.iloc[: len(train)].reset_index(drop=True), whole.iloc[len(train) :].reset_index(drop=True)

    def team(make: Make, prefix: str) -> Callable[[], pd.DataFrame]:
        def build() -> pd.DataFrame:
            x, test_x = table()
            columns = [c for c in x.columns if c.startswith(prefix)]
            return fit_predict(spec, make, x[columns], train.reset_index(drop=True), test_x[columns])

        return build

    regression = spec.task.is_regression
    strong, weak = ("emb", "img_hist_") if kind == "image" else ("mfcc", "snd_")
    strong_name = f"embeddings-{EMBEDDING_SIZE}px" if kind == "image" else "mfcc"
    return [
        (f"{strong_name}-{'ridge' if regression else 'logistic'}", team(_linear(regression), strong)),
        (f"{'colour-histogram' if kind == 'image' else 'spectral-shape'}-lightgbm", team(_lightgbm(regression), weak)),
        ("constant-prior", team(_prior(regression), weak)),
    ]


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
