"""Real small media files for folders shaped like MLE-bench's image, audio and array competitions: pictures (in
every format and mode a real folder mixes), 12-bit DICOMs, sounds, chords of several tags, pictures of several
labels; and the shape a media maker returns. Each class looks (or sounds) different, so a model can learn it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

FILES = 40


SAMPLE_RATE = 16_000


@dataclass(frozen=True)
class MediaShape:
    metric: str
    kind: str
    targets: tuple[str, ...]
    n_train: int
    n_test: int
    features: tuple[str, ...] = ()
    """Table columns that must stay features beside the files."""
    not_features: tuple[str, ...] = ()
    solution: pd.DataFrame | None = None
    """The test rows' labels, where the maker keeps them."""
    top_k: int | None = None
    """A map@k's k, which the sample alone says (it lists that many labels a row)."""
    classes_there: int | None = None
    """How many classes the real competition's training set has, where a folder this small cannot hold them all:
    what the coverage benchmark checks against the metric's cap."""


def picture(path: Path, label: int, rng: np.random.Generator, mode: str = "RGB", size: int = 48) -> None:
    """A square of the class's colour on noise, somewhere in the frame, saved in `mode` (and the suffix's
    format): "RGB", "L", "RGBA", "I;16" (16-bit grayscale)."""
    from PIL import Image

    pixels = rng.integers(0, 60, (size, size, 3)).astype(np.uint8)
    colour = np.array([(200, 40, 40), (40, 200, 40), (40, 40, 200), (200, 200, 40)][label % 4], dtype=np.uint8)
    top, left = rng.integers(0, size // 2, 2)
    pixels[top : top + size // 2, left : left + size // 2] = colour
    image = Image.fromarray(pixels)
    if mode == "L":
        image = image.convert("L")
    elif mode == "RGBA":
        image = image.convert("RGBA")
        image.putalpha(Image.fromarray(np.full((size, size), 200, dtype=np.uint8)))
    elif mode == "I;16":
        image = Image.fromarray(np.asarray(image.convert("L"), dtype=np.uint16) * 257)  # a 16-bit image
        assert image.mode.startswith("I;16")
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)


def dicom(path: Path, label: int, rng: np.random.Generator, *, size: int = 48, inverted: bool = False) -> None:
    """A 12-bit grayscale DICOM (as an X-ray's), uncompressed: the class's square brighter than the noise around it;
    `inverted`: MONOCHROME1, where bright means less dense."""
    import pydicom
    from pydicom.dataset import FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian, SecondaryCaptureImageStorage, generate_uid

    pixels = rng.integers(0, 600, (size, size)).astype(np.uint16)
    top, left = rng.integers(0, size // 2, 2)
    pixels[top : top + size // 2, left : left + size // 2] = 1200 + 800 * (label % 4)
    if inverted:
        pixels = 4095 - pixels
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID = SecondaryCaptureImageStorage, generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    data = pydicom.Dataset()
    data.file_meta = meta
    data.SOPClassUID, data.SOPInstanceUID = meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID
    data.Rows = data.Columns = size
    data.SamplesPerPixel, data.PhotometricInterpretation = 1, "MONOCHROME1" if inverted else "MONOCHROME2"
    data.BitsAllocated, data.BitsStored, data.HighBit, data.PixelRepresentation = 16, 12, 11, 0
    data.PixelData = pixels.tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    data.save_as(path, enforce_file_format=True)


def sound(path: Path, label: int, rng: np.random.Generator) -> None:
    """Half a second of the class's pitch in noise; the suffix picks the format (WAV, FLAC, OGG, MP3)."""
    import soundfile

    t = np.arange(SAMPLE_RATE // 2) / SAMPLE_RATE
    clip = 0.5 * np.sin(2 * np.pi * (220 * 2 ** (label % 4)) * t) + rng.normal(0, 0.05, t.size)
    path.parent.mkdir(parents=True, exist_ok=True)
    aiff = "AIFF" if path.suffix.lower() in (".aif", ".aiff") else None  # soundfile names only `.aiff` by itself
    soundfile.write(path, clip.astype(np.float32), SAMPLE_RATE, format=aiff)


def chord(path: Path, labels: list[int], rng: np.random.Generator) -> None:
    """Half a second of each label's pitch together, in noise (a clip with several tags)."""
    import soundfile

    t = np.arange(SAMPLE_RATE // 2) / SAMPLE_RATE
    clip = sum(0.3 * np.sin(2 * np.pi * (180 * 1.5**label) * t) for label in labels) + rng.normal(0, 0.05, t.size)
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(path, np.asarray(clip, dtype=np.float32), SAMPLE_RATE)


def patches(path: Path, labels: list[int], rng: np.random.Generator, size: int = 48) -> None:
    """Noise with a square of each label's colour somewhere (a leaf with several diseases has several)."""
    from PIL import Image

    colours = [(200, 40, 40), (40, 200, 40), (40, 40, 200), (200, 200, 40), (200, 40, 200), (40, 200, 200)]
    pixels = rng.integers(0, 60, (size, size, 3)).astype(np.uint8)
    for label in labels:
        top, left = rng.integers(0, size - size // 3, 2)
        pixels[top : top + size // 3, left : left + size // 3] = colours[label % len(colours)]
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)


def split_files(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    labels = np.arange(n) % 2 if n < 8 else rng.integers(0, 2, n)
    return labels, rng.random(n) < 0.25
