"""The files a user adds a competition from (`agent-k competitions add`): a training table, optionally a test
table and its hidden labels; or a folder laid out as Kaggle lays competitions out (`agent_k.platforms.layouts`).
Every problem is a `CompetitionInputError` whose message fits on one line."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from agent_k.competition.columns import time_of
from agent_k.competition.kinds import TestSplit
from agent_k.competition.registry import metric_named
from agent_k.platforms.layouts import TABLES, LayoutError, arrange_folder, from_one_hot, read_records
from agent_k.platforms.layouts.submission_format import SubmissionFormat
from agent_k.platforms.layouts.targets import spread_sets
from agent_k.platforms.local.materialise import Hints
from agent_k.platforms.local.splits import RANDOM, HiddenRows
from agent_k.platforms.targets import CompetitionInputError


@dataclass
class UserTables:
    train: pd.DataFrame
    targets: list[str]
    id_column: str | None = None
    test: pd.DataFrame | None = None
    solution: pd.DataFrame | None = None
    source: str = ""
    train_only: tuple[str, ...] = ()
    """Training columns the folder's test rows lack, already left out of `train`."""
    media: str | None = None
    files: dict[str, Path] = field(default_factory=dict)
    """A media competition's files: their paths under `media/`, and where they lie now."""
    notes: tuple[str, ...] = ()
    """How the folder's files were read (which file is what, what was joined or left out)."""
    classes: tuple[str, ...] = ()
    """The classes the folder's submission wants a column each for, when the target is one class column."""
    listed: int | None = None
    """How many labels each row of the folder's sample lists, where it ranks several (a map@k's k)."""
    submission_format: SubmissionFormat | None = None
    """The folder's own sample submission, to write a mission's submission back in."""

    def for_metric(self, metric: str) -> UserTables:
        """For a metric scored column by column (mean AUC, mean log loss), a class column becomes one 0/1 column
        per class again, as the submission has them."""
        if not metric_named(metric).multilabel or not self.classes or len(self.targets) != 1:
            return self
        target = self.targets[0]

        def spread(frame: pd.DataFrame) -> pd.DataFrame:
            labels = frame[target].astype(str)
            return frame.drop(columns=target).assign(**{c: (labels == c).astype(int) for c in self.classes})

        solution = self.solution
        if solution is not None and target in solution.columns:
            solution = spread(solution)
        return replace(self, train=spread(self.train), targets=list(self.classes), solution=solution)

    @property
    def description(self) -> str:
        return "## How AGENT-K read the files\n" + "".join(f"- {n}\n" for n in self.notes) if self.notes else ""


def read_table(path: Path) -> pd.DataFrame:
    """A CSV, TSV, JSON (records or lines) or Parquet table."""
    if not path.is_file():
        raise CompetitionInputError(f"file not found: {path}")
    if path.suffix.lower() not in TABLES:
        raise CompetitionInputError(f"cannot read {path}: tables are {', '.join(TABLES)}")
    try:
        return read_records(path)
    except (OSError, ValueError, ImportError) as exc:
        reason = " ".join(str(exc).split())
        raise CompetitionInputError(f"cannot read {path}: {reason}") from exc


def from_files(
    train: Path, targets: list[str], *, id_column: str | None, test: Path | None, solution: Path | None
) -> UserTables:
    if solution is not None and test is None:
        raise CompetitionInputError("--solution needs --test")
    if not targets:
        raise CompetitionInputError("--target is required with --train (the column to predict)")
    return UserTables(
        train=read_table(train),
        targets=targets,
        id_column=id_column,
        test=read_table(test) if test else None,
        solution=read_table(solution) if solution else None,
        source=f"user files ({train.name})",
    )


def from_folder(
    folder: Path, name: str, targets: list[str], *, solution: Path | None, scratch: Path | None = None
) -> UserTables:
    """The tables of a folder as Kaggle lays a competition out; `solution`: the test rows' labels, if known;
    `scratch`: where the folder's zips are extracted (it must outlive the tables' files)."""
    if not folder.is_dir():
        raise CompetitionInputError(f"folder not found: {folder}")
    try:
        arranged = arrange_folder(folder, name, targets=targets or None, scratch=scratch)
    except LayoutError as exc:
        raise CompetitionInputError(str(exc)) from None
    except (OSError, ValueError, ImportError) as exc:
        raise CompetitionInputError(f"cannot read the files of {folder}: {' '.join(str(exc).split())}") from None
    labels = read_table(solution).rename(columns=arranged.submitted_as) if solution else None
    if labels is not None and arranged.classes and all(c in labels.columns for c in arranged.classes):
        labels = labels.assign(**{arranged.targets[0]: from_one_hot(labels[arranged.classes])})
    sets = arranged.label_sets
    if labels is not None and sets is not None and sets.column in labels.columns:
        labels = labels.drop(columns=sets.column).assign(**spread_sets(labels[sets.column], sets))
    return UserTables(
        train=arranged.train,
        targets=arranged.targets,
        id_column=arranged.id_column,
        test=arranged.test,
        solution=labels,
        source=f"user files ({folder.name}/)",
        train_only=tuple(arranged.train_only),
        notes=tuple(arranged.notes),
        media=arranged.media,
        files=arranged.files,
        classes=tuple(arranged.classes or ()),
        listed=arranged.listed,
        submission_format=arranged.submission_format(),
    )


def hidden_rows(split: TestSplit, horizon: int | None, hints: Hints, tables: UserTables) -> HiddenRows:
    """Which rows to hide when the user gives no test table: by default the future when the rows are timed,
    whole entities when a group is named, else a random quarter."""
    for column in (hints.time_column, *hints.series_keys, hints.group_column):
        if column is not None and column not in tables.train.columns:
            raise CompetitionInputError(f"column '{column}' is not in the training table")
    if tables.test is not None:
        if split not in ("auto", "random") or horizon is not None:
            raise CompetitionInputError("--split and --horizon choose hidden rows of --train; --test gives them")
        return RANDOM
    if split == "auto":
        split = "future" if hints.time_column else "group" if hints.group_column else "random"
    if horizon is not None and split != "future":
        raise CompetitionInputError("--horizon is the number of time steps a future split hides")
    if split == "future":
        if hints.time_column is None:
            raise CompetitionInputError("--split future needs --time-column")
        time = {**time_of(tables.train, hints.time_column), "keys": list(hints.series_keys)}
        return HiddenRows("future", time, horizon)
    if split == "group":
        if hints.group_column is None:
            raise CompetitionInputError("--split group needs --group")
        return HiddenRows("group", group=hints.group_column)
    return RANDOM
