"""The built-in media competitions' files, made from images that ship inside packages (scikit-learn's digits,
scikit-image's photographs) and from sounds synthesised here. Each maker writes its files under a folder and
returns the table of rows: an id, the file's `path` relative to that folder, and the target.

Imports happen on first use: listing the catalogue loads none of Pillow, scikit-image or soundfile."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20261125


def digits(folder: Path) -> pd.DataFrame:
    """scikit-learn's 1,797 handwritten digits (UCI's optical recognition set: 8x8 scans, 16 grey levels),
    each a 32-pixel grayscale PNG."""
    from PIL import Image
    from sklearn.datasets import load_digits

    bunch = load_digits()
    rows = []
    for i, (pixels, label) in enumerate(zip(bunch.images, bunch.target, strict=True)):
        relative = f"digits/{i:04d}.png"
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        image = Image.fromarray((pixels * (255 / 16)).astype(np.uint8))
        image.resize((32, 32), Image.Resampling.BILINEAR).save(folder / relative)
        rows.append({"id": f"d{i:04d}", "path": relative, "digit": int(label)})
    return pd.DataFrame(rows)


PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field", "immunohistochemistry", "retina",
          "cell", "camera", "coins", "moon", "brick", "grass", "gravel", "page", "text")  # fmt: skip
CROP_BASE = 40
ZOOM_ROWS = 1500


def photo_zoom(folder: Path) -> pd.DataFrame:
    """Square crops of scikit-image's sixteen bundled photographs, each taken at a random size (40 to 200 pixels
    a side) and shrunk to 64 pixels: the target is the crop's original size, read from how fine its detail is.
    Colour photographs are saved as JPEG, grayscale ones as PNG."""
    from PIL import Image
    from skimage import data

    rng = np.random.default_rng(SEED)
    photos = {name: np.asarray(getattr(data, name)()) for name in PHOTOS}
    rows = []
    for i in range(ZOOM_ROWS):
        name = PHOTOS[i % len(PHOTOS)]
        photo = photos[name]
        side = round(CROP_BASE * 2 ** rng.uniform(0, np.log2(5)))
        side = min(side, *photo.shape[:2])
        top, left = (int(rng.integers(0, photo.shape[k] - side + 1)) for k in (0, 1))
        crop = Image.fromarray(photo[top : top + side, left : left + side]).resize((64, 64), Image.Resampling.BOX)
        suffix = "png" if crop.mode == "L" else "jpg"
        relative = f"crops/{i:05d}.{suffix}"
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        crop.save(folder / relative, quality=90) if suffix == "jpg" else crop.save(folder / relative)
        rows.append({"id": f"z{i:05d}", "path": relative, "crop_px": side})
    return pd.DataFrame(rows)


SOUNDS = ("sine", "square", "sawtooth", "pluck", "bell", "snare", "kick", "chirp")
SOUND_ROWS = 1200
SAMPLE_RATE = 16_000


def synth_sounds(folder: Path) -> pd.DataFrame:
    """1,200 synthesised sounds of eight kinds (pure, square and sawtooth tones, a plucked string, a bell, a
    snare, a kick drum, a chirp) at random pitch, length, loudness and envelope, in background noise of random
    level; saved as WAV, FLAC or OGG Vorbis."""
    import soundfile

    rng = np.random.default_rng(SEED)
    rows = []
    for i in range(SOUND_ROWS):
        kind = SOUNDS[i % len(SOUNDS)]
        seconds = rng.uniform(0.4, 1.5)
        clip = _sound(kind, rng, seconds)
        noise = rng.normal(0, 1, clip.size) * np.std(clip) * 10 ** (-rng.uniform(0, 25) / 20)
        clip = (clip + noise) * rng.uniform(0.2, 0.9) / max(np.abs(clip + noise).max(), 1e-9)
        suffix = ("wav", "flac", "ogg")[i % 3]
        relative = f"clips/{i:05d}.{suffix}"
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        soundfile.write(folder / relative, clip.astype(np.float32), SAMPLE_RATE)
        rows.append({"id": f"s{i:05d}", "path": relative, "sound": kind})
    return pd.DataFrame(rows)


def _sound(kind: str, rng: np.random.Generator, seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    pitch = 110 * 2 ** rng.uniform(0, 3)
    decay = np.exp(-t * rng.uniform(1, 6))
    if kind == "sine":
        return np.sin(2 * np.pi * pitch * t) * decay
    if kind == "square":
        return np.sign(np.sin(2 * np.pi * pitch * t)) * decay
    if kind == "sawtooth":
        return (2 * (t * pitch % 1) - 1) * decay
    if kind == "pluck":  # Karplus-Strong: a burst of noise through a delay line that averages itself
        period = max(2, int(SAMPLE_RATE / pitch))
        out = np.zeros(t.size)
        out[:period] = rng.uniform(-1, 1, min(period, t.size))
        for n in range(period, t.size):
            out[n] = 0.996 * 0.5 * (out[n - period] + out[n - period + 1])
        return out
    if kind == "bell":  # inharmonic partials, each dying at its own rate
        ratios = (1.0, 2.76, 5.4, 8.93)
        partials = [np.sin(2 * np.pi * pitch * r * t) * np.exp(-t * (1 + 2 * k)) for k, r in enumerate(ratios)]
        bell: np.ndarray = np.sum(partials, axis=0)
        return bell
    if kind == "snare":
        return rng.normal(0, 1, t.size) * np.exp(-t * rng.uniform(8, 20)) + 0.3 * np.sin(2 * np.pi * 180 * t) * decay
    if kind == "kick":
        sweep = 150 * np.exp(-t * 12) + 40
        return np.sin(2 * np.pi * np.cumsum(sweep) / SAMPLE_RATE) * np.exp(-t * rng.uniform(4, 10))
    rise = pitch * (1 + rng.uniform(1, 4) * t / seconds)  # chirp
    return np.sin(2 * np.pi * np.cumsum(rise) / SAMPLE_RATE) * np.hanning(t.size)
