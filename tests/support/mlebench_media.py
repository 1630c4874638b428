"""Small folders shaped like the public folders of MLE-bench's image and audio competitions (openai/mle-bench,
`mlebench/competitions/<slug>/prepare.py`): the same file and folder names, the same columns, ids with or
without the extension, a few dozen real image and sound files of the formats those competitions ship (and
the 16-bit, grayscale and transparent ones others do). Each class looks (or sounds) different, so a model can
learn it. Each maker returns what the arranged tables must hold."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
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


def _split(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    labels = np.arange(n) % 2 if n < 8 else rng.integers(0, 2, n)
    return labels, rng.random(n) < 0.25


def aerial_cactus_identification(folder: Path, rng: np.random.Generator, files: int = FILES) -> MediaShape:
    """train.csv of `id,has_cactus` whose ids carry `.jpg`; train/ and test/ folders, and the zips MLE-bench
    leaves beside them (their copies are not counted twice)."""
    labels, is_test = _split(files, rng)
    names = [f"{rng.bytes(8).hex()}.jpg" for _ in range(files)]
    for name, label, test in zip(names, labels, is_test, strict=True):
        picture(folder / ("test" if test else "train") / name, int(label), rng)
    train = pd.DataFrame({"id": names, "has_cactus": labels})[~is_test]
    train.to_csv(folder / "train.csv", index=False)
    pd.DataFrame({"id": np.array(names)[is_test], "has_cactus": 0.5}).to_csv(folder / "sample_submission.csv",
                                                                            index=False)  # fmt: skip
    for side in ("train", "test"):
        shutil.make_archive(str(folder / side), "zip", folder, side)
    solution = pd.DataFrame({"id": names, "has_cactus": labels})[is_test]
    return MediaShape("auc", "image", ("has_cactus",), int((~is_test).sum()), int(is_test.sum()), solution=solution)


def histopathologic_cancer_detection(folder: Path, rng: np.random.Generator) -> MediaShape:
    """train_labels.csv of `id,label`, ids without the extension; TIFF tiles in train/ and test/."""
    labels, is_test = _split(FILES, rng)
    ids = [rng.bytes(20).hex() for _ in range(FILES)]
    for ident, label, test in zip(ids, labels, is_test, strict=True):
        picture(folder / ("test" if test else "train") / f"{ident}.tif", int(label), rng)
    pd.DataFrame({"id": ids, "label": labels})[~is_test].to_csv(folder / "train_labels.csv", index=False)
    pd.DataFrame({"id": np.array(ids)[is_test], "label": 0}).to_csv(folder / "sample_submission.csv", index=False)
    return MediaShape("auc", "image", ("label",), int((~is_test).sum()), int(is_test.sum()))


def plant_seedlings_classification(folder: Path, rng: np.random.Generator) -> MediaShape:
    """One folder per species under train/ (PNG with transparency), test/ flat; the sample is `file,species`."""
    species = ["Black-grass", "Charlock", "Cleavers", "Common Chickweed"]
    n_test = 0
    for i in range(FILES):
        label = i % len(species)
        if i % 5 == 4:
            picture(folder / "test" / f"t{i:03d}.png", label, rng, mode="RGBA")
            n_test += 1
        else:
            picture(folder / "train" / species[label] / f"{i:03d}.png", label, rng, mode="RGBA")
    tests = sorted(p.name for p in (folder / "test").iterdir())
    pd.DataFrame({"file": tests, "species": "Charlock"}).to_csv(folder / "sample_submission.csv", index=False)
    return MediaShape("accuracy", "image", ("species",), FILES - n_test, n_test)


def dog_breed_identification(folder: Path, rng: np.random.Generator) -> MediaShape:
    """labels.csv of `id,breed` is the whole training table; the sample wants a probability per breed. The files
    come in every format and mode a real folder may mix: JPEG, PNG (8- and 16-bit, grayscale, transparent), BMP
    and TIFF; one file is truncated and one empty (reported and skipped, never a crash), and one test file is a
    training file's exact copy."""
    breeds = ["affenpinscher", "afghan_hound", "basenji", "beagle"]
    formats = [("jpg", "RGB"), ("png", "L"), ("png", "I;16"), ("png", "RGBA"), ("bmp", "RGB"), ("tif", "RGB")]
    is_test = np.arange(FILES) % 5 == 1
    labels = np.arange(FILES) % len(breeds)
    ids = [rng.bytes(16).hex() for _ in range(FILES)]
    for i, (ident, label, test) in enumerate(zip(ids, labels, is_test, strict=True)):
        suffix, mode = formats[i % len(formats)]
        picture(folder / ("test" if test else "train") / f"{ident}.{suffix}", int(label), rng, mode=mode)
    original, twin = next((i, j) for i in range(2, FILES) for j in range(2, FILES)
                          if not is_test[i] and is_test[j] and i % len(formats) == j % len(formats))  # fmt: skip
    suffix = formats[twin % len(formats)][0]
    (folder / "test" / f"{ids[twin]}.{suffix}").write_bytes(
        (folder / "train" / f"{ids[original]}.{suffix}").read_bytes()
    )
    broken = folder / ("test" if is_test[0] else "train") / f"{ids[0]}.jpg"
    broken.write_bytes(broken.read_bytes()[:200])
    (folder / ("test" if is_test[1] else "train") / f"{ids[1]}.png").write_bytes(b"")
    pd.DataFrame({"id": ids, "breed": np.array(breeds)[labels]})[~is_test].to_csv(folder / "labels.csv", index=False)
    sample = pd.DataFrame({"id": np.array(ids)[is_test], **dict.fromkeys(breeds, 0.25)})
    sample.to_csv(folder / "sample_submission.csv", index=False)
    return MediaShape("logloss", "image", ("breed",), int((~is_test).sum()), int(is_test.sum()))


