"""Media features computed in this process, for files we made (the built-in competitions) or that the user
handed us for their own competition: the reference entries of a media competition's leaderboard and the
benchmark's baselines. A mission featurises a competition's files in the sandbox instead (`agent_k.ml.featurise`),
with the same reader (the kind's `read_file`)."""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path

import numpy as np
import pandas as pd

from agent_k.media.images import embed
from agent_k.media.kinds import media_kind


def media_table(kind: str, files: list[Path], *, model: Path | None = None, size: int = 128) -> pd.DataFrame:
    """One row per file (in order): its statistics and, given the exported network, its embedding (`emb*`). A file
    that cannot be read gets an empty row."""
    reader = media_kind(kind).reader
    assert reader is not None, f"{kind} files have no reader"
    read_file = import_module(reader).read_file
    rows: list[dict[str, float]] = []
    pixels, embedded = [], []
    for i, path in enumerate(files):
        try:
            _, stats, seen, _, _ = read_file(path, size=size, side=1, preview=False)  # no network reads pixels here
        except Exception:
            rows.append({})
            continue
        rows.append(stats)
        if seen is not None:
            pixels.append(seen)
            embedded.append(i)
    frame = pd.DataFrame(rows, index=range(len(files))).astype("float32")
    if model is not None and pixels:
        vectors = embed(model, np.stack(pixels), threads=os.cpu_count() or 1)
        columns = [f"emb{i}" for i in range(vectors.shape[1])]
        frame = frame.join(pd.DataFrame(vectors, index=embedded, columns=columns))
    return frame
