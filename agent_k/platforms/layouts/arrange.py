"""Arrange a competition's folder into the tables every mission reads: `train` (an id, the features, the target
columns), `test` (the id and the same features) and the sample submission (the id and the predicted columns)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from agent_k.competition.levels import as_text
from agent_k.media import missing_extra
from agent_k.media.kinds import media_kind
from agent_k.platforms.layouts.files import (
    LayoutError,
    Media,
    media_in,
    one,
    refuse_links_out,
    tables_by_role,
    unzip_beside,
)
from agent_k.platforms.layouts.media import FileIndex, media_rows
from agent_k.platforms.layouts.records import match_column, peek_columns, read_records
from agent_k.platforms.layouts.submission_format import SubmissionFormat
from agent_k.platforms.layouts.targets import LabelSets, listed, resolve_targets

MAX_JOINS = 5
MIN_TEST_COVER = 0.5
"""An extra table is joined only when it holds at least this share of the test rows' keys: one that covers only
the training rows would give the test rows empty columns."""


@dataclass
class Arranged:
    train: pd.DataFrame
    test: pd.DataFrame
    sample: pd.DataFrame
    id_column: str
    targets: list[str]
    classes: list[str] | None = None
    """Set when the submission wants one column per class (one-hot targets, or a probability per class)."""
    notes: list[str] = field(default_factory=list)
    train_only: list[str] = field(default_factory=list)
    """Training columns the test rows do not have (outcomes, fields known only later): left out of the tables."""
    row_keys: list[str] = field(default_factory=list)
    """The sample submission had no id: its rows are the test rows, which it repeats by these test columns."""
    submitted_as: dict[str, str] = field(default_factory=dict)
    """A target column renamed to the name the submission gives it."""
    media: str | None = None
    """The rows are files of this kind: `path` names each one's, relative to `media/`."""
    files: dict[str, Path] = field(default_factory=dict)
    """Where each `path` lies now (to be copied under `media/`)."""
    sample_path: Path | None = None
    """The folder's own sample submission, which `sample` is read from (its rows in the same order)."""
    label_sets: LabelSets | None = None
    """The target is a set of labels a row, submitted as one column: `targets` are its 0/1 column per label."""

    def submission_format(self) -> SubmissionFormat | None:
        """How to write a submission back in the folder's own sample's layout."""
        if self.sample_path is None:
            return None
        return SubmissionFormat(
            sample=self.sample_path,
            ids=tuple(self.sample[self.id_column].astype(str)),
            id_column=self.id_column,
            row_keys=tuple(self.row_keys),
            classes=tuple(self.classes or ()),
            target=self.targets[0] if len(self.targets) == 1 else None,
            sets=(self.label_sets.column, self.label_sets.separator) if self.label_sets else None,
        )

    @property
    def listed(self) -> int | None:
        """How many labels each row of the sample lists, where it ranks several (space-separated, as many on every
        row): the k of a map@k, which the sample alone may say."""
        predicted = [c for c in self.sample.columns if c != self.id_column and c not in self.row_keys]
        if len(predicted) != 1 or self.sample.empty:
            return None
        counts = self.sample[predicted[0]].astype(str).map(lambda text: len(text.split()))
        return int(counts.iloc[0]) if counts.nunique() == 1 and counts.iloc[0] > 1 else None


@dataclass(frozen=True)
class _SampleColumns:
    id_column: str | None
    """None: the sample names its rows by repeating test columns (`row_keys`), not by an id."""
    predicted: list[str]
    row_keys: list[str]


