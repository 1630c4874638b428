"""Competitions whose rows are files (images, audio): a labels table naming each training file (with or without
its extension, `id,label`), one folder per class (`train/<class>/*.jpg`), or a column of file names beside other
features; test files named by a test table or by the sample submission.

The arranged tables name each row's file in a `path` column, relative to the competition's `media/` folder;
`files` maps those paths to the files to copy there."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pandas as pd

from agent_k.media.kinds import media_kind
from agent_k.platforms.layouts.files import LayoutError, one, side_of
from agent_k.platforms.layouts.records import match_column, read_records

PATH_COLUMN = "path"
MIN_MATCHED = 0.9
"""A column names the files when at least this share of its values is one file each."""
MAX_NAMED_CLASSES = 50
MIN_PER_CLASS = 2
"""A part of the training files' names is their class when it takes 2 to MAX_NAMED_CLASSES values, each on at
least MIN_PER_CLASS files."""
Side = str | None


@dataclass(frozen=True)
class MediaFile:
    source: Path
    relative: str
    """Its path under the folder, with `/`: where it goes under `media/`."""
    side: Side
    """"train" or "test" when a folder on its path says so."""


class FileIndex:
    """The folder's media files of one kind, found by relative path, by name or by name without extension."""

    def __init__(self, files: list[MediaFile], preference: tuple[str, ...] = ()) -> None:
        self.files = files
        self._keys: dict[str, list[MediaFile]] = defaultdict(list)
        for file in files:
            path = PurePosixPath(file.relative)
            for key in {file.relative, path.name, path.stem}:
                self._keys[key].append(file)
        self._rank = {suffix: i for i, suffix in enumerate(preference)}
        self.formats_read: set[tuple[str, tuple[str, ...]]] = set()
        """(the suffix read, the suffixes there) of each file found in several formats."""

    @classmethod
    def of(cls, kind: str, raw: Path, unzipped: list[Path]) -> FileIndex:
        """The files under `raw`, and under each folder a zip was extracted to (named as the zip was)."""
        found, suffixes = [], media_kind(kind).suffixes
        for root, base in ((raw, raw), *((folder, folder.parent) for folder in unzipped)):
            for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in suffixes):
                relative = path.relative_to(base).as_posix()
                found.append(MediaFile(path, relative, side_of(PurePosixPath(relative).parts[:-1])))
        return cls(found, suffixes)

    def find(self, key: object, side: Side) -> MediaFile | None:
        """The one file `key` names on `side` (or on no side); None when it names none, or several. Copies of one
        file in several formats (a DICOM beside its JPEG) are one file: the format read is the kind's first."""
        text = str(key).strip()
        found = self._keys.get(text) or self._keys.get(PurePosixPath(text).name) or []
        for narrowed in ([f for f in found if f.side == side], [f for f in found if f.side is None]):
            if len(narrowed) == 1:
                return narrowed[0]
            if (copy := self._one_format(narrowed)) is not None:
                return copy
        return None

    def _one_format(self, copies: list[MediaFile]) -> MediaFile | None:
        paths = [PurePosixPath(f.relative) for f in copies]
        suffixes = tuple(sorted(p.suffix.lower() for p in paths))
        if len(copies) < 2 or len({p.stem for p in paths}) != 1 or len(set(suffixes)) != len(copies):
            return None
        chosen = min(copies, key=lambda f: self._rank.get(PurePosixPath(f.relative).suffix.lower(), len(self._rank)))
        self.formats_read.add((PurePosixPath(chosen.relative).suffix.lower(), suffixes))
        return chosen

    def on(self, side: Side) -> list[MediaFile]:
        return [f for f in self.files if f.side == side]

    def matched(self, values: pd.Series, side: Side) -> float:
        sample = values.dropna().head(500)
        return sum(self.find(v, side) is not None for v in sample) / max(len(sample), 1)


@dataclass
class MediaRows:
    train: pd.DataFrame
    test: pd.DataFrame
    files: dict[str, Path]
    """Each row's file: its path under `media/` and where it lies now."""


def media_rows(
    slug: str, index: FileIndex, kind: str, tables: dict[str, list[Path]], sample: pd.DataFrame, notes: list[str]
) -> MediaRows:
    """The training and test rows, each with the `path` of its file; `LayoutError` when the files and the
    tables do not go together."""
    id_column, predicted = str(sample.columns[0]), [str(c) for c in sample.columns[1:]]
    train = _training_rows(slug, index, kind, tables, id_column, predicted, notes)
    test = _test_rows(slug, index, kind, tables, sample, notes)
    for read, there in sorted(index.formats_read):
        notes.append(f"files are there as {' and '.join(there)} under one name: the {read} copy of each is read")
    used = {*train[PATH_COLUMN].dropna(), *test[PATH_COLUMN].dropna()}
    files = {f.relative: f.source for f in index.files if f.relative in used}
    return MediaRows(train, test, files)


