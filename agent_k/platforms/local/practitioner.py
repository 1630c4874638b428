"""The practitioner's strong first entry on a table: LightGBM whose rounds early stopping found on a held-out tenth,
refitted on every training row with those rounds.

Written apart from the mission's own modelling code (`agent_k.ml`), so that a board holding it does not grade
that code by itself. Scikit-learn's estimator interface, so that the board trains it like its other teams.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from agent_k.competition import Competition
from agent_k.platforms.local.encoding import make_preprocessor, split_columns

LEARNING_RATE = 0.05
MAX_ROUNDS = 5_000
PATIENCE = 100
VALIDATION_SHARE = 0.1
REFIT_GROWTH = 1.1
"""The rounds found on nine tenths of the rows, grown for the whole of them (the usual rule of thumb)."""
ONE_THREAD_ROWS = 50_000
"""Below this many rows a round is too short to share: more threads only wait on each other (and far longer on
cores that other work keeps busy)."""


def rounds_by_early_stopping(
    make: Any, x: Any, y: np.ndarray, valid: np.ndarray, categorical: list[int], *, classify: bool
) -> int:
    """How many rounds of `make(n_estimators)` early stopping keeps when fitted on the rows outside `valid`."""
    from lightgbm import early_stopping

    if classify:  # a class only the validation rows hold cannot be scored there
        valid = valid & np.isin(y, y[~valid])
    if valid.all() or not valid.any():
        return MAX_ROUNDS // 10
    model = make(MAX_ROUNDS)
    model.fit(
        x[~valid], y[~valid], **_validation(model, x[valid], y[valid]), categorical_feature=categorical or "auto",
        callbacks=[early_stopping(PATIENCE, verbose=False)],
    )  # fmt: skip
    return max(1, int(model.best_iteration_ or MAX_ROUNDS))


def _validation(model: Any, x: Any, y: np.ndarray) -> dict[str, Any]:
    """LightGBM 4.7 takes the validation rows as `eval_X`/`eval_y` and warns at `eval_set`, which older ones take."""
    if "eval_X" in inspect.signature(model.fit).parameters:
        return {"eval_X": (x,), "eval_y": (y,)}
    return {"eval_set": [(x, y)]}


def latest(order: np.ndarray) -> np.ndarray:
    """The latest tenth of the rows in time, as a forecast's validation split."""
    return np.asarray(order >= np.quantile(order, 1 - VALIDATION_SHARE), dtype=bool)


def held_out(y: np.ndarray, classify: bool, seed: int = 0) -> np.ndarray:
    """A random tenth of the rows (stratified where every class has two rows or more) as the validation split."""
    from sklearn.model_selection import train_test_split

    rows = np.arange(len(y))
    if len(rows) < 20:
        return np.zeros(len(y), dtype=bool)
    stratify = y if classify and np.unique(y, return_counts=True)[1].min() >= 2 else None
    _, valid_rows = train_test_split(rows, test_size=VALIDATION_SHARE, random_state=seed, stratify=stratify)
    mask = np.zeros(len(y), dtype=bool)
    mask[valid_rows] = True
    return mask


class EarlyStoppedBoosting(BaseEstimator):  # type: ignore[misc]
    """LightGBM, rounds by early stopping, refitted on every row. `categorical`: the columns of the (ordinal
    encoded) input that are categories; `log_target`: the metric measures errors on log(1 + y), so the model
    learns the logs; `l1`: the metric rewards the median (absolute errors)."""

    def __init__(
        self, *, regression: bool, categorical: list[int] | None = None, log_target: bool = False, l1: bool = False
    ) -> None:
        self.regression = regression
        self.categorical = categorical
        self.log_target = log_target
        self.l1 = l1

    def _make(self, rounds: int, rows: int) -> Any:
        from lightgbm import LGBMClassifier, LGBMRegressor

        threads = 1 if rows < ONE_THREAD_ROWS else os.cpu_count() or 1
        common: dict[str, Any] = {
            "n_estimators": rounds, "learning_rate": LEARNING_RATE, "n_jobs": threads, "random_state": 0,
            "verbosity": -1,
        }  # fmt: skip
        if self.regression:
            return LGBMRegressor(objective="l1" if self.l1 else "l2", **common)
        return LGBMClassifier(**common)

    def fit(self, x: Any, y: Any, order: np.ndarray | None = None) -> EarlyStoppedBoosting:
        """`order`: each row's time, for a forecast (its validation rows are then the latest, not a random tenth)."""
        x, y = np.asarray(x, dtype=float), np.asarray(y)
        if self.regression:
            y = y.astype(float)
            if self.log_target:
                y = np.log1p(np.clip(y, 0, None))
        else:  # LightGBM learns class codes; the labels are ours to keep
            self.classes_, y = np.unique(y, return_inverse=True)
        self.rounds_ = rounds_by_early_stopping(
            partial(self._make, rows=len(y)),
            x,
            y,
            held_out(y, not self.regression) if order is None else latest(np.asarray(order, dtype=float)),
            list(self.categorical or []),
            classify=not self.regression,
        )
        self.model_ = self._make(max(1, round(self.rounds_ * REFIT_GROWTH)), len(y))
        self.model_.fit(x, y, categorical_feature=list(self.categorical or []) or "auto")
        return self

    def predict(self, x: Any) -> np.ndarray:
        if not self.regression:
            return np.asarray(self.classes_[np.argmax(self.predict_proba(x), axis=1)])
        predicted = np.asarray(self.model_.predict(np.asarray(x, dtype=float)), dtype=float)
        return np.expm1(predicted) if self.log_target else predicted

    def predict_proba(self, x: Any) -> np.ndarray:
        """One column per class of `classes_`. Trained on a single class (a multi-label column that is constant in
        training), LightGBM still answers two columns: the one class then has every row."""
        proba = np.asarray(self.model_.predict_proba(np.asarray(x, dtype=float)))
        return proba if proba.shape[1] == len(self.classes_) else np.ones((len(proba), len(self.classes_)))


def boosting(spec: Competition, frame: pd.DataFrame) -> Callable[[], Any]:
    """The strong first entry for a table with `frame`'s columns: its categories as ordinal codes, which LightGBM
    splits as categories; the metric's scale and centre chosen as a practitioner would."""
    numeric, categorical = split_columns(frame)
    codes = list(range(len(numeric), len(numeric) + len(categorical)))
    metric = spec.scored_by

    def make() -> Any:
        from sklearn.pipeline import make_pipeline

        model = EarlyStoppedBoosting(
            regression=spec.task.is_regression, categorical=codes, log_target=metric.log_scale,
            l1=metric.constant == "median",
        )  # fmt: skip
        return make_pipeline(make_preprocessor(frame, scale=False, one_hot=False), model)

    return make
