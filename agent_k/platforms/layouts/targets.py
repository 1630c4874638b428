"""Which training columns are the target: named by the user, read off the sample submission's columns, or
recognised by their values (one-hot columns, a column whose values are the sample's class columns)."""

from __future__ import annotations

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


def resolve_targets(
    slug: str, train: pd.DataFrame, test: pd.DataFrame, predicted: list[str], given: list[str] | None, notes: list[str]
) -> tuple[pd.DataFrame, list[str], list[str] | None]:
    """The training table (its target columns named as the submission names them), which columns those are, and
    the classes when the submission wants one column per class."""
    if given:
        missing = [t for t in given if t not in train.columns]
        if missing:
            raise LayoutError(f"'{slug}': the target '{missing[0]}' is not a training column")
        if len(given) == 1 and len(predicted) == 1 and predicted[0] not in train.columns:
            notes.append(f"the target '{given[0]}' is submitted as '{predicted[0]}'")
            return train.rename(columns={given[0]: predicted[0]}), predicted, None
        return train, given, None
    only = [str(c) for c in train.columns if c not in test.columns]
    in_train = [c for c in predicted if c in only]
    if len(predicted) == 1 and not in_train:
        if len(only) == 1:
            notes.append(f"the target '{only[0]}' is submitted as '{predicted[0]}'")
            return train.rename(columns={only[0]: predicted[0]}), predicted, None
        if only:
            raise LayoutError(f"'{slug}': which training column is '{predicted[0]}'? {len(only)} columns are only "
                              f"in training ({listed(only)}): name it with --target")  # fmt: skip
    if in_train == predicted and len(predicted) > 1 and is_one_hot(train[predicted]):
        label = "label" if "label" not in train.columns else "target_label"
        train = train.drop(columns=predicted).assign(**{label: from_one_hot(train[predicted])})
        notes.append(f"the target, given as {len(predicted)} one-hot columns, is read as the class '{label}'")
        return train, [label], predicted
    if in_train == predicted:
        return train, predicted, None
    if found := _class_column(train, only, predicted):
        return train, [found], predicted
    if sets := _label_sets(train, only, predicted):
        column, separator = sets
        labels = _split_sets(train[column], separator)
        train = train.drop(columns=column).assign(**{c: labels.map(lambda row, c=c: int(c in row)) for c in predicted})
        notes.append(f"the target, given as sets of labels in '{column}' (separated by '{separator}'), is read as "
                     f"{len(predicted)} 0/1 columns, one per label")  # fmt: skip
        return train, predicted, None
    raise LayoutError(f"'{slug}': no training column holds what the sample submission predicts ({predicted})")


SEPARATORS = (",", " ", ";", "|")
MIN_SET_COVER = 0.5
"""A column of label sets must name at least this share of the sample's label columns."""


def _split_sets(values: pd.Series, separator: str) -> pd.Series:
    return values.fillna("").astype(str).map(lambda text: frozenset(t.strip() for t in text.split(separator)) - {""})


def _label_sets(train: pd.DataFrame, candidates: list[str], labels: list[str]) -> tuple[str, str] | None:
    """The column, and its separator, whose values are sets of the sample's label columns (`Bark,Meow`): a target
    with several labels a row, submitted as a column per label (freesound-audio-tagging, plant-pathology)."""
    wanted = set(labels)
    if len(wanted) < 2:
        return None
    for column in candidates:
        if not pd.api.types.is_string_dtype(train[column]) and train[column].dtype != object:
            continue
        for separator in SEPARATORS:
            sets = _split_sets(train[column], separator)
            named = frozenset().union(*sets)
            if named <= wanted and len(named) >= MIN_SET_COVER * len(wanted) and (sets.map(len) > 1).any():
                return column, separator
    return None


def _class_column(train: pd.DataFrame, candidates: list[str], classes: list[str]) -> str | None:
    """The column whose values are exactly the sample's class columns (a probability per class is submitted)."""
    wanted = set(classes)
    for column in candidates:
        if set(train[column].dropna().astype(str).unique()) == wanted:
            return column
    return None
