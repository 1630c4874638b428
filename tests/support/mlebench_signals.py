"""Folders shaped like the public folders of MLE-bench's audio and array competitions (`tests/support/
mlebench_media.py` lists every maker)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from tests.support.media_files import FILES, MediaShape, chord, sound


def tensorflow_speech_recognition_challenge(folder: Path, rng: np.random.Generator) -> MediaShape:
    """One folder per word under train/audio (WAV); test/audio flat, in WAV, FLAC, OGG and MP3; the sample is
    `fname,label`."""
    words = ["yes", "no", "up", "down"]
    n_test = 0
    for i in range(FILES):
        if i % 5 == 4:
            suffix = ("wav", "flac", "ogg", "mp3")[n_test % 4]
            sound(folder / "test" / "audio" / f"clip_{i:05d}.{suffix}", i % 4, rng)
            n_test += 1
        else:
            sound(folder / "train" / "audio" / words[i % 4] / f"{i:05d}_nohash_0.wav", i % 4, rng)
    tests = sorted(p.name for p in (folder / "test" / "audio").iterdir())
    pd.DataFrame({"fname": tests, "label": "yes"}).to_csv(folder / "sample_submission.csv", index=False)
    return MediaShape("accuracy", "audio", ("label",), FILES - n_test, n_test)


def the_icml_2013_whale_challenge_right_whale_redux(folder: Path, rng: np.random.Generator) -> MediaShape:
    """Only zips: `train2.zip` of `<date>_<time>_<ms>_TRAIN<n>_<label>.aif` (the label in the name alone) and
    `test2.zip` of `<date>_<time>_<ms>_Test<n>.aif`; a sample `clip,probability`."""
    labels = rng.integers(0, 2, FILES)
    tests = []
    for i, label in enumerate(labels):
        stamp = f"{rng.integers(0, 235959):06d}_{rng.integers(0, 999):03d}s{rng.integers(0, 9)}ms"
        if i % 4 == 3:  # MLE-bench keeps the first two days for training and tests on the last two
            tests.append((f"2009033{i % 2}_{stamp}_Test{len(tests)}.aif", int(label)))
            sound(folder / "test2" / tests[-1][0], int(label), rng)
        else:
            sound(folder / "train2" / f"2009032{8 + i % 2}_{stamp}_TRAIN{i}_{label}.aif", int(label), rng)
    for side in ("train2", "test2"):
        shutil.make_archive(str(folder / side), "zip", folder, side)
        shutil.rmtree(folder / side)
    clips = [name for name, _ in tests]
    pd.DataFrame({"clip": clips, "probability": 0}).to_csv(folder / "sample_submission.csv", index=False)
    solution = pd.DataFrame({"clip": clips, "probability": [label for _, label in tests]})
    return MediaShape("auc", "audio", ("probability",), FILES - len(tests), len(tests), solution=solution)


TAGS = ["Accelerating_and_revving_and_vroom", "Accordion", "Bark", "Bass_drum", "Buzz", "Church_bell"]


def freesound_audio_tagging_2019(folder: Path, rng: np.random.Generator) -> MediaShape:
    """`train_curated.csv` and `train_noisy.csv` of `fname,labels`, the labels a comma-separated set of tags; the
    clips only in `train_curated.zip`, `train_noisy.zip` and `test.zip`; the sample wants a score per tag (80 in
    the real one, six here). Graded by lwlrap."""
    scratch = folder / ".clips"
    rows = {"train_curated": [], "train_noisy": []}
    test_names = []
    for i in range(FILES):
        labels = sorted(set(rng.choice(len(TAGS), 1 + int(rng.random() < 0.4), replace=False).tolist()))
        side = "test" if i % 5 == 4 else ("train_noisy" if i % 5 == 3 else "train_curated")
        name = f"{rng.bytes(4).hex()}.wav"
        chord(scratch / side / name, labels, rng)
        if side == "test":
            test_names.append(name)
        else:
            rows[side].append({"fname": name, "labels": ",".join(TAGS[k] for k in labels)})
    for side in ("train_curated", "train_noisy", "test"):
        shutil.make_archive(str(folder / side), "zip", scratch / side)
    shutil.rmtree(scratch)
    for side, listed in rows.items():
        pd.DataFrame(listed).to_csv(folder / f"{side}.csv", index=False)
    pd.DataFrame({"fname": sorted(test_names), **dict.fromkeys(TAGS, 0)}).to_csv(folder / "sample_submission.csv",
                                                                              index=False)  # fmt: skip
    n_train = len(rows["train_curated"]) + len(rows["train_noisy"])
    return MediaShape("lwlrap", "audio", tuple(TAGS), n_train, len(test_names))


def seti_breakthrough_listen(folder: Path, rng: np.random.Generator) -> MediaShape:
    """train_labels.csv of `id,target`; each row's cadence an `.npy` of six spectrograms (6 x 273 x 256 float16 in
    the real one; 6 x 16 x 32 here) in `train/<id[0]>/` and `test/<id[0]>/`; `old_leaky_data/` beside them, as
    the original download has it; the sample is the test ids at 0.5. A signal is a bright drifting line in the
    first, third and fifth looks."""
    is_test = np.arange(FILES) % 5 == 4
    labels = np.arange(FILES) % 2
    ids = [rng.bytes(8).hex()[1:] for _ in range(FILES)]
    for ident, label, test in zip(ids, labels, is_test, strict=True):
        cadence = rng.normal(0, 1, (6, 16, 32))
        if label:
            start = int(rng.integers(4, 20))
            for look in (0, 2, 4):
                for t in range(16):
                    cadence[look, t, min(31, start + t // 3)] += 6.0
        path = folder / ("test" if test else "train") / ident[0] / f"{ident}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, cadence.astype(np.float16))
    frame = pd.DataFrame({"id": ids, "target": labels})
    frame[~is_test].to_csv(folder / "train_labels.csv", index=False)
    frame[is_test].assign(target=0.5).to_csv(folder / "sample_submission.csv", index=False)
    old = folder / "old_leaky_data"
    old.mkdir()
    pd.DataFrame({"id": [f"{k:x}old" for k in range(4)], "target": [0, 1, 0, 1]}).to_csv(
        old / "train_labels_old.csv", index=False)  # fmt: skip
    return MediaShape("auc", "array", ("target",), int((~is_test).sum()), int(is_test.sum()), solution=frame[is_test])