def leaf_classification(folder: Path, rng: np.random.Generator) -> MediaShape:
    """192 numeric features in train.csv and an `images/` folder of every leaf (grayscale JPEG) beside them:
    the table's features and the images' both count."""
    species = ["Acer_Capillipes", "Acer_Circinatum", "Quercus_Rubra"]
    labels, is_test = rng.integers(0, 3, FILES), rng.random(FILES) < 0.25
    features = {f"{kind}{j}": rng.normal(labels, 1.0) for kind in ("margin", "shape", "texture") for j in range(1, 65)}
    frame = pd.DataFrame({"id": np.arange(1, FILES + 1), "species": np.array(species)[labels], **features})
    for ident, label in zip(frame["id"], labels, strict=True):
        picture(folder / "images" / f"{ident}.jpg", int(label), rng, mode="L")
    frame[~is_test].to_csv(folder / "train.csv", index=False)
    frame[is_test].drop(columns="species").to_csv(folder / "test.csv", index=False)
    sample = frame[is_test][["id"]].assign(**dict.fromkeys(species, 1 / 3))
    sample.to_csv(folder / "sample_submission.csv", index=False)
    return MediaShape("logloss", "image", ("species",), int((~is_test).sum()), int(is_test.sum()),
                      features=("margin1", "texture64"))  # fmt: skip


def siim_isic_melanoma_classification(folder: Path, rng: np.random.Generator) -> MediaShape:
    """`image_name` beside patient columns in train.csv and test.csv, the diagnosis only in training; each image
    twice under its name: a JPEG under jpeg/train and jpeg/test, and its DICOM under train/ and test/ (here only
    DICOM's preamble and magic, which no reader of ours decodes)."""
    labels, is_test = _split(FILES, rng)
    names = [f"ISIC_{i:07d}" for i in range(FILES)]
    for name, label, test in zip(names, labels, is_test, strict=True):
        side = "test" if test else "train"
        picture(folder / "jpeg" / side / f"{name}.jpg", int(label), rng)
        (folder / side).mkdir(parents=True, exist_ok=True)
        (folder / side / f"{name}.dcm").write_bytes(bytes(128) + b"DICM" + rng.bytes(256))
    frame = pd.DataFrame({
        "image_name": names, "patient_id": [f"IP_{i % 9:07d}" for i in range(FILES)],
        "sex": rng.choice(["male", "female"], FILES), "age_approx": rng.integers(2, 18, FILES) * 5.0,
        "anatom_site_general_challenge": rng.choice(["torso", "head/neck", "upper extremity"], FILES),
        "diagnosis": np.where(labels == 1, "melanoma", "nevus"),
        "benign_malignant": np.where(labels == 1, "malignant", "benign"), "target": labels,
    })  # fmt: skip
    frame[~is_test].to_csv(folder / "train.csv", index=False)
    frame[is_test].drop(columns=["diagnosis", "benign_malignant", "target"]).to_csv(folder / "test.csv", index=False)
    frame[is_test][["image_name"]].assign(target=0).to_csv(folder / "sample_submission.csv", index=False)
    return MediaShape("auc", "image", ("target",), int((~is_test).sum()), int(is_test.sum()),
                      features=("sex", "age_approx"), not_features=("diagnosis", "benign_malignant"))  # fmt: skip


