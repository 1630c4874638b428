"""How much memory each candidate may use, and how many run at once: from the data and the machine.

A fixed cap is wrong both ways: 4 GB each for two candidates on a small machine overcommits it, and 4 GB is too
little for a million rows. A candidate holds its table several times over (the frame, each member's features,
the encoded matrix, the model, a fold's copy), so its need grows with the data; all candidates running at once
must fit in the memory the machine has free, and when they cannot, fewer run at once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

BASE_MB = 700
"""An idle candidate: the interpreter with pandas, scikit-learn and LightGBM imported."""
DATA_FACTOR = 8
"""Copies of the raw table a candidate may hold at its peak."""
MIN_MB = 1024
HEADROOM = 0.8
"""Of the memory free now, the share candidates may take; the rest is the runner's and the system's."""


@dataclass(frozen=True)
class Sizing:
    memory_mb: int
    """Each candidate's cap, all its processes together."""
    parallel: int
    need_mb: int
    """What one candidate likely needs for this data."""


def free_memory_mb() -> int:
    """The memory available now (`MemAvailable`), or the machine's total where that cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20


def data_mb(data_dir: Path) -> float:
    """The public tables' size as CSV text, a fair stand-in for their size in memory."""
    return sum(p.stat().st_size for p in (data_dir / "train.csv", data_dir / "test.csv") if p.is_file()) / 2**20


def size_candidates(data_size_mb: float, parallel: int, *, cap_mb: int | None, free_mb: int | None = None) -> Sizing:
    """Each candidate gets an equal share of the free memory (at most `cap_mb`, when the user set one), and no
    more run at once than fit with what this data needs."""
    free = int((free_memory_mb() if free_mb is None else free_mb) * HEADROOM)
    need = max(MIN_MB, int(BASE_MB + DATA_FACTOR * data_size_mb))
    if cap_mb is not None:
        need = min(need, cap_mb)
    fits = max(1, free // need)
    parallel = max(1, min(parallel, fits))
    memory = max(need, free // parallel)
    if cap_mb is not None:
        memory = min(memory, cap_mb)
    return Sizing(memory_mb=memory, parallel=parallel, need_mb=need)
