"""Which training columns are the target: named by the user, read off the sample submission's columns, or
recognised by their values (one-hot columns, a column whose values are the sample's class columns, a column of
sets of labels)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from agent_k.platforms.layouts.files import LayoutError

SHOWN = 5
"""Column names a message or a note lists before it says how many more there are."""


def listed(columns: list[str]) -> str:
    more = f", and {len(columns) - SHOWN} more" if len(columns) > SHOWN else ""
    return ", ".join(columns[:SHOWN]) + more


def is_one_hot(values: pd.DataFrame) -> bool:
    """Several 0/1 columns with exactly one 1 a row: one class, spread over a column per class."""
    return bool(values.isin([0, 1]).all().all() and (values.sum(axis=1) == 1).all())


def from_one_hot(values: pd.DataFrame) -> pd.Series:
    """The class of each row of one-hot columns: the name of its column that holds the 1."""
    return values.idxmax(axis=1).astype(str)


@dataclass(frozen=True)
class LabelSets:
    """A target whose value is a set of labels, submitted as one column (`labels`: `scab frog_eye_leaf_spot`)."""

    column: str
    separator: str
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Targets:
    train: pd.DataFrame
    """The training table, its target columns named as the submission names them."""
    chosen: list[str]
    """Which columns those are."""
    classes: list[str] | None = None
    """The classes, when the submission wants one column per class."""
    sets: LabelSets | None = None
    """Set when the chosen columns are a 0/1 column per label of a target submitted as a set."""


def resolve_targets(
    slug: str, train: pd.DataFrame, test: pd.DataFrame, predicted: list[str], given: list[str] | None, notes: list[str]
) -> Targets:
    """Which training columns the submission's predicted columns are, made so where the files give them otherwise."""
    if given:
        missing = [t for t in given if t not in train.columns]
        if missing:
            raise LayoutError(f"'{slug}': the target '{missing[0]}' is not a training column")
        if len(given) == 1 and len(predicted) == 1 and predicted[0] not in train.columns:
            notes.append(f"the target '{given[0]}' is submitted as '{predicted[0]}'")
            return Targets(train.rename(columns={given[0]: predicted[0]}), predicted)
        return Targets(train, given)
    only = [str(c) for c in train.columns if c not in test.columns]
    in_train = [c for c in predicted if c in only]
    if len(predicted) == 1 and not in_train:
        if len(only) == 1:
            notes.append(f"the target '{only[0]}' is submitted as '{predicted[0]}'")
            return Targets(train.rename(columns={only[0]: predicted[0]}), predicted)
        if only:
            raise LayoutError(f"'{slug}': which training column is '{predicted[0]}'? {len(only)} columns are only "
                              f"in training ({listed(only)}): name it with --target")  # fmt: skip
    if in_train == predicted and len(predicted) > 1 and is_one_hot(train[predicted]):
        label = "label" if "label" not in train.columns else "target_label"
        train = train.drop(columns=predicted).assign(**{label: from_one_hot(train[predicted])})
        notes.append(f"the target, given as {len(predicted)} one-hot columns, is read as the class '{label}'")
        return Targets(train, [label], predicted)
    if in_train == predicted and len(predicted) == 1 and (separator := _set_separator(train[predicted[0]])):
        return _spread_sets(train, predicted[0], separator, notes)
    if in_train == predicted:
        return Targets(train, predicted)
    if found := _class_column(train, only, predicted):
        return Targets(train, [found], predicted)
    if sets := _label_sets(train, only, predicted):
        column, separator = sets
        train = train.drop(columns=column).assign(**one_column_each(_split_sets(train[column], separator), predicted))
        notes.append(f"the target, given as sets of labels in '{column}' (separated by '{separator}'), is read as "
                     f"{len(predicted)} 0/1 columns, one per label")  # fmt: skip
        return Targets(train, predicted)
    raise LayoutError(f"'{slug}': no training column holds what the sample submission predicts ({predicted})")


SEPARATORS = (",", " ", ";", "|")
MIN_SET_COVER = 0.5
"""A column of label sets must name at least this share of the sample's label columns."""


def _split_sets(values: pd.Series, separator: str) -> pd.Series:
    return values.fillna("").astype(str).map(lambda text: frozenset(t.strip() for t in text.split(separator)) - {""})


def _split_each_way(values: pd.Series) -> Iterator[tuple[str, pd.Series]]:
    """A text column split at each separator in turn, where some row holds several parts (else no sets)."""
    if not pd.api.types.is_string_dtype(values) and values.dtype != object:
        return
    for separator in SEPARATORS:
        sets = _split_sets(values, separator)
        if (sets.map(len) > 1).any():
            yield separator, sets


def one_column_each(sets: pd.Series, labels: list[str]) -> dict[str, pd.Series]:
    """A 0/1 column per label: whether each row's set holds it."""
    return {label: sets.map(lambda row, x=label: int(x in row)) for label in labels}


def spread_sets(values: pd.Series, sets: LabelSets) -> dict[str, pd.Series]:
    """A column of sets (`scab rust`) as the 0/1 column per label a set-valued target is learnt as."""
    return one_column_each(_split_sets(values, sets.separator), list(sets.labels))


def _label_sets(train: pd.DataFrame, candidates: list[str], labels: list[str]) -> tuple[str, str] | None:
    """The column, and its separator, whose values are sets of the sample's label columns (`Bark,Meow`): a target
    with several labels a row, submitted as a column per label (freesound-audio-tagging, plant-pathology)."""
    wanted = set(labels)
    if len(wanted) < 2:
        return None
    for column in candidates:
        for separator, sets in _split_each_way(train[column]):
            named = frozenset().union(*sets)
            if named <= wanted and len(named) >= MIN_SET_COVER * len(wanted):
                return column, separator
    return None


MAX_SET_LABELS = 200
"""A set-valued target names at most this many labels (a column of free text names far more)."""


def _set_separator(values: pd.Series) -> str | None:
    """The separator of a target column whose values are sets of labels: some rows hold several, every label is
    held by several rows, there are few of them (unlike words of free text or ids), and they recombine: there are
    more distinct sets than labels (the words of multi-word classes, `Common Chickweed`, do not)."""
    for separator, sets in _split_each_way(values):
        counts = sets.explode().value_counts()
        few = 2 <= len(counts) <= min(MAX_SET_LABELS, len(values) // 4) and counts.min() >= 2
        if few and sets.nunique() > len(counts):
            return separator
    return None


def _spread_sets(train: pd.DataFrame, column: str, separator: str, notes: list[str]) -> Targets:
    sets = _split_sets(train[column], separator)
    labels = sorted(str(label) for label in sets.explode().dropna().unique())
    spread = train.drop(columns=column).assign(**one_column_each(sets, labels))
    notes.append(f"the target '{column}' is a set of labels a row (separated by '{separator}'): read as "
                 f"{len(labels)} 0/1 columns, one per label, and submitted as a set again")  # fmt: skip
    return Targets(spread, labels, sets=LabelSets(column, separator, tuple(labels)))


def _class_column(train: pd.DataFrame, candidates: list[str], classes: list[str]) -> str | None:
    """The column whose values are exactly the sample's class columns (a probability per class is submitted)."""
    wanted = set(classes)
    for column in candidates:
        if set(train[column].dropna().astype(str).unique()) == wanted:
            return column
    return None