def petfinder_pawpularity_score(folder: Path, rng: np.random.Generator) -> MediaShape:
    """Regression: `Id`, twelve 0/1 photo-quality columns and `Pawpularity` in train.csv; train/ and test/."""
    labels, is_test = _split(FILES, rng)
    ids = [rng.bytes(16).hex() for _ in range(FILES)]
    for ident, label, test in zip(ids, labels, is_test, strict=True):
        picture(folder / ("test" if test else "train") / f"{ident}.jpg", int(label), rng)
    quality = {name: rng.integers(0, 2, FILES) for name in ("Subject Focus", "Eyes", "Face", "Near", "Action",
               "Accessory", "Group", "Collage", "Human", "Occlusion", "Info", "Blur")}  # fmt: skip
    frame = pd.DataFrame({"Id": ids, **quality, "Pawpularity": 20 + 40 * labels + rng.integers(0, 10, FILES)})
    frame[~is_test].to_csv(folder / "train.csv", index=False)
    frame[is_test].drop(columns="Pawpularity").to_csv(folder / "test.csv", index=False)
    frame[is_test][["Id"]].assign(Pawpularity=38.0).to_csv(folder / "sample_submission.csv", index=False)
    return MediaShape("rmse", "image", ("Pawpularity",), int((~is_test).sum()), int(is_test.sum()),
                      features=("Eyes", "Blur"))  # fmt: skip


def plant_pathology_2020_fgvc7(folder: Path, rng: np.random.Generator) -> MediaShape:
    """One-hot labels (healthy, multiple_diseases, rust, scab) in train.csv; every image in images/, named
    Train_N.jpg and Test_N.jpg; test.csv of `image_id` alone."""
    classes = ["healthy", "multiple_diseases", "rust", "scab"]
    n_test = FILES // 4
    labels = np.arange(FILES - n_test) % 4
    for i, label in enumerate(labels):
        picture(folder / "images" / f"Train_{i}.jpg", int(label), rng)
    for i in range(n_test):
        picture(folder / "images" / f"Test_{i}.jpg", i % 4, rng)
    one_hot = pd.DataFrame(np.eye(4, dtype=int)[labels], columns=classes)
    pd.concat([pd.DataFrame({"image_id": [f"Train_{i}" for i in range(len(labels))]}), one_hot], axis=1).to_csv(
        folder / "train.csv", index=False)  # fmt: skip
    tests = pd.DataFrame({"image_id": [f"Test_{i}" for i in range(n_test)]})
    tests.to_csv(folder / "test.csv", index=False)
    tests.assign(**dict.fromkeys(classes, 0.25)).to_csv(folder / "sample_submission.csv", index=False)
    return MediaShape("mean_auc", "image", tuple(classes), len(labels), n_test)


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


def iwildcam_2019_fgvc6(folder: Path, rng: np.random.Generator) -> MediaShape:
    """Camera-trap frames: train.csv and test.csv of the frames' metadata (`id`, `file_name`, `location`, …; the
    label `category_id` in train only), `train_images/<id>.jpg` and `test_images/<id>.jpg`, and a sample of
    `Id,Category` written with its index (`to_csv(index=True)`: a nameless first column 0..n-1)."""
    ids = [f"{rng.bytes(4).hex()}-{rng.bytes(2).hex()}-{i:04x}" for i in range(FILES)]
    labels = rng.integers(0, 3, FILES)
    location = np.arange(FILES) % 8
    is_test = location >= 6  # MLE-bench splits by location: no camera is on both sides
    for ident, label, test in zip(ids, labels, is_test, strict=True):
        picture(folder / ("test_images" if test else "train_images") / f"{ident}.jpg", int(label), rng)
    frames = pd.DataFrame({
        "category_id": labels, "date_captured": "2012-03-17 03:48:44", "file_name": [f"{i}.jpg" for i in ids],
        "frame_num": 1, "id": ids, "location": location, "rights_holder": "Justin Brown",
        "seq_id": [rng.bytes(4).hex() for _ in ids], "seq_num_frames": 1, "width": 48, "height": 48,
    })  # fmt: skip
    frames[~is_test].to_csv(folder / "train.csv", index=False)
    frames[is_test].drop(columns=["category_id"]).to_csv(folder / "test.csv", index=False)
    sample = pd.DataFrame({"Id": np.array(ids)[is_test], "Category": 0})
    sample.to_csv(folder / "sample_submission.csv", index=True)
    solution = pd.DataFrame({"Id": np.array(ids)[is_test], "Category": labels[is_test]})
    return MediaShape("f1_macro", "image", ("Category",), int((~is_test).sum()), int(is_test.sum()),
                      not_features=("category_id",), solution=solution)  # fmt: skip


