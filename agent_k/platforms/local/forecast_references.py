"""A forecast's reference teams: the naive forecasts of each series, and gradient boosting on lags.

Both read each series' training values only, at the test rows' future times. Written apart from the mission's
own forecasting code, so that a board built with them does not grade that code by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from agent_k.competition.levels import row_keys
from agent_k.competition.timing import parse_time, season_of, time_order
from agent_k.platforms.local.materialise import PreparedCompetition

MAX_SHORT_LAGS = 12
SEASONS_BACK = 3
NaiveMethod = Literal["last", "seasonal", "mean"]
NAIVE_METHODS: tuple[NaiveMethod, ...] = ("last", "seasonal", "mean")


@dataclass(frozen=True)
class _Series:
    """Every row's series and step (training rows first, then the test rows), and the training values."""

    series: pd.Series
    step: np.ndarray
    season: int
    n_train: int
    known: pd.DataFrame
    """The training rows with a value: series, step, y, ordered by step."""
    values: pd.Series
    """The training value of each (series, step) (their mean where several rows share one)."""

    @classmethod
    def of(cls, prepared: PreparedCompetition, time: dict[str, Any]) -> _Series:
        history = pd.concat([prepared.train, prepared.test], ignore_index=True)
        times = parse_time(history, time)
        order = time_order(times)
        steps = np.unique(order[np.isfinite(order)])
        step = np.searchsorted(steps, order)
        series = row_keys(history, list(time.get("keys", [])))
        n_train = len(prepared.train)
        y = prepared.train[prepared.spec.target].to_numpy()
        known = pd.DataFrame({"series": series[:n_train].to_numpy(), "step": step[:n_train], "y": y})
        known = known.dropna(subset=["y"]).sort_values("step", kind="stable")
        values = known.groupby(["series", "step"])["y"].mean()
        return cls(series, step, max(1, season_of(times, steps)), n_train, known, values)

    @property
    def last_step(self) -> pd.Series:
        return self.known.groupby("series")["step"].max()

    def value_at(self, series: pd.Series, step: np.ndarray) -> np.ndarray:
        """Each (series, step)'s training value, NaN where there is none."""
        wanted = pd.MultiIndex.from_arrays([series.to_numpy(), step])
        return self.values.reindex(wanted).to_numpy(dtype=float)


def naive_forecast(prepared: PreparedCompetition, time: dict[str, Any], method: NaiveMethod) -> pd.DataFrame:
    """Each series' last value (`last`), its value one or more seasons before the forecast time (`seasonal`), or
    its last season's mean (`mean`)."""
    rows = _Series.of(prepared, time)
    known, season = rows.known, rows.season
    by_series = known.groupby("series")
    fallback = float(known["y"].mean())
    series = rows.series[rows.n_train :].reset_index(drop=True)
    lasts = series.map(by_series["y"].last()).fillna(fallback).to_numpy(dtype=float)
    if method == "last":
        values = lasts
    elif method == "mean":
        recent = by_series["y"].apply(lambda y: y.tail(season).mean())
        values = series.map(recent).fillna(fallback).to_numpy(dtype=float)
    else:
        step = rows.step[rows.n_train :]
        ahead = step - series.map(rows.last_step).fillna(pd.Series(step - 1)).to_numpy()
        cycles = np.ceil(np.clip(ahead, 1, None) / season).astype(int)
        seasonal = rows.value_at(series, step - cycles * season)
        values = np.where(np.isnan(seasonal), lasts, seasonal)
    return pd.DataFrame({prepared.spec.target: values})


def lag_features(prepared: PreparedCompetition, time: dict[str, Any]) -> tuple[pd.DataFrame, np.ndarray]:
    """Lags every test row can know, for every row (training rows first, then the test rows), and each row's step.

    A row's lags are its series' values at least `horizon` steps back, the farthest any test row lies ahead of its
    series' last training value: a few in a row, the same point of the last seasons, and the mean of one season
    before the horizon; beside the row's point in its season."""
    rows = _Series.of(prepared, time)
    season, test_series = rows.season, rows.series[rows.n_train :]
    last = test_series.map(rows.last_step).to_numpy(dtype=float)
    ahead = rows.step[rows.n_train :] - np.nan_to_num(last, nan=-1.0)
    horizon = int(max(1, np.max(ahead, initial=1)))
    seasonal = int(np.ceil(horizon / season)) * season
    backs = [horizon + j for j in range(min(MAX_SHORT_LAGS, max(season, 3)))]
    backs += [seasonal + c * season for c in range(SEASONS_BACK)]
    columns = {f"lag_{back}": rows.value_at(rows.series, rows.step - back) for back in dict.fromkeys(backs)}
    window = np.column_stack([rows.value_at(rows.series, rows.step - horizon - j) for j in range(season)])
    counts = (~np.isnan(window)).sum(axis=1)
    columns["season_mean"] = np.where(counts > 0, np.nansum(window, axis=1) / np.maximum(counts, 1), np.nan)
    columns["season_point"] = (rows.step % season).astype(float)
    return pd.DataFrame(columns), rows.step
