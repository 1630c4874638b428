"""librosa compiles its numba kernels when it is imported (some 15 seconds), and caches them only where it may
write. A sandboxed featurisation job may write nowhere lasting, so each would compile them again: instead they
are compiled once here (`python -m agent_k.media.warmup CACHE`, run by `compiled_kernels`), and each job starts
from a copy of that cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

NUMBA_CACHE = "numba-cache"


def compiled_kernels(cache: Path) -> Path:
    """A folder of librosa's compiled numba kernels for this Python and machine (made once, kept in `cache`)."""
    target = cache / NUMBA_CACHE
    if (target / ".complete").is_file():
        return target
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", __name__], env={**os.environ, "NUMBA_CACHE_DIR": str(target)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    (target / ".complete").touch()
    return target


def main() -> None:
    import numpy as np

    from agent_k.media.audio import SAMPLE_RATE, audio_features

    tone = np.sin(np.linspace(0, 440 * 2 * np.pi, SAMPLE_RATE)).astype(np.float32)
    audio_features(tone, {"duration": 1.0})


if __name__ == "__main__":
    main()