def whale_categorization_playground(folder: Path, rng: np.random.Generator) -> MediaShape:
    """train.csv of `Image,Id` (a whale's id per photograph), `train/` and `test/` of JPEGs, and a sample that ranks
    five ids a row (`new_whale w_1287fbc w_98baff9 w_7554f44 w_1eafe46`), scored by MAP@5: nothing but the sample
    says k."""
    whales = ["w_1287fbc", "w_98baff9", "w_7554f44", "w_1eafe46"]
    labels, is_test = rng.integers(0, len(whales), FILES), np.arange(FILES) % 4 == 3
    names = [f"{rng.bytes(4).hex()}.jpg" for _ in range(FILES)]
    for name, label, test in zip(names, labels, is_test, strict=True):
        picture(folder / ("test" if test else "train") / name, int(label), rng)
    ids = np.array(whales)[labels]
    pd.DataFrame({"Image": names, "Id": ids})[~is_test].to_csv(folder / "train.csv", index=False)
    sample = pd.DataFrame({"Image": np.array(names)[is_test], "Id": "new_whale " + " ".join(whales)})
    sample.to_csv(folder / "sample_submission.csv", index=False)
    solution = pd.DataFrame({"Image": np.array(names)[is_test], "Id": ids[is_test]})
    return MediaShape("map_at_k", "image", ("Id",), int((~is_test).sum()), int(is_test.sum()), solution=solution,
                      top_k=5)  # fmt: skip


def dogs_vs_cats_redux_kernels_edition(folder: Path, rng: np.random.Generator) -> MediaShape:
    """`train/cat.<n>.jpg` and `train/dog.<n>.jpg` (the class in the name alone), `test/<i>.jpg`, zips of both
    beside them, and a sample `id,label` of the chance of a dog (log loss)."""
    labels, is_test = _split(FILES, rng)
    counters = {"cat": 0, "dog": 0}
    answers = []
    for label, test in zip(labels, is_test, strict=True):
        animal = ("cat", "dog")[int(label)]
        if test:
            answers.append(int(label))
            picture(folder / "test" / f"{len(answers)}.jpg", int(label), rng)
        else:
            picture(folder / "train" / f"{animal}.{counters[animal]}.jpg", int(label), rng)
            counters[animal] += 1
    for side in ("train", "test"):
        shutil.make_archive(str(folder / side), "zip", folder, side)
    ids = list(range(1, len(answers) + 1))
    pd.DataFrame({"id": ids, "label": 0.5}).to_csv(folder / "sample_submission.csv", index=False)
    solution = pd.DataFrame({"id": ids, "label": answers})
    return MediaShape("logloss", "image", ("label",), FILES - len(answers), len(answers), solution=solution)


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


def aptos2019_blindness_detection(folder: Path, rng: np.random.Generator) -> MediaShape:
    """train.csv of `id_code,diagnosis` (grades 0..4, ids without the extension), PNGs in `train_images/` and
    `test_images/`, test.csv of bare ids; the sample is the test rows with `diagnosis` 0. Quadratic weighted kappa."""
    _, is_test = _split(FILES, rng)
    grades = np.arange(FILES) % 5
    ids = [rng.bytes(6).hex() for _ in range(FILES)]
    for ident, grade, test in zip(ids, grades, is_test, strict=True):
        picture(folder / ("test_images" if test else "train_images") / f"{ident}.png", int(grade) % 4, rng)
    frame = pd.DataFrame({"id_code": ids, "diagnosis": grades})
    frame[~is_test].to_csv(folder / "train.csv", index=False)
    frame[is_test][["id_code"]].to_csv(folder / "test.csv", index=False)
    frame[is_test].assign(diagnosis=0).to_csv(folder / "sample_submission.csv", index=False)
    return MediaShape("qwk", "image", ("diagnosis",), int((~is_test).sum()), int(is_test.sum()))


