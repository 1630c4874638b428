"""A Kaggle competition's files in our layout: train.csv, test.csv, sample_submission.csv, description.md and
competition.json, the same public folder the local platform hands a mission.

Kaggle does not say which column is the target, so it is read off the files: the sample submission's first
column is the id and the rest is what to predict; the train file holds those columns with the answers.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd

from agent_k.competition import REGRESSION_METRICS, Competition, MetricName, TaskType
from agent_k.platforms.base import PlatformError
from agent_k.platforms.local.materialise import CompetitionInputError, infer_task

_METRIC_NAMES: tuple[tuple[str, MetricName], ...] = (
    ("area under", "auc"),
    ("auc", "auc"),
    ("log loss", "logloss"),
    ("logloss", "logloss"),
    ("logarithmic loss", "logloss"),
    ("multiclass loss", "logloss"),
    ("root mean squared error", "rmse"),
    ("rmse", "rmse"),
    ("mean absolute error", "mae"),
    ("mae", "mae"),
    ("coefficient of determination", "r2"),
    ("r2", "r2"),
    ("r^2", "r2"),
    ("accuracy", "accuracy"),
)
_UNSUPPORTED = ("logarithmic error", "rmsle", "percentage", "weighted", "median", "kappa")


class UnsupportedCompetition(PlatformError):
    """The competition's metric or file layout is not one a mission can work with."""


def metric_from_kaggle(name: str) -> MetricName | None:
    """Our metric for Kaggle's `evaluationMetric` text, or None when we cannot score it the same way."""
    text = name.lower()
    if any(word in text for word in _UNSUPPORTED):
        return None
    return next((metric for needle, metric in _METRIC_NAMES if needle in text), None)


def tag_names(meta: dict[str, Any]) -> list[str]:
    """Kaggle's tags are `ApiCategory` objects; we keep their names."""
    return [str(t.get("name", "")) if isinstance(t, dict) else str(t) for t in meta.get("tags") or []]


def task_hint(metric: MetricName) -> TaskType:
    """A listing's best guess before the files are read (Kaggle's metadata has no task)."""
    if metric in REGRESSION_METRICS:
        return TaskType.regression
    return TaskType.binary if metric == "auc" else TaskType.multiclass


def arrange(meta: dict[str, Any], slug: str, raw: Path, public: Path) -> Competition:
    """Write `public/` from the extracted files and return the competition they describe."""
    named_metric = str(meta.get("evaluationMetric", ""))
    metric = metric_from_kaggle(named_metric)
    if metric is None:
        raise UnsupportedCompetition(f"'{slug}' is scored by '{named_metric}', which AGENT-K cannot score")
    train_path, test_path, sample_path = _pick_files(slug, raw)
    sample = pd.read_csv(sample_path, nrows=5)
    train_columns = list(pd.read_csv(train_path, nrows=0).columns)
    test = pd.read_csv(test_path)
    id_column, predicted = str(sample.columns[0]), [str(c) for c in sample.columns[1:]]
    if id_column not in test.columns or not predicted:
        columns = list(sample.columns)
        raise UnsupportedCompetition(f"'{slug}': the sample submission's columns {columns} do not fit test.csv")
    target = _target(slug, predicted, train_columns, list(test.columns), train_path)
    train = pd.read_csv(train_path)
    try:
        task, classes = infer_task(train[target], metric)
    except CompetitionInputError as exc:
        raise UnsupportedCompetition(f"'{slug}': {exc}") from None
    if len(predicted) > 1:
        task, classes = TaskType.multiclass, predicted
    spec = Competition(
        id=slug,
        title=str(meta.get("title") or slug),
        description=str(meta.get("description") or ""),
        task=task,
        metric=metric,
        target=target,
        id_column=id_column,
        classes=classes,
        n_train=len(train),
        n_test=len(test),
        n_features=len([c for c in train.columns if c not in (id_column, target)]),
        source="kaggle",
        tags=tag_names(meta),
        url=f"https://www.kaggle.com/competitions/{slug}",
        max_daily_submissions=meta.get("maxDailySubmissions") or None,
    )
    public.mkdir(parents=True)
    for source, name in ((train_path, "train.csv"), (test_path, "test.csv"), (sample_path, "sample_submission.csv")):
        shutil.copyfile(source, public / name)
    (public / "description.md").write_text(f"# {spec.title}\n\n{spec.description}\n\nMetric: {named_metric}\n")
    (public / "competition.json").write_text(spec.model_dump_json(indent=2))
    return spec


def _pick_files(slug: str, raw: Path) -> tuple[Path, Path, Path]:
    csvs = sorted(p for p in raw.rglob("*.csv") if p.is_file())

    def one(role: str, *words: str) -> Path:
        found = [p for p in csvs if any(w in p.name.lower() for w in words)]
        if role != "sample":
            found = [p for p in found if "submission" not in p.name.lower() and "sample" not in p.name.lower()]
        if len(found) != 1:
            names = ", ".join(str(p.relative_to(raw)) for p in csvs) or "no CSV files"
            raise UnsupportedCompetition(f"'{slug}': cannot tell the {role} file among: {names}")
        return found[0]

    return one("train", "train"), one("test", "test"), one("sample", "submission", "sample")


def _target(slug: str, predicted: list[str], train: list[str], test: list[str], path: Path) -> str:
    if len(predicted) == 1 and predicted[0] in train:
        return predicted[0]
    if len(predicted) > 1:
        wanted = set(predicted)
        for column in (c for c in train if c not in test):
            values = pd.read_csv(path, usecols=[column])[column].dropna().astype(str).unique()
            if set(values) == wanted:
                return column
    raise UnsupportedCompetition(f"'{slug}': no train column holds what the sample submission predicts ({predicted})")
