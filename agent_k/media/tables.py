"""Media features computed in this process, for files we made (the built-in competitions) or that the user
handed us for their own competition: the reference entries of a media competition's leaderboard and the
benchmark's baselines. A mission featurises a competition's files in the sandbox instead (`agent_k.ml.featurise`),
with the same functions."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from agent_k.media.audio import audio_features, read_audio
from agent_k.media.images import embed, image_stats, read_image, square


def media_table(kind: str, files: list[Path], *, model: Path | None = None, size: int = 128) -> pd.DataFrame:
    """One row per file (in order): its statistics and, given the exported network, its embedding (`emb*`). A file
    that cannot be read gets an empty row."""
    rows: list[dict[str, float]] = []
    pixels, embedded = [], []
    for i, path in enumerate(files):
        try:
            if kind == "image":
                image, info = read_image(path)
                rows.append(image_stats(image, info))
                pixels.append(square(image, size))
                embedded.append(i)
            else:
                samples, sound = read_audio(path)
                rows.append(audio_features(samples, sound))
        except Exception:
            rows.append({})
    frame = pd.DataFrame(rows, index=range(len(files))).astype("float32")
    if model is not None and pixels:
        vectors = embed(model, np.stack(pixels), threads=os.cpu_count() or 1)
        columns = [f"emb{i}" for i in range(vectors.shape[1])]
        frame = frame.join(pd.DataFrame(vectors, index=embedded, columns=columns))
    return frame