def cassava_leaf_disease_classification(folder: Path, rng: np.random.Generator) -> MediaShape:
    """train.csv of `image_id,label` (names with `.jpg`, labels 0..4), JPEGs in `train_images/` and `test_images/`,
    the same images again as TFRecords in `train_tfrecords/` and `test_tfrecords/` (not read), and
    `label_num_to_disease_map.json`; the sample is the test rows with label 4."""
    _, is_test = _split(FILES, rng)
    labels = np.arange(FILES) % 5
    names = [f"{rng.integers(10**8, 10**9)}.jpg" for _ in range(FILES)]
    for name, label, test in zip(names, labels, is_test, strict=True):
        picture(folder / ("test_images" if test else "train_images") / name, int(label) % 4, rng)
    frame = pd.DataFrame({"image_id": names, "label": labels})
    frame[~is_test].to_csv(folder / "train.csv", index=False)
    frame[is_test].assign(label=4).to_csv(folder / "sample_submission.csv", index=False)
    for side in ("train", "test"):
        (folder / f"{side}_tfrecords").mkdir()
        (folder / f"{side}_tfrecords" / f"ld_{side}00-{FILES}.tfrec").write_bytes(rng.bytes(256))
    diseases = ["Cassava Bacterial Blight (CBB)", "Cassava Brown Streak Disease (CBSD)", "Cassava Green Mottle (CGM)",
                "Cassava Mosaic Disease (CMD)", "Healthy"]  # fmt: skip
    (folder / "label_num_to_disease_map.json").write_text(json.dumps(dict(enumerate(map(str, diseases)))))
    return MediaShape("accuracy", "image", ("label",), int((~is_test).sum()), int(is_test.sum()))


TAGS = ["Accelerating_and_revving_and_vroom", "Accordion", "Bark", "Bass_drum", "Buzz", "Church_bell"]


def chord(path: Path, labels: list[int], rng: np.random.Generator) -> None:
    """Half a second of each label's pitch together, in noise (a clip with several tags)."""
    import soundfile

    t = np.arange(SAMPLE_RATE // 2) / SAMPLE_RATE
    clip = sum(0.3 * np.sin(2 * np.pi * (180 * 1.5**label) * t) for label in labels) + rng.normal(0, 0.05, t.size)
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(path, np.asarray(clip, dtype=np.float32), SAMPLE_RATE)


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


DISEASES = ["complex", "frog_eye_leaf_spot", "healthy", "powdery_mildew", "rust", "scab"]


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


def plant_pathology_2021_fgvc8(folder: Path, rng: np.random.Generator) -> MediaShape:
    """train.csv of `image,labels`, the labels a space-separated set of diseases (`scab frog_eye_leaf_spot`,
    `healthy`); JPEGs in `train_images/` and `test_images/`; the sample is `image,labels` with `healthy`. Graded by
    micro F1 over the sets."""
    rows, test_names = [], []
    for i in range(FILES):
        first = int(rng.integers(len(DISEASES)))
        labels = [first] if DISEASES[first] == "healthy" or rng.random() < 0.6 else sorted({first, (first + 1) % 6})
        name = f"{rng.bytes(8).hex()}.jpg"
        test = i % 5 == 4
        patches(folder / ("test_images" if test else "train_images") / name, labels, rng)
        if test:
            test_names.append(name)
        else:
            rows.append({"image": name, "labels": " ".join(DISEASES[k] for k in labels)})
    pd.DataFrame(rows).to_csv(folder / "train.csv", index=False)
    pd.DataFrame({"image": test_names, "labels": "healthy"}).to_csv(folder / "sample_submission.csv", index=False)
    named = sorted({label for row in rows for label in row["labels"].split()})
    return MediaShape("f1_micro", "image", tuple(named), len(rows), len(test_names))


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


MAKERS: dict[str, Callable[[Path, np.random.Generator], MediaShape]] = {
    "aerial-cactus-identification": aerial_cactus_identification,
    "histopathologic-cancer-detection": histopathologic_cancer_detection,
    "plant-seedlings-classification": plant_seedlings_classification,
    "dog-breed-identification": dog_breed_identification,
    "leaf-classification": leaf_classification,
    "siim-isic-melanoma-classification": siim_isic_melanoma_classification,
    "petfinder-pawpularity-score": petfinder_pawpularity_score,
    "plant-pathology-2020-fgvc7": plant_pathology_2020_fgvc7,
    "tensorflow-speech-recognition-challenge": tensorflow_speech_recognition_challenge,
    "iwildcam-2019-fgvc6": iwildcam_2019_fgvc6,
    "whale-categorization-playground": whale_categorization_playground,
    "dogs-vs-cats-redux-kernels-edition": dogs_vs_cats_redux_kernels_edition,
    "the-icml-2013-whale-challenge-right-whale-redux": the_icml_2013_whale_challenge_right_whale_redux,
    "aptos2019-blindness-detection": aptos2019_blindness_detection,
    "cassava-leaf-disease-classification": cassava_leaf_disease_classification,
    "freesound-audio-tagging-2019": freesound_audio_tagging_2019,
    "plant-pathology-2021-fgvc8": plant_pathology_2021_fgvc8,
    "seti-breakthrough-listen": seti_breakthrough_listen,
}
