"""Folders shaped like the public folders of MLE-bench's image competitions (`tests/support/mlebench_media.py`
lists every maker)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from tests.support.media_files import FILES, MediaShape, patches, picture, split_files


def aerial_cactus_identification(folder: Path, rng: np.random.Generator, files: int = FILES) -> MediaShape:
    """train.csv of `id,has_cactus` whose ids carry `.jpg`; train/ and test/ folders, and the zips MLE-bench
    leaves beside them (their copies are not counted twice)."""
    labels, is_test = split_files(files, rng)
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
    labels, is_test = split_files(FILES, rng)
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
    labels, is_test = split_files(FILES, rng)
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
    labels, is_test = split_files(FILES, rng)
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
    labels, is_test = split_files(FILES, rng)
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


def aptos2019_blindness_detection(folder: Path, rng: np.random.Generator) -> MediaShape:
    """train.csv of `id_code,diagnosis` (grades 0..4, ids without the extension), PNGs in `train_images/` and
    `test_images/`, test.csv of bare ids; the sample is the test rows with `diagnosis` 0. Quadratic weighted kappa."""
    _, is_test = split_files(FILES, rng)
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
    _, is_test = split_files(FILES, rng)
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


DISEASES = ["complex", "frog_eye_leaf_spot", "healthy", "powdery_mildew", "rust", "scab"]


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
