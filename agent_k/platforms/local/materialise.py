"""Turn a labelled table into a Kaggle-style competition folder, atomically.

Layout under `<competitions>/<id>/`:
  public/   train.csv, test.csv, sample_submission.csv, description.md, competition.json
  private/  solution.csv (id, target, Usage=Public|Private), leaderboard.json
  format/   a user's folder's own sample submission and how its rows map to ours (`SubmissionFormat`)
  submissions/<submission id>/
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from agent_k.competition import Competition
from agent_k.competition.metric_scoring import normalize_labels
from agent_k.competition.models import MEDIA_FOLDER, MediaSpec
from agent_k.competition.registry import metric_named
from agent_k.platforms.base import link_or_copy
from agent_k.platforms.layouts.submission_format import SubmissionFormat
from agent_k.platforms.local.board import write_board
from agent_k.platforms.local.splits import RANDOM, SEED, HiddenRows, hidden_mask
from agent_k.platforms.targets import CompetitionInputError, infer_task, sample_submission

PUBLIC_FRACTION = 0.5
"""The share of the hidden rows a public score is computed on (Kaggle's public leaderboard)."""
FORMAT_FOLDER = "format"


@dataclass
class PreparedCompetition:
    spec: Competition
    train: pd.DataFrame
    test: pd.DataFrame
    solution: pd.DataFrame | None
    files: dict[str, Path] = field(default_factory=dict)
    """A media competition's files: their paths under `public/media/`, and where they lie now."""


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


@dataclass(frozen=True)
class Hints:
    """What a competition says about its rows (the user's `competitions add` options); Research also finds these
    alone, so the built-in competitions say nothing."""

    time_column: str | None = None
    series_keys: tuple[str, ...] = ()
    group_column: str | None = None


def prepare(
    competition_id: str,
    title: str,
    train: pd.DataFrame,
    *,
    target: str,
    metric: str,
    id_column: str | None = None,
    test: pd.DataFrame | None = None,
    solution: pd.DataFrame | None = None,
    description: str = "",
    source: str = "",
    tags: tuple[str, ...] = (),
    targets: list[str] | None = None,
    top_k: int | None = None,
    hidden: HiddenRows = RANDOM,
    hints: Hints = Hints(),
    train_only: tuple[str, ...] = (),
    media: str | None = None,
    files: dict[str, Path] | None = None,
    public_share: float = PUBLIC_FRACTION,
) -> PreparedCompetition:
    """Check the inputs and split them into public and hidden parts (nothing is written); `public_share`: of the
    hidden rows, those a public score is computed on (0: a grade on all of them, and no public score)."""
    target_columns = list(targets or [target])
    missing = [t for t in target_columns if t not in train.columns]
    if missing:
        raise CompetitionInputError(f"target column '{missing[0]}' is not in the training table")
    if id_column in target_columns:
        raise CompetitionInputError(f"the id column and a target are both '{id_column}': they must differ")
    for column in (hints.time_column, *hints.series_keys, hints.group_column):
        if column is not None and column not in train.columns:
            raise CompetitionInputError(f"column '{column}' is not in the training table")
    if not [c for c in train.columns if c not in (*target_columns, id_column)]:
        raise CompetitionInputError("the training table has no feature columns besides the target and the id")
    train = train[train[target_columns].notna().all(axis=1)].reset_index(drop=True)
    if len(train) < 20:
        raise CompetitionInputError("the training table needs at least 20 labelled rows")
    task, classes = infer_task(train, target_columns, metric)
    if metric_named(metric).top_k:
        top_k = top_k or 3

    if test is None:
        full, id_column = _ensure_id(train, id_column)
        stratify = full[target] if classes else None
        try:
            mask = hidden_mask(full, hidden, stratify)
        except (ValueError, KeyError) as exc:
            raise CompetitionInputError(f"cannot hide test rows: {exc}") from None
        train = full[~mask].sort_values(id_column).reset_index(drop=True)
        held = full[mask].sort_values(id_column).reset_index(drop=True)
        solution = held[[id_column, *target_columns]].copy()
        test = held.drop(columns=target_columns)
    else:
        if id_column is None:
            raise CompetitionInputError("--id-column is required with --test")
        _ensure_id(train, id_column)
        _ensure_id(test, id_column)
        present = [t for t in target_columns if t in test.columns]
        if present:
            raise CompetitionInputError(f"the test table must not contain the target '{present[0]}'")
        absent = [str(c) for c in train.columns if c not in (*target_columns, *test.columns)]
        train, train_only = train.drop(columns=absent), (*train_only, *absent)
        if train.columns.size == len(target_columns) + 1:
            raise CompetitionInputError("the test table shares no feature column with the training table")
        test = test[[c for c in train.columns if c not in target_columns]]
        if solution is not None:
            solution = _check_solution(solution, test, id_column, target_columns)

    assert id_column is not None
    if solution is not None:
        rng = np.random.default_rng(SEED)
        public = rng.random(len(solution)) < public_share
        solution = solution.assign(Usage=np.where(public, "Public", "Private"))

    spec = Competition(
        id=competition_id,
        title=title,
        description=description,
        task=task,
        metric=metric,
        target=target_columns[0],
        targets=target_columns if len(target_columns) > 1 else None,
        id_column=id_column,
        classes=classes,
        top_k=top_k,
        time_column=hints.time_column,
        series_keys=list(hints.series_keys) or None,
        group_column=hints.group_column,
        n_train=len(train),
        n_test=len(test),
        n_features=len(train.columns) - 1 - len(target_columns),
        train_only=list(train_only),
        media=MediaSpec(kind=media) if media else None,
        source=source,
        tags=list(tags),
        has_hidden_labels=solution is not None,
    )
    return PreparedCompetition(spec, train, test, solution, dict(files or {}))


def _check_solution(solution: pd.DataFrame, test: pd.DataFrame, id_column: str, targets: list[str]) -> pd.DataFrame:
    for column in (id_column, *targets):
        if column not in solution.columns:
            raise CompetitionInputError(f"the solution table lacks column '{column}'")
    if solution[targets].isna().any().any():
        raise CompetitionInputError("the solution table has missing labels")
    if set(normalize_labels(solution[id_column])) != set(normalize_labels(test[id_column])):
        raise CompetitionInputError("the solution ids do not match the test ids")
    return solution[[id_column, *targets]]


def describe(spec: Competition) -> str:
    direction = "higher is better" if spec.maximize else "lower is better"
    columns = ", ".join(spec.prediction_columns)
    return (
        f"# {spec.title}\n\n{spec.description}\n\n"
        f"- Task: {spec.task.value}\n- Target: {', '.join(f'`{t}`' for t in spec.target_columns)}\n"
        f"- Metric: {spec.metric}{f' (k={spec.top_k})' if spec.top_k else ''} ({direction})\n"
        f"- Id column: `{spec.id_column}`\n- Rows: {spec.n_train} train, {spec.n_test} test\n"
        f"{_train_only(spec)}\n"
        f"## Files\n- `train.csv`: features and the target\n- `test.csv`: features only\n"
        f"- `sample_submission.csv`: the format to submit: `{spec.id_column}`, {columns}\n"
    )


def _train_only(spec: Competition) -> str:
    if not spec.train_only:
        return ""
    return f"- Only in the training files, so left out: {', '.join(f'`{c}`' for c in spec.train_only)}\n"


def write(
    prepared: PreparedCompetition,
    root: Path,
    leaderboard: list[dict[str, object]],
    submission_format: SubmissionFormat | None = None,
) -> Path:
    """Write every file into a temporary folder, then rename it into place in one step; `submission_format`: the
    user's folder's own sample, kept in `format/` to write submissions back in."""
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
        for relative, source in prepared.files.items():
            target = public / MEDIA_FOLDER / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            link_or_copy(str(source), str(target))
        (public / "competition.json").write_text(prepared.spec.model_dump_json(indent=2))
        if prepared.solution is not None:
            prepared.solution.to_csv(private / "solution.csv", index=False)
        write_board(private / "leaderboard.json", leaderboard)
        if submission_format is not None:
            submission_format.save(staging / FORMAT_FOLDER)
        staging.rename(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final


def load(folder: Path) -> PreparedCompetition:
    """A written competition read back from its files, as its board is built from them."""
    public = folder / "public"
    spec = Competition.model_validate_json((public / "competition.json").read_text())
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    solution_path = folder / "private" / "solution.csv"
    solution = pd.read_csv(solution_path) if solution_path.exists() else None
    files = {}
    if spec.media is not None:
        paths = pd.concat([train[spec.media.column], test[spec.media.column]]).astype(str)
        files = {path: public / MEDIA_FOLDER / path for path in paths}
    return PreparedCompetition(spec, train, test, solution, files)
