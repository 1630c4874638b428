"""Tables as competitions ship them: CSV, TSV, Parquet, JSON arrays or JSON lines, nested fields flattened."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

TABLES = (".csv", ".tsv", ".json", ".jsonl", ".ndjson", ".parquet")
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
        return _without_written_index(pd.read_csv(path, sep="\t" if suffix == ".tsv" else ","))
    try:
        return _json_records(path.read_text())
    except RecursionError:
        raise ValueError("its JSON is nested too deeply to be a table") from None


def read_as_written(path: Path) -> pd.DataFrame:
    """A table as `read_records` reads it, but every CSV or TSV value as the file spells it (`0013`, not 13)."""
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv"):
        return read_records(path)
    text = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
    return _without_written_index(text)


def _without_written_index(frame: pd.DataFrame) -> pd.DataFrame:
    """The table without the index pandas wrote into it (`to_csv(index=True)`): a first column with no name whose
    values count the rows from 0 (as numbers, or as text). A named column, or one holding anything else, stays."""
    first = str(frame.columns[0]) if len(frame.columns) > 1 else ""
    if not first.startswith("Unnamed: 0"):
        return frame
    counts = pd.to_numeric(frame[first], errors="coerce")
    counting = counts.notna().all() and (counts.to_numpy() == range(len(frame))).all()
    return frame.drop(columns=[first]) if counting else frame


def _json_records(text: str) -> pd.DataFrame:
    try:
        records = json.loads(text)
    except json.JSONDecodeError:
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
    if isinstance(records, dict) and (coco := _coco_images(records)) is not None:
        records = coco
    elif isinstance(records, dict):
        records = next((v for v in records.values() if isinstance(v, list)), [records])
    frame = pd.json_normalize(records, max_level=MAX_JSON_LEVELS)
    for column in list(frame.columns):
        if not frame[column].map(lambda v: isinstance(v, list)).any():
            continue
        if frame[column].map(_numbers).all():
            frame = frame.drop(columns=column).join(_summaries(frame[column], str(column)))
        else:
            frame[column] = frame[column].map(lambda v: " ".join(map(str, v)) if isinstance(v, list) else v)
    return frame


def _coco_images(document: dict[str, object]) -> list[dict[str, object]] | None:
    """COCO-style metadata (`images`, and in training `annotations` of `image_id` and `category_id`): a record per
    image, with the `category_id` of its first annotation where it has annotations; images without one are not
    training rows then. An image's key is `id` (COCO's) or `image_id` (herbarium 2022's). None where the document
    is not shaped so."""
    images, annotations = document.get("images"), document.get("annotations")
    if not isinstance(images, list) or not images or not all(isinstance(i, dict) for i in images):
        return None
    key = next((k for k in ("id", "image_id") if all(isinstance(i.get(k), str | int) for i in images)), None)
    if key is None:
        return None
    if not isinstance(annotations, list) or not annotations:
        return images
    category: dict[object, object] = {}
    for annotation in annotations:
        labelled = isinstance(annotation, dict) and "category_id" in annotation
        if not labelled or not isinstance(annotation.get("image_id"), str | int):
            return None
        category.setdefault(annotation["image_id"], annotation["category_id"])
    return [{**image, "category_id": category[image[key]]} for image in images if image[key] in category]


SUMMARIES = ("mean", "std", "min", "q10", "q50", "q90", "max")
"""What a field holding a list of numbers a row (a signal, the pixels of a radar band) becomes: columns a table's
models read, where the numbers as text would be words."""


def _numbers(value: object) -> bool:
    """A list of at least two numbers (not booleans), or nothing."""
    if not isinstance(value, list):
        return value is None or value != value  # a missing value
    return len(value) >= 2 and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)


def _summaries(values: pd.Series, name: str) -> pd.DataFrame:
    import numpy as np

    def summary(value: object) -> list[float]:
        if not isinstance(value, list):
            return [float("nan")] * len(SUMMARIES)
        array = np.asarray(value, dtype=float)
        q10, q50, q90 = np.quantile(array, [0.1, 0.5, 0.9])
        return [array.mean(), array.std(), array.min(), q10, q50, q90, array.max()]

    rows = [summary(value) for value in values]
    return pd.DataFrame(rows, index=values.index, columns=[f"{name}_{s}" for s in SUMMARIES])


def match_column(frame: pd.DataFrame, name: str) -> str | None:
    """`name`, or the one column spelled like it but for case and separators."""
    if name in frame.columns:
        return name

    def squash(text: str) -> str:
        return re.sub(r"[^a-z0-9]", "", text.lower())

    same = [c for c in frame.columns if squash(str(c)) == squash(name)]
    return str(same[0]) if len(same) == 1 else None


def peek_columns(path: Path) -> list[str]:
    """A table's column names, reading as little of it as its format allows."""
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return [str(c) for c in pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", nrows=0).columns]
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    return [str(c) for c in read_records(path).columns]
