"""A competition's files, as Kaggle lays them out, turned into the tables every mission reads: `train` (an id,
the features, the target columns), `test` (the id and the features) and the sample submission.

Layouts it takes: CSV/TSV, JSON or JSON-lines records and Parquet tables; training labels in a file of their own
(`labels.csv`, `train_labels.csv`); no test file (the ids come from the sample submission); extra tables joined
on a key; a sample submission whose id is spelled or composed differently from the test's, or matches it only by
position; a target given as one-hot columns. It refuses, in one line naming what it holds, a competition whose
rows are images, audio or other files.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

TABLES = (".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".parquet")
MEDIA = {
    "image": (".jpg", ".jpeg", ".png", ".gif", ".bmp", ".tif", ".tiff", ".webp", ".dcm", ".nii"),
    "audio": (".wav", ".mp3", ".flac", ".ogg", ".aif", ".aiff", ".m4a"),
    "video": (".mp4", ".avi", ".mov", ".mkv"),
    "array": (".npy", ".npz", ".h5", ".hdf5", ".tfrecord"),
}
MEDIA_FILES = 20
"""A folder with at least this many media files is a competition of media, not of tables."""
MAX_JOINS = 5


class LayoutError(ValueError):
    """The files do not make a competition AGENT-K can enter; the message says why, in one line."""


@dataclass
class Arranged:
    train: pd.DataFrame
    test: pd.DataFrame
    sample: pd.DataFrame
    id_column: str
    targets: list[str]
    classes: list[str] | None = None
    """Set when the target came as one-hot columns: the classes, which a submission predicts one column each."""
    notes: list[str] = field(default_factory=list)


def is_one_hot(values: pd.DataFrame) -> bool:
    """Several 0/1 columns with exactly one 1 a row: one class, spread over a column per class."""
    return bool(values.isin([0, 1]).all().all() and (values.sum(axis=1) == 1).all())


def from_one_hot(values: pd.DataFrame) -> pd.Series:
    """The class of each row of one-hot columns: the name of its column that holds the 1."""
    return values.idxmax(axis=1).astype(str)


def _role(path: Path) -> str:
    name = path.name.lower()
    if "sample" in name or "submission" in name:
        return "sample"
    if re.search(r"(^|[_\-.])labels?([_\-.]|$)", name) or ("solution" in name and "train" in name):
        return "labels"
    if "train" in name:
        return "train"
    if "test" in name:
        return "test"
    return "extra"


def _media(raw: Path) -> tuple[str, int, str] | None:
    counts: Counter[tuple[str, str]] = Counter()
    for path in raw.rglob("*"):
        suffix = path.suffix.lower()
        for kind, suffixes in MEDIA.items():
            if suffix in suffixes:
                counts[(kind, suffix)] += 1
    if not counts:
        return None
    (kind, suffix), _ = counts.most_common(1)[0]
    total = sum(v for (k, _), v in counts.items() if k == kind)
    return (kind, total, suffix) if total >= MEDIA_FILES else None


MAX_JSON_LEVELS = 8
"""Nested JSON fields are flattened this deep (`a.b.c`); deeper values stay as they are."""


def read_records(path: Path) -> pd.DataFrame:
    """A table from CSV, TSV, Parquet, or JSON records (an array, or one object per line), nested fields flattened
    (`a.b`, at most MAX_JSON_LEVELS deep) and lists joined into text. JSON nested deeper than a table can be is a
    ValueError, never a RecursionError."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return pd.read_parquet(path)
    if suffix in (".csv", ".tsv"):
        return pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",")
    try:
        return _json_records(path.read_text())
    except RecursionError:
        raise ValueError("its JSON is nested too deeply to be a table") from None


def _json_records(text: str) -> pd.DataFrame:
    try:
        records = json.loads(text)
    except json.JSONDecodeError:
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
    if isinstance(records, dict):
        records = next((v for v in records.values() if isinstance(v, list)), [records])
    frame = pd.json_normalize(records, max_level=MAX_JSON_LEVELS)
    for column in frame.columns:
        if frame[column].map(lambda v: isinstance(v, list)).any():
            frame[column] = frame[column].map(lambda v: " ".join(map(str, v)) if isinstance(v, list) else v)
    return frame


def _refuse_links_out(raw: Path, slug: str) -> None:
    """A link (to a file or a folder) that leaves the folder is refused: whatever it points at would otherwise
    be copied into the new competition, where every candidate reads it."""
    root = raw.resolve()
    for folder, dirs, files in os.walk(raw):
        for name in (*dirs, *files):
            path = Path(folder, name)
            if path.is_symlink() and not path.resolve().is_relative_to(root):
                raise LayoutError(f"'{slug}': {path.relative_to(raw)} links outside the folder")


def _tables(raw: Path) -> dict[str, list[Path]]:
    roles: dict[str, list[Path]] = {}
    for path in sorted(p for p in raw.rglob("*") if p.is_file() and p.suffix.lower() in TABLES):
        roles.setdefault(_role(path), []).append(path)
    return roles


def _one(roles: dict[str, list[Path]], role: str, slug: str, *, required: bool = True) -> Path | None:
    found = roles.get(role, [])
    if len(found) > 1:
        raise LayoutError(f"'{slug}': several {role} files ({', '.join(p.name for p in found)}); which one is meant?")
    if not found and required:
        raise LayoutError(f"'{slug}': no {role} file among its tables")
    return found[0] if found else None


def _match_column(frame: pd.DataFrame, name: str) -> str | None:
    """`name`, or the one column spelled like it but for case and separators."""
    if name in frame.columns:
        return name

    def squash(text: str) -> str:
        return re.sub(r"[^a-z0-9]", "", text.lower())

    same = [c for c in frame.columns if squash(str(c)) == squash(name)]
    return same[0] if len(same) == 1 else None