def arrange_folder(raw: Path, slug: str, *, targets: list[str] | None = None, scratch: Path | None = None) -> Arranged:
    """The canonical tables of the competition whose files are under `raw`; `LayoutError` when it cannot be.
    `targets`: the target columns, when the caller knows them (else they are read off the sample submission);
    `scratch`: where zips of the folder are extracted (without it, they are not read).

    A folder of images or audio is a media competition when its files are the rows (named by a table, or in one
    folder per class). Without the media extra, or when no table names the files, tables that hold features
    are entered alone, the files left unread; with no features either, the folder is refused saying why."""
    refuse_links_out(raw, slug)
    unzipped = unzip_beside(raw, scratch) if scratch is not None else []
    tables = tables_by_role(raw, *unzipped)
    media = media_in(raw, *unzipped)
    if media is None:
        return _arrange_tables(raw, slug, tables, targets)
    readable = media_kind(media.kind).reader is not None
    problem = missing_extra(media.kind) if readable else f"{media.kind} data is not supported yet"
    if problem is None:
        try:
            return _arrange_media(FileIndex.of(media.kind, raw, unzipped), slug, media, tables, targets)
        except LayoutError as refused:
            problem = str(refused).removeprefix(f"'{slug}': ")
    refusal = f"'{slug}' holds {media}: {problem}"
    try:
        arranged = _arrange_tables(raw, slug, tables, targets, refusal=refusal)
    except LayoutError:
        raise LayoutError(refusal) from None
    arranged.notes.append(f"{media} lie beside the tables, which hold the features: the files are not read "
                          f"({problem})")  # fmt: skip
    return arranged


def _arrange_media(
    index: FileIndex, slug: str, media: Media, tables: dict[str, list[Path]], targets: list[str] | None
) -> Arranged:
    notes: list[str] = []
    sample, sample_path = _sample(tables, slug)
    id_column, predicted = str(sample.columns[0]), [str(c) for c in sample.columns[1:]]
    rows = media_rows(slug, index, media.kind, tables, sample, notes)
    resolved = resolve_targets(slug, rows.train, rows.test, predicted, targets, notes)
    train, chosen, classes = resolved.train, resolved.chosen, resolved.classes
    train, train_only = _without_train_only(train, rows.test, id_column, chosen, notes)
    notes.append(f"{len(rows.files):,} {media.kind} files: {len(train):,} training rows, {len(rows.test):,} test rows")
    return Arranged(train, rows.test, sample, id_column, chosen, classes, notes, train_only, media=media.kind,
                    files=rows.files, sample_path=sample_path, label_sets=resolved.sets)  # fmt: skip


def _arrange_tables(
    raw: Path, slug: str, tables: dict[str, list[Path]], targets: list[str] | None, *, refusal: str = ""
) -> Arranged:
    """The tables alone. `refusal`: why the folder is refused when its test rows come with no features."""
    notes: list[str] = []
    sample, sample_path = _sample(tables, slug)
    test_path = one(tables, "test", slug, required=False)
    test_file = read_records(test_path) if test_path else None
    columns = _sample_columns(sample, test_file)
    train, extras = _training_table(tables, slug, columns.id_column, test_file, notes)
    if columns.id_column is None:
        assert test_file is not None
        id_column = "id" if "id" not in (*train.columns, *test_file.columns) else "row_id"
        test, sample = _rows_named_by_keys(slug, test_file, sample, columns, id_column, len(train), notes)
    else:
        id_column = columns.id_column
        test = _test_table(slug, test_file, sample, id_column, notes)
        sample = sample.rename(columns={sample.columns[0]: id_column})
    if refusal and not [c for c in test.columns if c != id_column]:
        raise LayoutError(refusal)
    for extra in extras[:MAX_JOINS]:
        train, test = _join(extra, train, test, notes)
    renamed = dict(zip(targets or [], columns.predicted, strict=False))
    resolved = resolve_targets(slug, train, test, columns.predicted, targets, notes)
    train, chosen, classes = resolved.train, resolved.chosen, resolved.classes
    train, train_only = _without_train_only(train, test, id_column, chosen, notes)
    if id_column not in train.columns:
        train.insert(0, id_column, np.arange(len(train)))
        notes.append(f"training rows numbered as '{id_column}' (the files give them no id)")
    submitted_as = {k: v for k, v in renamed.items() if chosen == [v] and k != v}
    return Arranged(train, test, sample, id_column, chosen, classes, notes, train_only, columns.row_keys, submitted_as,
                    sample_path=sample_path, label_sets=resolved.sets)  # fmt: skip


def _sample(tables: dict[str, list[Path]], slug: str) -> tuple[pd.DataFrame, Path]:
    path = one(tables, "sample", slug)
    assert path is not None
    sample = read_records(path)
    if sample.shape[1] < 2:
        raise LayoutError(f"'{slug}': the sample submission has no column to predict")
    return sample, path


