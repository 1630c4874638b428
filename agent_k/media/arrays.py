"""Arrays as features: a row's `.npy` (or the first array of its `.npz`) summarised whole and per leading
channel, and drawn as one grey image (channels stacked, time along the last axis) for a network trained from
scratch, as a sound's spectrogram is (seti-breakthrough-listen's cadences of six spectrograms).

NumPy and Pillow only: this module is copied into the featurisation job's script, which reads the competition's
files in the sandbox. Arrays are loaded without pickles: a file that needs one is unreadable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

CHANNELS, PIXEL_ROWS = 1, 64
"""A row's pixels for a network trained from scratch: its array as one grey image, PIXEL_ROWS rows high."""
MAX_CHANNELS = 8
"""Leading channels summarised one by one (a cadence's six looks); past this many, only the whole array is."""
QUANTILES = (0.1, 0.5, 0.9)


def read_file(
    path: Path, *, size: int, side: int, preview: bool
) -> tuple[dict[str, Any], dict[str, float], None, np.ndarray, bytes | None]:
    """What the featurisation job keeps of one array: what its file is, its statistics, nothing for the picture
    embedder (`size` is unused), its image resampled to `side` columns, and a preview of it."""
    array = read_array(path)
    info = {"format": path.suffix.lstrip(".").upper(), "values": int(array.size), "channels": _channels(array)}
    image = grey_image(array)
    return info, array_features(array), None, _resized(image, side)[None], _preview(image) if preview else None


def read_array(path: Path) -> np.ndarray:
    """The file's array as float64 (an `.npz`: its first array); raises on one without a finite number."""
    loaded = np.load(path, allow_pickle=False)
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            if not loaded.files:
                raise ValueError("the archive holds no array")
            loaded = loaded[loaded.files[0]]
    array = np.asarray(loaded, dtype=np.float64)
    if not np.isfinite(array).any():
        raise ValueError("the array holds no finite number")
    return np.nan_to_num(array, nan=0.0, posinf=0.0, neginf=0.0)


def _channels(array: np.ndarray) -> int:
    return int(array.shape[0]) if array.ndim >= 3 else 1


def _summary(values: np.ndarray, prefix: str) -> dict[str, float]:
    q10, q50, q90 = np.quantile(values, QUANTILES)
    return {
        f"{prefix}mean": float(values.mean()), f"{prefix}std": float(values.std()), f"{prefix}min": float(values.min()),
        f"{prefix}q10": float(q10), f"{prefix}q50": float(q50), f"{prefix}q90": float(q90),
        f"{prefix}max": float(values.max()),
    }  # fmt: skip


def array_features(array: np.ndarray) -> dict[str, float]:
    """The whole array's statistics, each leading channel's (up to MAX_CHANNELS), and how the last axis varies
    (the mean absolute change along it: a narrow-band signal drifts, noise jumps)."""
    features = {**_summary(array.ravel(), "arr_"), "arr_values": float(array.size)}
    if array.ndim >= 2:
        features["arr_step"] = float(np.abs(np.diff(array, axis=-1)).mean()) if array.shape[-1] > 1 else 0.0
    if array.ndim >= 3:
        for i in range(min(array.shape[0], MAX_CHANNELS)):
            features.update(_summary(array[i].ravel(), f"arr_c{i}_"))
    return features


def grey_image(array: np.ndarray) -> np.ndarray:
    """The array as grey levels: its leading channels stacked top to bottom, each scaled between its own 1st and
    99th percentiles, the last axis across."""
    rows = array.reshape(-1, array.shape[-1]) if array.ndim >= 2 else array.reshape(1, -1)
    low, high = np.percentile(rows, (1, 99))
    scaled = (rows - low) / (high - low) if high > low else np.zeros_like(rows)
    return np.asarray(np.clip(scaled, 0, 1) * 255, dtype=np.uint8)


def _resized(image: np.ndarray, side: int) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.fromarray(image).resize((side, PIXEL_ROWS), Image.Resampling.BILINEAR), dtype=np.uint8)


def _preview(image: np.ndarray) -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(image).resize((96, PIXEL_ROWS)).save(out, format="JPEG", quality=80)
    return out.getvalue()