def arrange_folder(raw: Path, slug: str, *, targets: list[str] | None = None) -> Arranged:
    """The canonical tables of the competition whose files are under `raw`; `LayoutError` when it cannot be.
    `targets`: the target columns, when the caller knows them (else they are read off the sample submission)."""
    _refuse_links_out(raw, slug)
    tables = _tables(raw)
    if media := _media(raw):
        kind, n, suffix = media
        raise LayoutError(f"'{slug}' holds {n:,} {kind} files ({suffix}): {kind} data is not supported yet")
    notes: list[str] = []
    sample_path = _one(tables, "sample", slug)
    assert sample_path is not None
    sample = read_records(sample_path)
    if sample.shape[1] < 2:
        raise LayoutError(f"'{slug}': the sample submission has no column to predict")
    id_column, predicted = str(sample.columns[0]), [str(c) for c in sample.columns[1:]]
    train = _training_table(tables, slug, id_column, notes)
    test = _test_table(tables, slug, train, sample, id_column, notes)
    for extra in tables.get("extra", [])[:MAX_JOINS]:
        train, test = _join(extra, train, test, notes)
    train, chosen, classes = _targets(slug, train, test, predicted, targets, notes)
    if id_column not in train.columns:
        train.insert(0, id_column, np.arange(len(train)))
        notes.append(f"training rows numbered as '{id_column}' (the files give them no id)")
    return Arranged(train, test, sample, id_column, chosen, classes, notes)


def _training_table(tables: dict[str, list[Path]], slug: str, id_column: str, notes: list[str]) -> pd.DataFrame:
    train_path = _one(tables, "train", slug, required=False)
    labels_path = _one(tables, "labels", slug, required=False)
    if train_path is None and labels_path is None:
        raise LayoutError(f"'{slug}': no training table (train.csv, or a labels file beside one)")
    if train_path is None:
        raise LayoutError(f"'{slug}': its labels ({labels_path.name if labels_path else ''}) come without a table of "
                          "features for the same rows")  # fmt: skip
    train = read_records(train_path)
    if labels_path is not None:
        labels = read_records(labels_path)
        key = _match_column(labels, id_column) or str(labels.columns[0])
        on = _match_column(train, key)
        if on is None:
            raise LayoutError(f"'{slug}': {labels_path.name} and {train_path.name} share no id column ('{key}')")
        labels = labels.rename(columns={key: on})
        if labels[on].duplicated().any():
            raise LayoutError(f"'{slug}': {labels_path.name} has several rows for one '{on}'")
        train = train.merge(labels, on=on, how="inner", suffixes=("", "_label"))
        notes.append(f"labels joined from {labels_path.name} on '{on}'")
    found = _match_column(train, id_column)
    if found and found != id_column:
        train = train.rename(columns={found: id_column})
    return train


def _test_table(
    tables: dict[str, list[Path]],
    slug: str,
    train: pd.DataFrame,
    sample: pd.DataFrame,
    id_column: str,
    notes: list[str],
) -> pd.DataFrame:
    test_path = _one(tables, "test", slug, required=False)
    ids = sample[id_column]
    if test_path is None:
        notes.append(f"no test file: the test rows are the sample submission's {len(ids):,} ids")
        return pd.DataFrame({id_column: ids})
    test = read_records(test_path)
    found = _match_column(test, id_column)
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
    given only as ids may live in a table of every row), where it holds one row per key."""
    extra = read_records(path)
    keys = [c for c in extra.columns if c in train.columns and c in test.columns]
    if not keys or extra.duplicated(subset=keys).any():
        return train, test
    added = [c for c in extra.columns if c not in keys]
    renamed = extra.rename(columns={c: f"{path.stem}_{c}" for c in added if c in train.columns})
    notes.append(f"{path.name} joined on {keys} ({len(added)} columns)")
    return train.merge(renamed, on=keys, how="left"), test.merge(renamed, on=keys, how="left")


def _targets(
    slug: str, train: pd.DataFrame, test: pd.DataFrame, predicted: list[str], given: list[str] | None, notes: list[str]
) -> tuple[pd.DataFrame, list[str], list[str] | None]:
    """The training table (with its target columns) and which columns those are; classes for one-hot targets."""
    if given:
        missing = [t for t in given if t not in train.columns]
        if missing:
            raise LayoutError(f"'{slug}': the target '{missing[0]}' is not a training column")
        return train, given, None
    in_train = [c for c in predicted if c in train.columns and c not in test.columns]
    if len(predicted) == 1 and not in_train:
        only = [c for c in train.columns if c not in test.columns]
        if len(only) == 1:
            notes.append(f"the target '{only[0]}' is submitted as '{predicted[0]}'")
            return train.rename(columns={only[0]: predicted[0]}), predicted, None
    if in_train == predicted and len(predicted) > 1:
        if is_one_hot(train[predicted]):
            label = "label" if "label" not in train.columns else "target_label"
            train = train.drop(columns=predicted).assign(**{label: from_one_hot(train[predicted])})
            notes.append(f"the target, given as {len(predicted)} one-hot columns, is read as the class '{label}'")
            return train, [label], predicted
        return train, predicted, None
    if in_train == predicted:
        return train, predicted, None
    wanted = set(predicted)
    for column in (c for c in train.columns if c not in test.columns):
        if set(train[column].dropna().astype(str).unique()) == wanted:
            return train, [column], predicted
    raise LayoutError(f"'{slug}': no training column holds what the sample submission predicts ({predicted})")