def _sample_columns(sample: pd.DataFrame, test: pd.DataFrame | None) -> _SampleColumns:
    """The sample's first column is its id, unless the test has no such column and the sample's other columns
    repeat test columns beside the predicted ones (Insult, Date, Comment for a test of Date, Comment)."""
    first, rest = str(sample.columns[0]), [str(c) for c in sample.columns[1:]]
    if test is None or match_column(test, first) is not None:
        return _SampleColumns(first, rest, [])
    keys = [str(c) for c in sample.columns if match_column(test, str(c)) is not None]
    predicted = [str(c) for c in sample.columns if str(c) not in keys]
    if keys and first in predicted:
        return _SampleColumns(None, predicted, keys)
    return _SampleColumns(first, rest, [])


def _training_table(
    tables: dict[str, list[Path]], slug: str, id_column: str | None, test: pd.DataFrame | None, notes: list[str]
) -> tuple[pd.DataFrame, list[Path]]:
    """The training rows, with labels from a file of their own joined; and the tables left to join as extras
    (after a second training file, which the first one does not cover)."""
    trains = tables.get("train", [])
    labels_path = one(tables, "labels", slug, required=False)
    extras = list(tables.get("extra", []))
    if not trains and labels_path is None:
        raise LayoutError(f"'{slug}': no training table (train.csv, or a labels file beside one)")
    if not trains:
        assert labels_path is not None
        labels = read_records(labels_path)
        if test is None or not [c for c in labels.columns if c in test.columns and c != id_column]:
            raise LayoutError(f"'{slug}': its labels ({labels_path.name}) come without a table of features for the "
                              "same rows")  # fmt: skip
        notes.append(f"{labels_path.name} is the whole training table")
        return _named_id(labels, id_column), extras
    train_path = _main_training_file(trains, test)
    for other in (p for p in trains if p != train_path):
        notes.append(f"{other.name}: a second training file, joined only if it covers the test rows")
        extras.insert(0, other)
    train = read_records(train_path)
    if labels_path is not None:
        train = _with_labels(slug, train, read_records(labels_path), labels_path.name, id_column, notes)
    return _named_id(train, id_column), extras


def _main_training_file(trains: list[Path], test: pd.DataFrame | None) -> Path:
    """Of several training files, the one that shares most columns with the test (then: plainly named train)."""
    if len(trains) == 1:
        return trains[0]
    shared = set(test.columns) if test is not None else set()
    return max(trains, key=lambda p: (len(shared & set(peek_columns(p))), p.stem.lower() == "train", -len(p.name)))


def _with_labels(
    slug: str, train: pd.DataFrame, labels: pd.DataFrame, name: str, id_column: str | None, notes: list[str]
) -> pd.DataFrame:
    key = (match_column(labels, id_column) if id_column else None) or str(labels.columns[0])
    on = match_column(train, key)
    if on is None:
        notes.append(f"{name} shares no id column with the training table: not used")
        return train
    labels = labels.rename(columns={key: on})
    if labels[on].duplicated().any():
        raise LayoutError(f"'{slug}': {name} has several rows for one '{on}'")
    notes.append(f"labels joined from {name} on '{on}'")
    return train.merge(labels, on=on, how="inner", suffixes=("", "_label"))


def _named_id(frame: pd.DataFrame, id_column: str | None) -> pd.DataFrame:
    found = match_column(frame, id_column) if id_column else None
    return frame.rename(columns={found: id_column}) if found and found != id_column else frame


def _test_table(
    slug: str, test: pd.DataFrame | None, sample: pd.DataFrame, id_column: str, notes: list[str]
) -> pd.DataFrame:
    ids = sample.iloc[:, 0]
    if test is None:
        notes.append(f"no test file: the test rows are the sample submission's {len(ids):,} ids")
        return pd.DataFrame({id_column: ids})
    found = match_column(test, id_column)
    if found is not None:
        return test.rename(columns={found: id_column})
    composed = _composite(test, ids, id_column)
    if composed is not None:
        notes.append(f"'{id_column}' composed from the test columns {composed}")
        return test
    if len(test) == len(ids):
        test.insert(0, id_column, ids.to_numpy())
        notes.append(f"'{id_column}' is not a test column: the sample submission's ids are taken in row order")
        return test
    raise LayoutError(
        f"'{slug}': the sample submission's '{id_column}' is no test column, no composition of them, and its "
        f"{len(ids):,} rows do not match the test's {len(test):,}"
    )


