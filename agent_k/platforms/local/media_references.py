"""The reference entries of a media competition's leaderboard: the practitioner's strong baseline (the features
its kind declares, e.g. pretrained embeddings at the network's own 224 px, with a logistic regression or ridge)
and a weak one (e.g. colour histograms, with LightGBM), beside the constant prior (`agent_k.media.kinds.Team`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from agent_k.competition import Competition
from agent_k.media.embedder import exported
from agent_k.media.kinds import media_kind
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
    kind, column = media_kind(spec.media.kind), spec.media.column

    @cache
    def table() -> tuple[pd.DataFrame, pd.DataFrame]:
        model = exported(EMBEDDING_SIZE, models) if kind.embeds else None
        paths = [files[p] for p in (*train[column], *test[column])]
        whole = media_table(kind.name, paths, model=model, size=EMBEDDING_SIZE)
        return whole.iloc[: len(train)].reset_index(drop=True), whole.iloc[len(train) :].reset_index(drop=True)

    def team(make: Make, prefix: str) -> Callable[[], pd.DataFrame]:
        def build() -> pd.DataFrame:
            x, test_x = table()
            columns = [c for c in x.columns if c.startswith(prefix)]
            return fit_predict(spec, make, x[columns], train.reset_index(drop=True), test_x[columns])

        return build

    regression = spec.task.is_regression
    teams = []
    if kind.strong is not None:
        name = f"{kind.strong.name}-{EMBEDDING_SIZE}px" if kind.embeds else kind.strong.name
        teams.append(
            (f"{name}-{'ridge' if regression else 'logistic'}", team(_linear(regression), kind.strong.features))
        )
    if kind.weak is not None:
        teams.append((f"{kind.weak.name}-lightgbm", team(_lightgbm(regression), kind.weak.features)))
    prior_reads = kind.weak.features if kind.weak else ""  # it reads none: a few columns keep the fit quick
    return [*teams, ("constant-prior", team(_prior(regression), prior_reads))]


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
