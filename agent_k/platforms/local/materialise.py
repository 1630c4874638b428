"""Turn a labelled table into a Kaggle-style competition folder, atomically.

Layout under `<competitions>/<id>/`:
  public/   train.csv, test.csv, sample_submission.csv, description.md, competition.json
  private/  solution.csv (id, target, Usage=Public|Private), leaderboard.json
  submissions/<submission id>/
"""

from __future__ import annotations

import json
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from agent_k.competition import REGRESSION_METRICS, Competition, MetricName, TaskType
from agent_k.competition.metrics import normalize_labels

SEED = 20241
TEST_FRACTION = 0.25
PUBLIC_FRACTION = 0.5


class CompetitionInputError(ValueError):
    """The tables given for a new competition cannot make one; the message says why."""


@dataclass
class PreparedCompetition:
    spec: Competition
    train: pd.DataFrame
    test: pd.DataFrame
    solution: pd.DataFrame | None


def infer_task(target: pd.Series, metric: MetricName) -> tuple[TaskType, list[str] | None]:
    if metric in REGRESSION_METRICS:
        if not pd.api.types.is_numeric_dtype(target):
            raise CompetitionInputError(f"metric {metric} needs a numeric target")
        return TaskType.regression, None
    classes = sorted(normalize_labels(target).unique().tolist())
    if len(classes) < 2:
        raise CompetitionInputError("the target has fewer than two classes")
    if len(classes) > 200:
        raise CompetitionInputError(f"the target has {len(classes)} classes; use a regression metric")
    return (TaskType.binary if len(classes) == 2 else TaskType.multiclass), classes


def _ensure_id(frame: pd.DataFrame, id_column: str | None) -> tuple[pd.DataFrame, str]:
    if id_column is not None:
        if id_column not in frame.columns:
            raise CompetitionInputError(f"id column '{id_column}' is not in the table")
        if frame[id_column].duplicated().any():
            raise CompetitionInputError(f"id column '{id_column}' has duplicate values")
        return frame, id_column
    name = "id" if "id" not in frame.columns else "row_id"
    frame = frame.copy()
    frame.insert(0, name, np.arange(len(frame)))
    return frame, name


def prepare(
    competition_id: str,
    title: str,
    train: pd.DataFrame,
    *,
    target: str,
    metric: MetricName,
    id_column: str | None = None,
    test: pd.DataFrame | None = None,
    solution: pd.DataFrame | None = None,
    description: str = "",
    source: str = "",
    tags: tuple[str, ...] = (),
) -> PreparedCompetition:
    """Check the inputs and split them into public and hidden parts (nothing is written)."""
    if target not in train.columns:
        raise CompetitionInputError(f"target column '{target}' is not in the training table")
    if id_column == target:
        raise CompetitionInputError(f"the id column and the target are both '{target}': they must differ")
    if not [c for c in train.columns if c not in (target, id_column)]:
        raise CompetitionInputError("the training table has no feature columns besides the target and the id")
    train = train[train[target].notna()].reset_index(drop=True)
    if len(train) < 20:
        raise CompetitionInputError("the training table needs at least 20 labelled rows")
    task, classes = infer_task(train[target], metric)

    if test is None:
        from sklearn.model_selection import train_test_split

        full, id_column = _ensure_id(train, id_column)
        stratify = normalize_labels(full[target]) if classes else None
        if stratify is not None and stratify.value_counts().min() < 2:
            stratify = None
        train, hidden = train_test_split(full, test_size=TEST_FRACTION, random_state=SEED, stratify=stratify)
        train = train.sort_values(id_column).reset_index(drop=True)
        hidden = hidden.sort_values(id_column).reset_index(drop=True)
        solution = hidden[[id_column, target]].copy()
        test = hidden.drop(columns=[target])
    else:
        if id_column is None:
            raise CompetitionInputError("--id-column is required with --test")
        _ensure_id(train, id_column)
        _ensure_id(test, id_column)
        if target in test.columns:
            raise CompetitionInputError(f"the test table must not contain the target '{target}'")
        missing = set(train.columns) - {target} - set(test.columns)
        if missing:
            raise CompetitionInputError(f"test table lacks training columns: {sorted(missing)}")
        test = test[[c for c in train.columns if c != target]]
        if solution is not None:
            solution = _check_solution(solution, test, id_column, target)

    assert id_column is not None
    if solution is not None:
        rng = np.random.default_rng(SEED)
        public = rng.random(len(solution)) < PUBLIC_FRACTION
        solution = solution.assign(Usage=np.where(public, "Public", "Private"))

    spec = Competition(
        id=competition_id,
        title=title,
        description=description,
        task=task,
        metric=metric,
        target=target,
        id_column=id_column,
        classes=classes,
        n_train=len(train),
        n_test=len(test),
        n_features=len(train.columns) - 2,
        source=source,
        tags=list(tags),
        has_hidden_labels=solution is not None,
    )
    return PreparedCompetition(spec, train, test, solution)


