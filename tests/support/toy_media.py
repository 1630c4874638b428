"""A toy media kind, declared in this one file as a plug-in would (docs/architecture.md, "Media kinds"): `.tally`
files, each a line of numbers. This module is also its reader: the featurisation job copies it whole (as it
copies our image and sound readers), and the reference entries import it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

CHANNELS, PIXEL_ROWS = 1, 1
"""No network trains on a tally's pixels (the kind declares none); the job still keeps a blank row of them."""


def read_file(
    path: Path, *, size: int, side: int, preview: bool
) -> tuple[dict[str, Any], dict[str, float], None, None, None]:
    """What a tally file is, and its numbers' statistics (nothing to embed, no pixels, no preview)."""
    values = np.array([float(word) for word in path.read_text().split()], dtype=np.float64)
    if values.size == 0:
        raise ValueError("the file holds no numbers")
    info = {"format": "TALLY", "count": int(values.size), "channels": 1}
    stats = {
        "tally_mean": float(values.mean()),
        "tally_std": float(values.std()),
        "tally_min": float(values.min()),
        "tally_max": float(values.max()),
        "tally_sum": float(values.sum()),
    }
    return info, stats, None, None, None


def toy_kind() -> Any:
    """The declaration (imported here, inside: the job's copy of this module never calls it)."""
    from agent_k.media.kinds import MediaKind, Team

    return MediaKind(
        name="tally",
        suffixes=(".tally",),
        reader=__name__,
        needs=("numpy",),
        chunk=128,
        measures=("count",),
        strong=Team("tally-statistics", "tally_"),
        weak=Team("tally-sum", "tally_sum"),
    )