def _file_column(frame: pd.DataFrame, index: FileIndex, side: Side, prefer: str) -> str | None:
    """The column whose values name the files on `side`: the id column first, then another id (`image_id`), then
    any other (`file_name`)."""
    first = match_column(frame, prefer)
    others = [str(c) for c in frame.columns if str(c) != first and frame[c].dtype.kind in "OUSi"]
    columns = ([first] if first else []) + sorted(others, key=lambda c: not re.search(r"(^|_)id$", c.lower()))
    return next((c for c in columns if index.matched(frame[c], side) >= MIN_MATCHED), None)


def _without_file_names(frame: pd.DataFrame, index: FileIndex, side: Side, id_column: str) -> pd.DataFrame:
    """The rows without the other columns that name their files: each file is read through its `path`, its name
    as text is no feature, and a training name can carry the class (herbarium's `<category>/<id>.jpg`)."""
    naming = [str(c) for c in frame.columns if str(c) not in (id_column, PATH_COLUMN) and frame[c].dtype.kind in "OUS"
              and index.matched(frame[c], side) >= MIN_MATCHED]  # fmt: skip
    return frame.drop(columns=naming)


def _with_paths(frame: pd.DataFrame, column: str, index: FileIndex, side: Side) -> tuple[pd.DataFrame, int]:
    """The frame with each row's file in PATH_COLUMN (a column of that name it had is kept, renamed), and how
    many rows name no file."""
    located = [index.find(value, side) for value in frame[column]]
    frame = frame.rename(columns={PATH_COLUMN: f"{PATH_COLUMN}_given"})
    paths = pd.Series([f.relative if f else None for f in located], index=frame.index, name=PATH_COLUMN)
    frame = pd.concat([frame, paths], axis=1)
    return frame, sum(f is None for f in located)


def _training_rows(
    slug: str, index: FileIndex, kind: str, tables: dict[str, list[Path]], id_column: str, predicted: list[str],
    notes: list[str],
) -> pd.DataFrame:  # fmt: skip
    naming: list[tuple[pd.DataFrame, str, Path]] = []
    for path in (*tables.get("train", []), *tables.get("labels", [])):
        frame = read_records(path)
        if (column := _file_column(frame, index, "train", id_column)) is not None:
            naming.append((frame, column, path))
    if not naming:
        return _class_folders(slug, index, kind, id_column, predicted, notes)
    frame, column, path = max(naming, key=lambda found: found[0].shape[1])  # the first of the widest
    notes.append(f"{path.name} names the training {kind} files in '{column}'")
    alike = [(f, p) for f, c, p in naming if p != path and c == column and list(f.columns) == list(frame.columns)]
    for other, other_path in alike:  # train_curated.csv and train_noisy.csv: more rows of the same table
        notes.append(f"{other_path.name} names more training {kind} files in the same columns: its "
                     f"{len(other):,} rows are added")  # fmt: skip
    if alike:  # a file both name keeps the first table's row
        frame = pd.concat([frame, *(f for f, _ in alike)], ignore_index=True).drop_duplicates(column, ignore_index=True)
    frame, missing = _with_paths(frame, column, index, "train")
    if missing:
        frame = frame[frame[PATH_COLUMN].notna()].reset_index(drop=True)
        notes.append(f"{missing:,} training rows name no file: left out")
    found = match_column(frame, id_column)
    frame = frame.rename(columns={found or column: id_column})
    return _without_file_names(frame, index, "train", id_column)