def _check_solution(solution: pd.DataFrame, test: pd.DataFrame, id_column: str, target: str) -> pd.DataFrame:
    for column in (id_column, target):
        if column not in solution.columns:
            raise CompetitionInputError(f"the solution table lacks column '{column}'")
    if solution[target].isna().any():
        raise CompetitionInputError("the solution table has missing labels")
    if set(normalize_labels(solution[id_column])) != set(normalize_labels(test[id_column])):
        raise CompetitionInputError("the solution ids do not match the test ids")
    return solution[[id_column, target]]


def sample_submission(spec: Competition, test: pd.DataFrame, train: pd.DataFrame) -> pd.DataFrame:
    frame = pd.DataFrame({spec.id_column: test[spec.id_column].to_numpy()})
    if spec.task is TaskType.regression:
        frame[spec.target] = float(train[spec.target].mean())
    elif spec.metric == "accuracy":
        frame[spec.target] = train[spec.target].mode().iloc[0]
    elif spec.task is TaskType.binary:
        frame[spec.target] = 0.5
    else:
        for label in spec.classes or []:
            frame[label] = 1.0 / len(spec.classes or [1])
    return frame


def describe(spec: Competition) -> str:
    direction = "higher is better" if spec.maximize else "lower is better"
    columns = ", ".join(spec.prediction_columns)
    return (
        f"# {spec.title}\n\n{spec.description}\n\n"
        f"- Task: {spec.task.value}\n- Target: `{spec.target}`\n- Metric: {spec.metric} ({direction})\n"
        f"- Id column: `{spec.id_column}`\n- Rows: {spec.n_train} train, {spec.n_test} test\n\n"
        f"## Files\n- `train.csv`: features and the target\n- `test.csv`: features only\n"
        f"- `sample_submission.csv`: the format to submit: `{spec.id_column}`, {columns}\n"
    )


def write(prepared: PreparedCompetition, root: Path, leaderboard: list[dict[str, object]]) -> Path:
    """Write every file into a temporary folder, then rename it into place in one step."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / prepared.spec.id
    staging = root / f".staging-{prepared.spec.id}-{uuid.uuid4().hex[:8]}"
    try:
        public = staging / "public"
        private = staging / "private"
        public.mkdir(parents=True)
        private.mkdir()
        (staging / "submissions").mkdir()
        prepared.train.to_csv(public / "train.csv", index=False)
        prepared.test.to_csv(public / "test.csv", index=False)
        sample_submission(prepared.spec, prepared.test, prepared.train).to_csv(
            public / "sample_submission.csv", index=False
        )
        (public / "description.md").write_text(describe(prepared.spec))
        (public / "competition.json").write_text(prepared.spec.model_dump_json(indent=2))
        if prepared.solution is not None:
            prepared.solution.to_csv(private / "solution.csv", index=False)
        (private / "leaderboard.json").write_text(json.dumps(leaderboard, indent=2))
        staging.rename(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final