def _rows_named_by_keys(
    slug: str, test: pd.DataFrame, sample: pd.DataFrame, columns: _SampleColumns, id_column: str, first: int,
    notes: list[str],
) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """Number the test rows (after the `first` training ids) and find each sample row's number: by position when
    the sample repeats the test's rows in order, else by its key columns."""
    keys = [match_column(test, k) or k for k in columns.row_keys]
    numbers = np.arange(first, first + len(test))
    test = test.assign(**{id_column: numbers})[[id_column, *test.columns]]
    theirs = sample[columns.row_keys].apply(as_text).to_numpy()
    ours = test[keys].apply(as_text).to_numpy()
    if theirs.shape == ours.shape and (theirs == ours).all():
        ids = numbers
        how = "in the test's order"
    else:
        index = {tuple(row): n for row, n in zip(ours, numbers, strict=True)}
        found = [index.get(tuple(row)) for row in theirs]
        if len(index) < len(ours) or None in found:
            raise LayoutError(f"'{slug}': the sample submission has no id, and its rows are not the test's rows "
                              f"(matched on {columns.row_keys})")  # fmt: skip
        ids = np.array(found)
        how = f"matched on {listed(columns.row_keys)}"
    notes.append(f"the sample submission has no id: its rows are the test rows ({how}), numbered as '{id_column}'")
    return test, pd.DataFrame({id_column: ids, **{c: sample[c].to_numpy() for c in columns.predicted}})


def _composite(test: pd.DataFrame, ids: pd.Series, id_column: str) -> list[str] | None:
    """Test columns that, joined by `_` (or `-`), make the sample's ids (then added as `id_column`)."""
    sample_ids = set(ids.astype(str))
    columns = [c for c in test.columns if test[c].notna().all()]
    for size in (2, 3):
        for start in range(len(columns) - size + 1):
            chosen = columns[start : start + size]
            for joiner in ("_", "-"):
                made = test[chosen].astype(str).agg(joiner.join, axis=1)
                if set(made) == sample_ids:
                    test.insert(0, id_column, made.to_numpy())
                    return [str(c) for c in chosen]
    return None


def _join(path: Path, train: pd.DataFrame, test: pd.DataFrame, notes: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Left-join an extra table on the columns it shares with both tables (the row id too: the features of a test
    given only as ids may live in a table of every row), where it holds one row per key and covers the test."""
    extra = read_records(path)
    keys = [c for c in extra.columns if c in train.columns and c in test.columns]
    if not keys:
        return train, test
    if extra.duplicated(subset=keys).any():
        notes.append(f"{path.name}: several rows per {listed(keys)}, not joined")
        return train, test
    cover = pd.MultiIndex.from_frame(test[keys]).isin(pd.MultiIndex.from_frame(extra[keys])).mean()
    if cover < MIN_TEST_COVER:
        notes.append(f"{path.name} covers {cover:.0%} of the test rows (training rows only): not joined")
        return train, test
    added = [c for c in extra.columns if c not in keys]
    renamed = extra.rename(columns={c: f"{path.stem}_{c}" for c in added if c in train.columns})
    notes.append(f"{path.name} joined on {keys} ({len(added)} columns)")
    return train.merge(renamed, on=keys, how="left"), test.merge(renamed, on=keys, how="left")


def _without_train_only(
    train: pd.DataFrame, test: pd.DataFrame, id_column: str, targets: list[str], notes: list[str]
) -> tuple[pd.DataFrame, list[str]]:
    """The training table without the columns that are neither targets nor test columns (outcomes, or fields
    filled in later), and which those were. None when the test rows come as bare ids (their features are
    nowhere to compare with)."""
    if not [c for c in test.columns if c != id_column]:
        return train, []
    only = [str(c) for c in train.columns if c not in test.columns and c not in targets and c != id_column]
    if only:
        notes.append(f"{len(only)} columns only in training ({listed(only)}): not features")
    return train.drop(columns=only), only
