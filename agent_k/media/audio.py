"""Sounds as features: log-mel band and MFCC statistics (librosa), spectral shape, loudness and duration.

NumPy, soundfile and librosa only: this module is copied into the featurisation job's script, which decodes the
competition's files in the sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

SAMPLE_RATE = 22_050
MAX_SECONDS = 30.0
"""Longer recordings are read this far: the statistics of half a minute describe a clip well enough."""
MELS, MFCCS = 64, 20
CHANNELS, PIXEL_ROWS = 1, MELS
"""A row's pixels for a network trained from scratch: its spectrogram, one row per mel band."""


def read_file(
    path: Path, *, size: int, side: int, preview: bool
) -> tuple[dict[str, Any], dict[str, float], None, np.ndarray, bytes | None]:
    """What the featurisation job keeps of one sound: what its file is, its features, nothing for the picture
    embedder (`size` is unused), its spectrogram resampled to `side` columns, and a preview of it."""
    samples, info = read_audio(path)
    mel = mel_image(samples)
    pixels, shown = spectrogram_pixels(mel, side), sound_preview(mel) if preview else None
    return info, audio_features(samples, info), None, pixels, shown


def read_audio(path: Path) -> tuple[np.ndarray, dict[str, Any]]:
    """The clip as mono float32 at SAMPLE_RATE (at most MAX_SECONDS), and what its file says: format, duration,
    native sample rate, channels. Raises on a file no decoder reads, or one without a single sample."""
    import librosa
    import soundfile

    try:
        described = soundfile.info(str(path))
        info = {"format": described.format, "duration": float(described.duration),
                "sample_rate": int(described.samplerate), "channels": int(described.channels)}  # fmt: skip
    except (RuntimeError, soundfile.LibsndfileError):
        info = {"format": path.suffix.lstrip(".").upper(), "duration": None, "sample_rate": None, "channels": None}
    samples, _ = librosa.load(str(path), sr=SAMPLE_RATE, mono=True, duration=MAX_SECONDS)
    if samples.size == 0:
        raise ValueError("the file holds no samples")
    if info["duration"] is None:
        info["duration"] = samples.size / SAMPLE_RATE
    return samples.astype(np.float32), info


def audio_features(samples: np.ndarray, info: dict[str, Any]) -> dict[str, float]:
    """Mean and spread of each log-mel band and MFCC (and of the MFCCs' change), the spectral shape, loudness and
    the clip's length."""
    import librosa

    samples = np.pad(samples, (0, max(0, 2048 - samples.size)))
    spectrum = np.abs(librosa.stft(samples, n_fft=2048, hop_length=512))  # one STFT for every feature below
    mel = librosa.power_to_db(librosa.feature.melspectrogram(S=spectrum**2, sr=SAMPLE_RATE, n_mels=MELS))
    mfcc = librosa.feature.mfcc(S=mel, n_mfcc=MFCCS)
    delta = librosa.feature.delta(mfcc, mode="nearest")
    features: dict[str, float] = {}
    for name, matrix in (("mel", mel), ("mfcc", mfcc), ("dmfcc", delta)):
        for i, (mean, std) in enumerate(zip(matrix.mean(axis=1), matrix.std(axis=1), strict=True)):
            features[f"{name}{i}_mean"], features[f"{name}{i}_std"] = float(mean), float(std)
    shape = {
        "centroid": librosa.feature.spectral_centroid(S=spectrum, sr=SAMPLE_RATE),
        "bandwidth": librosa.feature.spectral_bandwidth(S=spectrum, sr=SAMPLE_RATE),
        "rolloff": librosa.feature.spectral_rolloff(S=spectrum, sr=SAMPLE_RATE),
        "flatness": librosa.feature.spectral_flatness(S=spectrum),
        "zcr": librosa.feature.zero_crossing_rate(samples),
        "rms": librosa.feature.rms(S=spectrum),
    }
    for name, values in shape.items():
        features[f"snd_{name}_mean"], features[f"snd_{name}_std"] = float(values.mean()), float(values.std())
    features["snd_seconds"] = float(info["duration"])
    features["snd_peak"] = float(np.abs(samples).max())
    return features


def mel_image(samples: np.ndarray) -> np.ndarray:
    """The clip's log-mel spectrogram as grey levels (0 at 80 dB below its loudest), low pitches first: what a
    person looks at, and what a network trained from scratch reads."""
    import librosa

    mel = librosa.power_to_db(librosa.feature.melspectrogram(y=samples, sr=SAMPLE_RATE, n_mels=MELS), ref=np.max)
    return np.asarray(np.clip((mel + 80) / 80 * 255, 0, 255), dtype=np.uint8)


def spectrogram_pixels(mel: np.ndarray, side: int) -> np.ndarray:
    """`mel_image`'s spectrogram as a (1, MELS, side) array: its frames resampled to `side` columns, so clips of
    any length make images of one shape."""
    from PIL import Image

    return np.asarray(Image.fromarray(mel).resize((side, MELS), Image.Resampling.BILINEAR), dtype=np.uint8)[None]


def sound_preview(mel: np.ndarray) -> bytes:
    """`mel_image`'s spectrogram as a small grey JPEG (low pitches at the bottom), for people to look at."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(mel[::-1]).resize((96, MELS)).save(out, format="JPEG", quality=80)
    return out.getvalue()
