"""What shape a competition's tables have, for Research: free text, the rows' time and whether the test rows
are a forecast, the series keys, and repeated entities that must not straddle folds."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from agent_k.competition import Competition
from agent_k.competition.columns import PARSED_SHARE, integer_time_format, time_format
from agent_k.competition.kinds import TimeFormat
from agent_k.competition.levels import row_keys
from agent_k.competition.research import ColumnProfile, TimeStructure
from agent_k.competition.timing import parse_time, season_of, time_order

FORECAST_SHARE = 0.95
"""A forecast: at least this share of the test rows lie after the last training time (of their series)."""
MAX_KEYS = 3
GROUP_NAMES = re.compile(
    r"(^|_)(id|user|patient|subject|customer|client|store|shop|group|household|person|account|player|"
    r"session|device|site|author|driver|item|product|sku|family|team)s?($|_|id)",
    re.IGNORECASE,
)
UNSEEN_GROUPS = 0.5
"""Grouped folds when at least this share of the test rows belongs to entities training never saw."""


@dataclass(frozen=True)
class TimeCandidate:
    columns: list[str]
    format: TimeFormat

    def spec(self) -> dict[str, Any]:
        return {"columns": self.columns, "format": self.format}


def time_candidates(frame: pd.DataFrame, columns: list[ColumnProfile], hint: str | None) -> list[TimeCandidate]:
    """Ways the rows could be timed: a date column, integer dates, a year and a month column."""
    found: list[TimeCandidate] = []
    if hint and hint in frame.columns:
        found.append(TimeCandidate([hint], time_format(frame[hint])))
    for column in columns:
        if column.kind == "datetime":
            found.append(TimeCandidate([column.name], "datetime"))
        elif (layout := integer_time_format(frame[column.name], column.name)) is not None:
            found.append(TimeCandidate([column.name], layout))
    names = {c.name.lower(): c.name for c in columns}
    if "year" in names and "month" in names:
        found.append(TimeCandidate([names["year"], names["month"]], "year-month"))
    elif "year" in names and pd.api.types.is_integer_dtype(frame[names["year"]]) and _years(frame[names["year"]]):
        found.append(TimeCandidate([names["year"]], "number"))
    return found


def _years(values: pd.Series) -> bool:
    return bool(values.dropna().between(1000, 3000).all())


def find_time(
    spec: Competition, train: pd.DataFrame, test: pd.DataFrame, columns: list[ColumnProfile], skip: set[str]
) -> TimeStructure | None:
    """The rows' time and what it means for validation; None when nothing orders the rows."""
    best: TimeStructure | None = None
    for candidate in time_candidates(train, columns, spec.time_column):
        structure = _structure(spec, train, test, columns, candidate, skip)
        if structure is not None and (best is None or (structure.forecast and not best.forecast)):
            best = structure
    return best


def _structure(
    spec: Competition,
    train: pd.DataFrame,
    test: pd.DataFrame,
    columns: list[ColumnProfile],
    candidate: TimeCandidate,
    skip: set[str],
) -> TimeStructure | None:
    time = candidate.spec()
    if not set(candidate.columns) <= set(test.columns):
        return None
    train_time, test_time = time_order(parse_time(train, time)), time_order(parse_time(test, time))
    parsed = np.isfinite(train_time).mean() >= PARSED_SHARE
    if not parsed or (len(test_time) and np.isfinite(test_time).mean() < PARSED_SHARE):
        return None
    used = set(candidate.columns) | skip
    keys = (spec.series_keys or []) if spec.series_keys else _series_keys(train, train_time, columns, used)
    unique = _unique(train, train_time, keys)
    later = _share_after(train, test, train_time, test_time, keys)
    steps = np.unique(train_time[np.isfinite(train_time)])
    forecast = later >= FORECAST_SHARE
    horizon = len(np.unique(test_time[np.isfinite(test_time)])) if forecast else 1
    season = season_of(parse_time(train, time), steps)
    names = " and ".join(candidate.columns)
    if forecast:
        series = f"{len(train[keys].drop_duplicates()) if keys else 1} series ({', '.join(keys) or 'one'})"
        reason = (
            f"{later:.0%} of the test rows lie after the last training time ({names}): a forecast of {horizon} "
            f"steps, {series}; forward-chaining folds score the {horizon} steps after each training window"
        )
    else:
        reason = (
            f"the rows are timed by {names}, but only {later:.0%} of the test rows lie after the training rows: "
            "they interleave, so shuffled folds validate as the test is drawn"
        )
    return TimeStructure(
        columns=candidate.columns,
        format=candidate.format,
        forecast=forecast,
        keys=keys,
        unique=unique,
        horizon=max(1, horizon),
        season=season,
        reason=reason,
    )