def _class_folders(
    slug: str, index: FileIndex, kind: str, id_column: str, predicted: list[str], notes: list[str]
) -> pd.DataFrame:
    """No table names the training files: each one's label is its folder's name (one folder per class, under a
    training folder, or beside the test folder where there is none: alaska2's `Cover/`, `JMiPOD/`, … and `Test/`),
    or a part of its own name (`cat.1.jpg`, `…_TRAIN7_1.aif`)."""
    files = index.on("train")
    if not files and (files := index.on(None)):
        notes.append(f"no training folder: the {kind} files outside the test folder are the training files")
    label = predicted[0] if len(predicted) == 1 else "label"
    names = [PurePosixPath(f.relative).name for f in files]  # as the sample names test files: with the extension
    ids = names if len(set(names)) == len(names) else [f.relative for f in files]
    labels = _folder_classes([PurePosixPath(f.relative).parent for f in files])
    if len(set(labels)) >= 2:
        notes.append(f"the training {kind} files lie in one folder per class ({len(set(labels))} classes: '{label}')")
    elif (named := labels_in_names(names)) is not None:
        labels, part = named
        notes.append(f"the training {kind} files' names carry their class ({part}; {len(set(labels))} classes: "
                     f"'{label}')")  # fmt: skip
    else:
        raise LayoutError(f"'{slug}': no table names its training {kind} files, they do not lie in one folder per "
                          "class, and their names carry no class")  # fmt: skip
    return pd.DataFrame({id_column: ids, PATH_COLUMN: [f.relative for f in files], label: labels})


def _folder_classes(folders: list[PurePosixPath]) -> list[str]:
    """Each file's class folder: its folder's path below the folder all of them share, so that nested class folders
    keep their whole path (`000/05` and `001/05` are two classes, as herbarium's `<id // 100>/<id % 100>` are)."""
    shared = len(PurePosixPath(os.path.commonpath([str(f) for f in folders])).parts) if folders else 0
    return ["/".join(folder.parts[shared:]) for folder in folders]


def labels_in_names(names: list[str]) -> tuple[list[str], str] | None:
    """Each file's class, where one part of every name holds it (split at `.`, `_` and `-`, counted from the start
    or from the end): a part whose values are a few short words or small numbers, as classes are, not a date, a
    time or an id. Words are preferred to numbers (`cat.12.jpg`: `cat`, not the counter), then fewer values.
    Returns the classes and which part held them; None when no part does, or two are as likely."""
    stems = [re.split(r"[._-]", PurePosixPath(name).stem) for name in names]
    if len(stems) < 2 * MIN_PER_CLASS:
        return None
    found: dict[tuple[str, ...], str] = {}
    for position in range(min(len(parts) for parts in stems)):
        for where, pick in ((f"part {position + 1}", position), (f"part {position + 1} from the end", -1 - position)):
            values = [parts[pick] for parts in stems]
            counts = pd.Series(values).value_counts()
            few = 2 <= len(counts) <= MAX_NAMED_CLASSES and counts.min() >= MIN_PER_CLASS
            if few and all(map(_classlike, counts.index)):
                found.setdefault(tuple(values), where)
    ranked = sorted(found, key=_unlikeness)
    if not ranked or (len(ranked) > 1 and _unlikeness(ranked[0]) == _unlikeness(ranked[1])):
        return None
    return list(ranked[0]), found[ranked[0]]


def _unlikeness(values: tuple[str, ...]) -> tuple[bool, int]:
    """How unlike a class a part's values are: numbers rather than words, then more of them."""
    return any(v.isdigit() for v in values), len(set(values))


def _classlike(value: str) -> bool:
    """A short word or a small number: a class, not a date, a time, a counter or an id."""
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z ]{0,23}|\d{1,2}", value))


def _test_rows(
    slug: str, index: FileIndex, kind: str, tables: dict[str, list[Path]], sample: pd.DataFrame, notes: list[str]
) -> pd.DataFrame:
    id_column = str(sample.columns[0])
    test_path = one(tables, "test", slug, required=False)
    frame = read_records(test_path) if test_path else sample[[id_column]].copy()
    column = _file_column(frame, index, "test", id_column)
    if column is None:
        named = test_path.name if test_path else "the sample submission"
        raise LayoutError(f"'{slug}': {named} does not name the test {kind} files ({len(index.on('test')):,} in a "
                          "test folder)")  # fmt: skip
    frame, missing = _with_paths(frame, column, index, "test")
    if missing:
        notes.append(f"{missing:,} test rows name no file: they are predicted without one")
    found = match_column(frame, id_column) or _holding(frame, sample[id_column])
    frame = _without_file_names(frame.rename(columns={found or column: id_column}), index, "test", id_column)
    if test_path is None:
        notes.append(f"no test table: the test rows are the sample submission's {len(frame):,} files")
    return frame


def _holding(frame: pd.DataFrame, ids: pd.Series) -> str | None:
    """The one column whose values are the sample's ids, under another name (herbarium 2022's `image_id` for `Id`)."""
    wanted = set(ids.astype(str))
    holding = [str(c) for c in frame.columns if set(frame[c].astype(str)) == wanted]
    return holding[0] if len(holding) == 1 else None
