"""Forecasting: the features a forecast may use, and the naive forecasts.

A time spec (`agent_k.competition.timing`) is a plain dict rendered into scripts as a constant; for a forecast
it also holds `keys` (the series' columns), `horizon` (steps forecast) and
`season` (steps per seasonal cycle). Every feature of a row comes from targets at least `horizon` steps before
it, so a row to forecast (at most `horizon` steps after the last known target) sees only known history, in
cross-validation and on the test rows alike.

Self-contained (NumPy, pandas, and the levels and timing modules embedded before it): our templates embed this source
(`agent_k.ml.render`).
"""

import numpy as np
import numpy.typing as npt
import pandas as pd

from agent_k.competition.levels import row_keys
from agent_k.competition.timing import Floats


def calendar(times: pd.Series) -> pd.DataFrame:
    """Calendar parts of datetimes (a numeric time is its own single feature)."""
    if not pd.api.types.is_datetime64_any_dtype(times):
        return pd.DataFrame({"time": times.to_numpy(dtype=float)})
    parts = {
        "year": times.dt.year,
        "month": times.dt.month,
        "day": times.dt.day,
        "day_of_week": times.dt.dayofweek,
        "day_of_year": times.dt.dayofyear,
        "hour": times.dt.hour + times.dt.minute / 60,
    }
    frame = pd.DataFrame({name: values.astype(float) for name, values in parts.items()})
    return frame.loc[:, frame.nunique() > 1]


def lags_for(horizon: int, season: int) -> list[int]:
    """Lags of at least the horizon: the nearest three, and the nearest one or two seasons back."""
    seasonal = season * int(np.ceil(horizon / max(1, season)))
    return sorted({horizon, horizon + 1, horizon + 2, seasonal, seasonal + season} - {0})


class Grid:
    """The known targets as a series-by-step matrix (unknown cells NaN), and where each row sits in it."""

    def __init__(self, frame: pd.DataFrame, target: pd.Series, keys: list[str], order: Floats) -> None:
        self.steps = np.unique(order[np.isfinite(order)])
        self.step = np.searchsorted(self.steps, order)
        series = row_keys(frame, keys)
        self.names, self.series = np.unique(series.to_numpy(), return_inverse=True)
        self.values = np.full((len(self.names), len(self.steps)), np.nan)
        known = target.notna().to_numpy()
        self.values[self.series[known], self.step[known]] = target.to_numpy(dtype=float)[known]

    def only(self, rows: npt.NDArray[np.bool_]) -> "Grid":
        """A copy that knows only the targets of `rows` (a fold's training rows, say)."""
        copy = Grid.__new__(Grid)
        copy.__dict__.update(self.__dict__)
        copy.values = np.full(self.values.shape, np.nan)
        copy.values[self.series[rows], self.step[rows]] = self.values[self.series[rows], self.step[rows]]
        return copy

    def at(self, matrix: Floats, lag: int) -> Floats:
        """Each row's value `lag` steps before it in `matrix` (NaN before the start)."""
        positions = self.step - lag
        inside = positions >= 0
        result = np.full(len(positions), np.nan)
        result[inside] = matrix[self.series[inside], positions[inside]]
        return result

    def rolling_mean(self, window: int) -> Floats:
        """Each cell: the mean of the known values in the `window` steps up to and including it."""
        known = np.isfinite(self.values)
        sums = np.cumsum(np.where(known, self.values, 0.0), axis=1)
        counts = np.cumsum(known, axis=1)
        shifted_sums = np.pad(sums, ((0, 0), (window, 0)))[:, : sums.shape[1]]
        shifted_counts = np.pad(counts, ((0, 0), (window, 0)))[:, : counts.shape[1]]
        n = counts - shifted_counts
        return np.where(n > 0, (sums - shifted_sums) / np.maximum(n, 1), np.nan)

    def last_known(self) -> Floats:
        """Each cell: the last known value at or before it (carried forward)."""
        filled = pd.DataFrame(self.values.T).ffill().to_numpy().T
        return np.asarray(filled, dtype=float)


def lag_features(grid: Grid, horizon: int, season: int) -> pd.DataFrame:
    """Per row: target lags of at least the horizon, rolling means ending `horizon` steps back, the level (the
    last seasonal cycle's mean as of then) and the elapsed steps."""
    features = {f"lag_{lag}": grid.at(grid.values, lag) for lag in lags_for(horizon, season)}
    for window in sorted({max(3, season), 2 * max(3, season)}):
        features[f"mean_{window}_at_{horizon}"] = grid.at(grid.rolling_mean(window), horizon)
    features["level"] = features[f"mean_{max(3, season)}_at_{horizon}"]
    features["last"] = grid.at(grid.last_known(), horizon)
    features["elapsed"] = grid.step.astype(float)
    return pd.DataFrame(features)


def naive(grid: Grid, rows: npt.NDArray[np.bool_], method: str, season: int) -> Floats:
    """The naive forecast of `rows` from the targets known in `grid` (the rows' own must be unknown there):
    the last known value, the value one (or more) seasons back, or the mean of the last season."""
    last = grid.last_known()
    if method == "last":
        return grid.at(last, 1)[rows]
    if method == "mean":
        return grid.at(_filled_mean(grid, max(1, season)), 1)[rows]
    forecast = np.full(int(rows.sum()), np.nan)
    for cycles in range(1, 1 + len(grid.steps) // max(1, season)):
        missing = np.isnan(forecast)
        if not missing.any():
            break
        forecast[missing] = grid.at(grid.values, cycles * season)[rows][missing]
    still = np.isnan(forecast)
    forecast[still] = grid.at(last, 1)[rows][still]
    return forecast


def _filled_mean(grid: Grid, window: int) -> Floats:
    """Each cell: the mean of the last `window` known values at or before it."""
    result = np.full(grid.values.shape, np.nan)
    for s in range(grid.values.shape[0]):
        row = grid.values[s]
        known = np.flatnonzero(np.isfinite(row))
        if not len(known):
            continue
        sums = np.r_[0.0, np.cumsum(row[known])]
        upto = np.searchsorted(known, np.arange(len(row)), side="right")
        start = np.maximum(0, upto - window)
        count = upto - start
        result[s] = np.where(count > 0, (sums[upto] - sums[start]) / np.maximum(count, 1), np.nan)
    return result


def to_relative(values: Floats, level: Floats, how: str) -> Floats:
    """A target relative to the series' level (so trees can follow a trend past the last training date)."""
    base = np.where(np.isfinite(level), level, np.nanmean(level) if np.isfinite(level).any() else 0.0)
    if how == "ratio":
        return values / np.where(np.abs(base) > 1e-9, base, 1.0)
    if how == "difference":
        return values - base
    return values


def from_relative(values: Floats, level: Floats, how: str) -> Floats:
    base = np.where(np.isfinite(level), level, np.nanmean(level) if np.isfinite(level).any() else 0.0)
    if how == "ratio":
        return values * np.where(np.abs(base) > 1e-9, base, 1.0)
    if how == "difference":
        return values + base
    return values