def _unique(frame: pd.DataFrame, order: np.ndarray, keys: list[str]) -> bool:
    table = frame[keys].astype(str).assign(_t=order) if keys else pd.DataFrame({"_t": order})
    return not bool(table.duplicated().any())


def _series_keys(frame: pd.DataFrame, order: np.ndarray, columns: list[ColumnProfile], used: set[str]) -> list[str]:
    """The fewest category-like columns that, with time, identify the rows (at most three)."""
    if _unique(frame, order, []):
        return []
    options = [
        c.name
        for c in columns
        if c.name not in used
        and c.kind != "text"
        and (c.kind == "categorical" or c.code)
        and c.n_unique > 1
        and c.n_unique <= len(frame) // 2
    ]
    options.sort(key=lambda name: frame[name].nunique())
    for size in range(1, MAX_KEYS + 1):
        for combination in itertools.combinations(options[:8], size):
            if _unique(frame, order, list(combination)):
                return list(combination)
    return []


def _share_after(
    train: pd.DataFrame, test: pd.DataFrame, train_time: np.ndarray, test_time: np.ndarray, keys: list[str]
) -> float:
    """The share of test rows later than the last training time of their series (of all rows, without keys)."""
    if not len(test_time):
        return 0.0
    if not keys:
        return float(np.mean(test_time > np.max(train_time)))
    last = pd.Series(train_time).groupby(row_keys(train, keys).to_numpy()).max()
    series = row_keys(test, keys).to_numpy()
    cutoff = pd.Series(series).map(last).to_numpy(dtype=float)
    return float(np.mean(np.where(np.isnan(cutoff), True, test_time > cutoff)))


def group_candidates(
    train: pd.DataFrame, test: pd.DataFrame, columns: list[ColumnProfile], skip: set[str]
) -> dict[str, float]:
    """Columns of repeated entities (named like one, or codes), each with the share of test rows whose entity
    training never saw: near 1, the test is new entities, and folds must hold entities out as it does."""
    found: dict[str, float] = {}
    for column in columns:
        if column.name in skip or column.kind in ("text", "datetime") or column.name not in test.columns:
            continue
        repeats = len(train) / max(1, column.n_unique)
        named = bool(GROUP_NAMES.search(column.name))
        if column.n_unique < 10 or repeats < 2 or not (named or column.code):
            continue
        seen = set(train[column.name].dropna().astype(str))
        found[column.name] = round(float((~test[column.name].astype(str).isin(seen)).mean()), 4)
    return found


def grouping(candidates: dict[str, float]) -> tuple[str | None, str]:
    """The entity to group folds by, and why (or why none)."""
    if not candidates:
        return None, ""
    column, unseen = max(candidates.items(), key=lambda item: item[1])
    if unseen >= UNSEEN_GROUPS:
        return column, (
            f"{unseen:.0%} of the test rows belong to '{column}' values training never saw: grouped folds hold "
            f"each '{column}' out together, as the test does"
        )
    return (
        None,
        f"'{column}' repeats, but {1 - unseen:.0%} of the test rows share a training '{column}': ordinary folds",
    )
