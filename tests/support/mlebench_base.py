"""What every folder shaped like an MLE-bench competition's tables shares (`mlebench_tables`, `mlebench_text`):
the shape a maker returns, the rows it writes and how it splits them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

ROWS = 240


TEST_SHARE = 0.25


@dataclass(frozen=True)
class Shape:
    metric: str
    targets: tuple[str, ...]
    """The target columns of the arranged training table."""
    target_option: tuple[str, ...] = ()
    """What the user passes as `--target` (the files do not say)."""
    not_features: tuple[str, ...] = ()
    """Training columns that must not reach the test table (train-only fields)."""
    n_test: int = 0
    notes: tuple[str, ...] = field(default=())
    """Words the arranged notes must mention."""


def split(frame: pd.DataFrame, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    test = rng.random(len(frame)) < TEST_SHARE
    return frame[~test].reset_index(drop=True), frame[test].reset_index(drop=True)


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
