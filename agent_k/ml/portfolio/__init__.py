"""The start portfolio: configurations of each model family learned offline on a few hundred tables that ship in a
package (`agent_k.ml.portfolio.build`; the tables are listed in `tables.csv`), shipped as data (`portfolio.json`).

A search that starts from hand-picked defaults spends its first generations finding what is usually good. Here the
first generations draw from what was: on the tables nearest this one in size and shape (rows, columns, the share of
categorical ones, the kind of task), each family starts from the configuration that came closest to the best there
(FLAML's zero-shot defaults), and the next candidates are the configurations that together cover those tables best,
chosen greedily (AutoGluon's portfolios). Only plain tables: text, media and forecasts keep their own defaults.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from agent_k.competition import Competition, TaskType
from agent_k.competition.research import ResearchFindings
from agent_k.ml.families import ModelFamily
from agent_k.ml.params import ParamValue

NEIGHBOURS = 30
"""Tables of the same kind of task the portfolio is chosen on."""
SIZE_REACH = 2
"""The portfolio serves tables of up to this many times the rows of its largest (its tables were capped at 3,000
rows for the build's sake); larger ones start from the families' defaults."""
MAX_SLOWDOWN = 3.0
"""A configuration whose median time there is more than this many times its family's defaults' is left out: the
first generations must stay cheap."""

Config = tuple[ModelFamily, dict[str, ParamValue]]


@dataclass(frozen=True)
class TableShape:
    """What the portfolio is chosen by: a table's size and shape."""

    rows: int
    features: int
    categorical: float
    """The share of categorical feature columns."""
    task: str
    """binary, multiclass or regression."""

    def point(self) -> np.ndarray:
        return np.array([math.log10(max(self.rows, 1)), math.log10(self.features + 1), self.categorical])


def table_shape(findings: ResearchFindings, competition: Competition, drop: Sequence[str]) -> TableShape | None:
    """The shape of a plain table's features (those left after `drop`); None for text, media, a forecast or a task
    of several targets, which the portfolio was not learned on."""
    plain = competition.task in (TaskType.binary, TaskType.multiclass, TaskType.regression)
    if not plain or findings.text_columns or findings.media is not None or findings.cv.kind == "forward":
        return None
    usable = [c for c in findings.columns if c.name not in {*drop, *findings.id_like}]
    categorical = sum(c.kind == "categorical" for c in usable) / max(1, len(usable))
    return TableShape(findings.n_train, len(usable), round(categorical, 3), competition.task.value)


@dataclass(frozen=True)
class Portfolio:
    configs: list[Config]
    shapes: list[TableShape]
    errors: np.ndarray
    """One row per table, one column per configuration: the error normalised on that table (0 the best
    configuration there, 1 the median or worse)."""
    relative_seconds: np.ndarray
    """Per table and configuration: the time against the family's defaults on that table."""

    def nearest(self, shape: TableShape) -> np.ndarray:
        """The tables of the same kind of task nearest `shape` (standardised distance of the shape's point); none
        for a table far larger than any it was learned on (what suits 3,000 rows may underfit 300,000)."""
        same = np.array([i for i, s in enumerate(self.shapes) if s.task == shape.task], dtype=int)
        if len(same) == 0 or shape.rows > SIZE_REACH * max(s.rows for s in self.shapes):
            return np.array([], dtype=int)
        points = np.array([self.shapes[i].point() for i in same])
        scale = points.std(axis=0) + 1e-6
        distance = np.linalg.norm((points - shape.point()) / scale, axis=1)
        return same[np.argsort(distance, kind="stable")[:NEIGHBOURS]]

    def eligible(self, tables: np.ndarray, families: Sequence[ModelFamily]) -> list[int]:
        wanted = set(families)
        slowdown = np.median(self.relative_seconds[tables], axis=0)
        return [i for i, (family, _) in enumerate(self.configs) if family in wanted and slowdown[i] <= MAX_SLOWDOWN]

    def greedy(self, tables: np.ndarray, candidates: list[int], size: int) -> list[int]:
        """Configurations that together come closest to the best on `tables`: each next one the one that lowers the
        tables' mean of their best error so far the most (Caruana's selection over configurations)."""
        errors = self.errors[np.ix_(tables, np.array(candidates, dtype=int))]
        chosen: list[int] = []
        best = np.ones(len(tables))
        for _ in range(min(size, len(candidates))):
            gains = np.minimum(errors, best[:, None]).mean(axis=0)
            gains[[candidates.index(c) for c in chosen]] = np.inf
            pick = int(np.argmin(gains))
            chosen.append(candidates[pick])
            best = np.minimum(best, errors[:, pick])
        return chosen


@cache
def load_portfolio() -> Portfolio | None:
    """The shipped portfolio (read once per process); None where the package holds none."""
    source = resources.files(__name__).joinpath("portfolio.json")
    if not source.is_file():
        return None
    data = json.loads(source.read_text(encoding="utf-8"))
    return Portfolio(
        configs=[(ModelFamily(c["family"]), dict(c["params"])) for c in data["configs"]],
        shapes=[TableShape(t["rows"], t["features"], t["categorical"], t["task"]) for t in data["tasks"]],
        errors=np.array(data["errors"], dtype=float),
        relative_seconds=np.array(data["relative_seconds"], dtype=float),
    )


def family_starts(shape: TableShape, families: Sequence[ModelFamily]) -> dict[ModelFamily, dict[str, ParamValue]]:
    """Each family's learned start for a table of this shape: its configuration with the lowest mean error on the
    nearest tables (the families the portfolio knows; none for a task kind it has no tables of)."""
    portfolio = load_portfolio()
    if portfolio is None:
        return {}
    tables = portfolio.nearest(shape)
    if len(tables) == 0:
        return {}
    starts: dict[ModelFamily, dict[str, ParamValue]] = {}
    for family in families:
        own = portfolio.eligible(tables, [family])
        if own:
            means = portfolio.errors[np.ix_(tables, np.array(own, dtype=int))].mean(axis=0)
            starts[family] = portfolio.configs[own[int(np.argmin(means))]][1]
    return starts


def start_portfolio(shape: TableShape, families: Sequence[ModelFamily], size: int) -> list[Config]:
    """Up to `size` configurations of `families` that together cover the nearest tables best, in greedy order."""
    portfolio = load_portfolio()
    if portfolio is None:
        return []
    tables = portfolio.nearest(shape)
    if len(tables) == 0:
        return []
    chosen = portfolio.greedy(tables, portfolio.eligible(tables, families), size)
    return [portfolio.configs[i] for i in chosen]
