"""Reading a competition's time: a time spec (a plain dict: `columns`, one time column or a year and a month
column, and their `format`) turned into datetimes, or numbers for a numeric time; rows ordered by it; the
steps of a seasonal cycle.

Self-contained (NumPy, pandas): our templates embed this source (`agent_k.ml.render`).
"""

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

MONTH_NAMES = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}
Floats = npt.NDArray[np.float64]


def parse_time(frame: pd.DataFrame, time: dict[str, Any]) -> pd.Series:
    """The rows' time: datetimes, or plain numbers for a numeric time (a year, a period index)."""
    columns, layout = list(time["columns"]), time["format"]
    values = frame[columns[0]]
    parsed: Any
    if layout == "year-month":
        months = frame[columns[1]]
        if not pd.api.types.is_numeric_dtype(months):
            months = months.astype(str).str[:3].str.lower().map(MONTH_NAMES)
        parts = pd.DataFrame({"year": pd.to_numeric(values, errors="coerce"), "month": months, "day": 1})
        parsed = pd.to_datetime(parts, errors="coerce")
    elif layout in ("yyyymmdd", "yyyymm"):
        text = pd.to_numeric(values, errors="coerce").astype("Int64").astype(str)
        parsed = pd.to_datetime(text, format="%Y%m%d" if layout == "yyyymmdd" else "%Y%m", errors="coerce")
    elif layout == "epoch":
        parsed = pd.to_datetime(pd.to_numeric(values, errors="coerce"), unit="s", errors="coerce")
    elif layout == "number":
        parsed = pd.to_numeric(values, errors="coerce").astype(float)
    else:
        parsed = pd.to_datetime(values.astype(str), errors="coerce", format="mixed")
    return pd.Series(parsed, index=frame.index)


def time_order(times: pd.Series) -> Floats:
    """A sortable number per row (seconds since 1970 for datetimes, whatever their resolution); missing times
    sort first."""
    if pd.api.types.is_datetime64_any_dtype(times):
        naive = times.dt.tz_convert(None) if times.dt.tz is not None else times
        seconds = (naive - pd.Timestamp("1970-01-01")).dt.total_seconds().to_numpy(dtype=float)
        return np.asarray(np.where(times.isna().to_numpy(), -np.inf, seconds), dtype=float)
    return np.asarray(np.nan_to_num(times.to_numpy(dtype=float), nan=-np.inf), dtype=float)


def season_of(times: pd.Series, steps: np.ndarray) -> int:
    """Steps per seasonal cycle, from the typical step between distinct times."""
    if not pd.api.types.is_datetime64_any_dtype(times) or len(steps) < 3:
        return 1
    days = float(np.median(np.diff(steps))) / 86_400
    for at_least, season in ((360, 1), (85, 4), (27, 12), (6.5, 52), (0.9, 7)):
        if days >= at_least:
            return season
    if not 1 / 96 <= days < 1:  # finer than 15 minutes: events, not a regular series
        return 1
    return max(1, round(1 / days))
