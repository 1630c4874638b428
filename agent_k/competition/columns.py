"""What a column's values are: free text (words, many distinct values), dates written as text, or integers that
are dates. Research profiles columns with these; the local platform reads the rows' time and picks its text
baselines' columns with them too."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from agent_k.competition.kinds import TimeFormat

TEXT_MIN_WORDS = 3.0
TEXT_MIN_DISTINCT = 0.2
SAMPLE_ROWS = 2000
PARSED_SHARE = 0.95
MONTH = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b", re.IGNORECASE)


def looks_like_text(values: pd.Series) -> bool:
    """Free text: several words a row on average, and many distinct values (unlike a category or an id)."""
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return False
    present = values.dropna().astype(str)
    if present.empty:
        return False
    sample = present.head(SAMPLE_ROWS)
    words = float(sample.str.count(r"\S+").mean())
    distinct = present.nunique() / len(present)
    return words >= TEXT_MIN_WORDS and distinct >= TEXT_MIN_DISTINCT


def looks_like_dates(values: pd.Series) -> bool:
    """Text that parses as dates in at least 95% of a sample: ISO (`2015-03-01`, `2015-03`), day/month layouts,
    or a month named beside a year (`1990 Jan`, `Jan 1990`)."""
    sample = values.dropna().astype(str).head(SAMPLE_ROWS)
    if sample.empty:
        return False
    digits = sample.str.contains(r"\d{1,4}[-/.]\d{1,2}", regex=True)
    named = sample.str.contains(MONTH, regex=True) & sample.str.contains(r"\d{4}", regex=True)
    if not (digits | named).all():
        return False
    parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    return bool(parsed.notna().mean() >= PARSED_SHARE)


def integer_time_format(values: pd.Series, name: str) -> TimeFormat | None:
    """Integers that are dates: 20150131, 201501, or seconds since 1970 (named like a time)."""
    if not pd.api.types.is_integer_dtype(values) or values.dropna().empty:
        return None
    sample = values.dropna().head(SAMPLE_ROWS)
    text = sample.astype(str)
    layouts: tuple[tuple[TimeFormat, int, str], ...] = (("yyyymmdd", 8, "%Y%m%d"), ("yyyymm", 6, "%Y%m"))
    for layout, length, pattern in layouts:
        if (text.str.len() == length).all():
            parsed = pd.to_datetime(text, format=pattern, errors="coerce")
            if parsed.notna().mean() >= PARSED_SHARE and parsed.dt.year.between(1800, 2200).all():
                return layout
    timely = re.search(r"time|date|epoch|stamp|ts$", name, re.IGNORECASE)
    if timely and sample.between(1e8, 4.2e9).all():
        return "epoch"
    return None


def time_format(values: pd.Series) -> TimeFormat:
    if pd.api.types.is_numeric_dtype(values):
        return integer_time_format(values, "time") or "number"
    return "datetime"


def time_of(frame: pd.DataFrame, column: str) -> dict[str, Any]:
    """How to read a column named as the rows' time (`agent_k.ml.forecasting.parse_time`'s spec)."""
    return {"columns": [column], "format": time_format(frame[column])}
