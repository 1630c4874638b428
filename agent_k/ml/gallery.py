"""What people look at in a media competition: a few training files per class (or across the target's range),
and the most confident out-of-fold mistakes of the chosen candidate, each as a small picture (a sound as its
spectrogram) with what it is and what was predicted."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pandas as pd

from agent_k.competition import Competition, TaskType
from agent_k.competition.metric_scoring import normalize_labels
from agent_k.events.models import GalleryItem

PER_CLASS, CLASSES, SPREAD, MISTAKES = 3, 6, 8, 8


def previews(folder: Path) -> dict[str, bytes]:
    """Every training row's preview the featurisation jobs made, by the row's id (as text)."""
    parts = [pd.read_parquet(p) for p in sorted(folder.glob("train-*.previews"))]
    if not parts:
        return {}
    frame = pd.concat(parts)
    return dict(zip(frame["id"].astype(str), frame["preview"], strict=True))


def _item(label: str, image: bytes) -> GalleryItem:
    return GalleryItem(label=label, image="data:image/jpeg;base64," + base64.b64encode(image).decode())


def examples(spec: Competition, train: pd.DataFrame, shown: dict[str, bytes]) -> list[GalleryItem]:
    """A few training files of the most common classes, or spread across the target's range."""
    ids = train[spec.id_column].astype(str)
    have = ids.isin(list(shown))
    if spec.task is TaskType.regression:
        rows = train[have].sort_values(spec.target)
        picked = rows.iloc[np.linspace(0, len(rows) - 1, min(SPREAD, len(rows))).astype(int)] if len(rows) else rows
        return [_item(f"{row[spec.target]:g}", shown[str(row[spec.id_column])]) for _, row in picked.iterrows()]
    if spec.task not in (TaskType.binary, TaskType.multiclass):
        return [_item("", shown[i]) for i in ids[have].head(SPREAD)]
    labels = normalize_labels(train[spec.target])
    items = []
    for label in labels[have].value_counts().index[:CLASSES]:
        for ident in ids[have & (labels == label)].head(PER_CLASS):
            items.append(_item(str(label), shown[ident]))
    return items


def mistakes(spec: Competition, train: pd.DataFrame, oof: pd.DataFrame, shown: dict[str, bytes]) -> list[GalleryItem]:
    """The out-of-fold predictions furthest from the truth: confident wrong classes, or the largest errors."""
    truth = train.set_index(train[spec.id_column].astype(str))
    oof = oof.assign(**{spec.id_column: oof[spec.id_column].astype(str)})
    oof = oof[oof[spec.id_column].isin(list(shown)) & oof[spec.id_column].isin(truth.index)]
    if oof.empty:
        return []
    actual = truth.loc[oof[spec.id_column]]
    if spec.task is TaskType.regression:
        error = (oof[spec.target].to_numpy() - actual[spec.target].to_numpy()).astype(float)
        worst = np.argsort(-np.abs(error))[:MISTAKES]
        return [_item(f"{actual[spec.target].iloc[i]:g}, predicted {oof[spec.target].iloc[i]:.3g}",
                      shown[oof[spec.id_column].iloc[i]]) for i in worst]  # fmt: skip
    classes = [c for c in spec.classes or [] if c in oof.columns]
    if spec.task not in (TaskType.binary, TaskType.multiclass) or not classes:
        return []
    probabilities = oof[classes].to_numpy(dtype=float)
    predicted = np.asarray(classes)[probabilities.argmax(axis=1)]
    labels = normalize_labels(actual[spec.target]).to_numpy()
    wrong = np.flatnonzero(predicted != labels)
    confidence = probabilities.max(axis=1)
    worst = wrong[np.argsort(-confidence[wrong])][:MISTAKES]
    return [_item(f"{labels[i]}, predicted {predicted[i]} ({confidence[i]:.0%})", shown[oof[spec.id_column].iloc[i]])
            for i in worst]  # fmt: skip
