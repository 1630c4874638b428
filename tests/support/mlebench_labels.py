"""Folders shaped like MLE-bench's image competitions whose labels are in no training table (openai/mle-bench,
`mlebench/competitions/<slug>/prepare.py`): COCO-style metadata (a JSON document of `images`, `annotations` of
`image_id` and `category_id`, and `categories` for training; `images` alone, or a bare list of them, for the test)
and class folders beside the test folder. Each maker keeps the real competition's file names, keys and quirks;
its class count is small (`classes_there` says the real one where it matters)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from tests.support.media_files import FILES, MediaShape, picture

CLASSES = 3


def _split(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each image's category and whether it is a test image; every category is on both sides."""
    categories = np.arange(FILES) % CLASSES
    return categories, rng.permutation(np.arange(FILES) % 4 == 3)


def _dump(path: Path, document: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=4, sort_keys=True))  # as prepare.py writes it


def iwildcam_2020_fgvc7(folder: Path, rng: np.random.Generator) -> MediaShape:
    """`iwildcam2020_train_annotations.json` (annotations with a `count`, images with `location`, `seq_id`, …),
    `iwildcam2020_test_information.json` (images and categories, no annotations), the megadetector's results
    beside them, `train/<id>.jpg`, `test/<id>.jpg`, and a sample `Id,Category` (accuracy)."""
    categories, is_test = _split(rng)
    ids = [f"{rng.bytes(4).hex()}-21bc-11ea-a13a-137349068a90" for _ in range(FILES)]
    images = [{"id": ident, "file_name": f"{ident}.jpg", "location": i % 7, "seq_id": rng.bytes(4).hex(),
               "seq_num_frames": 1, "frame_num": 1, "datetime": "2013-06-05 05:44:19.000", "width": 48,
               "height": 48} for i, ident in enumerate(ids)]  # fmt: skip
    for image, category, test in zip(images, categories, is_test, strict=True):
        picture(folder / ("test" if test else "train") / str(image["file_name"]), int(category), rng)
    kinds = [{"id": c, "name": name, "count": 10} for c, name in enumerate(("empty", "deer", "fox"))]
    labelled = [(image, c) for image, c, test in zip(images, categories, is_test, strict=True) if not test]
    annotations = [{"id": f"a{i}", "image_id": image["id"], "category_id": int(c), "count": 1}
                   for i, (image, c) in enumerate(labelled)]  # fmt: skip
    info = {"version": "2020", "description": "iWildCam 2020"}
    train_images = [image for image, test in zip(images, is_test, strict=True) if not test]
    test_images = [image for image, test in zip(images, is_test, strict=True) if test]
    _dump(folder / "iwildcam2020_train_annotations.json",
          {"annotations": annotations, "images": train_images, "categories": kinds, "info": info})  # fmt: skip
    _dump(folder / "iwildcam2020_test_information.json", {"images": test_images, "categories": kinds, "info": info})
    _dump(folder / "iwildcam2020_megadetector_results.json", {"images": [], "detection_categories": {"1": "animal"}})
    test_ids = [image["id"] for image in test_images]
    pd.DataFrame({"Id": test_ids, "Category": rng.integers(0, 676, len(test_ids))}).to_csv(
        folder / "sample_submission.csv", index=False
    )
    solution = pd.DataFrame({"Id": test_ids, "Category": categories[is_test]})
    return MediaShape("accuracy", "image", ("Category",), len(train_images), len(test_images), solution=solution,
                      not_features=("category_id", "count"), classes_there=216)  # fmt: skip


def _herbarium_2020(folder: Path, rng: np.random.Generator, root: str, classes_there: int) -> MediaShape:
    """`<root>/train/metadata.json` (COCO: annotations, categories, images, info, licenses, regions) naming
    `images/<category // 100:03d>/<category % 100:02d>/<id>.jpg`, `<root>/test/metadata.json` (images, info,
    licenses) naming `images/<i // 1000:03d>/<i>.jpg` with the ids `"0"`, `"1"`, …, and a sample `Id,Predicted`
    (macro F1)."""
    categories, is_test = _split(rng)
    train, test, answers = [], [], []
    for number, (category, on_test) in enumerate(zip(categories, is_test, strict=True)):
        if on_test:
            ident = str(len(test))
            name = f"images/{len(test) // 1000:03d}/{ident}.jpg"
            test.append({"file_name": name, "height": 48, "id": ident, "license": 0, "width": 48})
            answers.append(int(category))
            picture(folder / root / "test" / name, int(category), rng)
        else:
            ident = 1000 + number
            name = f"images/{category // 100:03d}/{category % 100:02d}/{ident}.jpg"
            train.append({"file_name": name, "height": 48, "id": ident, "license": 0, "width": 48})
            picture(folder / root / "train" / name, int(category), rng)
    annotations = [{"category_id": int(c), "id": image["id"], "image_id": image["id"], "region_id": 3}
                   for image, c in zip(train, categories[~is_test], strict=True)]  # fmt: skip
    kinds = [{"family": "Asteraceae", "genus": "Aster", "id": c, "name": f"Aster sp{c}"} for c in range(CLASSES)]
    common = {"info": {"year": 2020}, "licenses": [{"id": 0, "name": "Public Domain"}]}
    _dump(folder / root / "train" / "metadata.json",
          {"annotations": annotations, "categories": kinds, "images": train, "regions": [{"id": 3, "name": "NY"}],
           **common})  # fmt: skip
    _dump(folder / root / "test" / "metadata.json", {"images": test, **common})
    test_ids = [image["id"] for image in test]
    pd.DataFrame({"Id": test_ids, "Predicted": 0}).to_csv(folder / "sample_submission.csv", index=False)
    solution = pd.DataFrame({"Id": test_ids, "Predicted": answers})
    return MediaShape("f1_macro", "image", ("Predicted",), len(train), len(test), solution=solution,
                      not_features=("category_id", "region_id", "file_name"), classes_there=classes_there)  # fmt: skip


def herbarium_2020_fgvc7(folder: Path, rng: np.random.Generator) -> MediaShape:
    return _herbarium_2020(folder, rng, "nybg2020", classes_there=32_093)


def herbarium_2021_fgvc8(folder: Path, rng: np.random.Generator) -> MediaShape:
    """As 2020's, at the folder's root: `train/metadata.json`, `test/metadata.json`."""
    return _herbarium_2020(folder, rng, ".", classes_there=64_500)


def herbarium_2022_fgvc9(folder: Path, rng: np.random.Generator) -> MediaShape:
    """`train_metadata.json` whose images are keyed `image_id` (`"00002__001"`) and lie in
    `train_images/<category // 100:03d>/<category % 100:02d>/`, and `test_metadata.json`, a bare list of images
    (`image_id` `"0"`, file `<i // 1000:03d>/test-<i:06d>.jpg` under `test_images/`): the test id is no file's
    name. Sample `Id,Predicted` (macro F1)."""
    categories, is_test = _split(rng)
    train, test, annotations, answers = [], [], [], []
    for category, on_test in zip(categories, is_test, strict=True):
        if on_test:
            index = len(test)
            name = f"{index // 1000:03d}/test-{index:06d}.jpg"
            test.append({"file_name": name, "image_id": str(index), "license": 0})
            answers.append(int(category))
            picture(folder / "test_images" / name, int(category), rng)
        else:
            ident = f"{category:05d}__{sum(a['category_id'] == category for a in annotations) + 1:03d}"
            name = f"{category // 100:03d}/{category % 100:02d}/{ident}.jpg"
            train.append({"file_name": name, "image_id": ident, "license": 0})
            annotations.append({"category_id": int(category), "genus_id": 1, "image_id": ident, "institution_id": 0})
            picture(folder / "train_images" / name, int(category), rng)
    _dump(folder / "train_metadata.json",
          {"annotations": annotations, "images": train, "categories": [{"category_id": c} for c in range(CLASSES)],
           "genera": [{"genus_id": 1, "genus": "Aster"}], "institutions": [{"institution_id": 0}],
           "license": [{"id": 0}]})  # fmt: skip
    _dump(folder / "test_metadata.json", test)
    test_ids = [image["image_id"] for image in test]
    pd.DataFrame({"Id": test_ids, "Predicted": 42}).to_csv(folder / "sample_submission.csv", index=False)
    solution = pd.DataFrame({"Id": test_ids, "Predicted": answers})
    return MediaShape("f1_macro", "image", ("Predicted",), len(train), len(test), solution=solution,
                      not_features=("category_id", "file_name"), classes_there=15_501)  # fmt: skip


def inaturalist_2019_fgvc6(folder: Path, rng: np.random.Generator) -> MediaShape:
    """`train2019.json` (COCO) naming `train_val2019/<group>/<category>/<hash>.jpg`, `val2019.json` beside it as
    Kaggle shipped it, `test2019.json` (images, info, licenses) naming `test2019/<hash>.jpg` with the images'
    integer ids, and `kaggle_sample_submission.csv` of `id,predicted` (top-1 error: one minus accuracy)."""
    categories, is_test = _split(rng)
    train, test, answers = [], [], []
    for number, (category, on_test) in enumerate(zip(categories, is_test, strict=True)):
        digest = rng.bytes(16).hex()
        if on_test:
            name = f"test2019/{digest}.jpg"
            test.append({"file_name": name, "height": 48, "id": 200_000 + number, "license": 0, "width": 48})
            answers.append(int(category))
        else:
            name = f"train_val2019/Plants/{400 + category}/{digest}.jpg"
            train.append({"file_name": name, "height": 48, "id": number, "license": 0, "width": 48})
        picture(folder / name, int(category), rng)
    annotations = [{"category_id": int(c), "id": image["id"], "image_id": image["id"]}
                   for image, c in zip(train, categories[~is_test], strict=True)]  # fmt: skip
    kinds = [{"id": c, "name": str(400 + c), "kingdom": "Plantae"} for c in range(CLASSES)]
    common = {"info": {"year": 2019}, "licenses": [{"id": 0}]}
    _dump(folder / "train2019.json", {"annotations": annotations, "categories": kinds, "images": train, **common})
    _dump(folder / "val2019.json", {"annotations": annotations[:2], "categories": kinds, "images": train[:2], **common})
    _dump(folder / "test2019.json", {"images": test, **common})
    test_ids = [image["id"] for image in test]
    pd.DataFrame({"id": test_ids, "predicted": 7}).to_csv(folder / "kaggle_sample_submission.csv", index=False)
    solution = pd.DataFrame({"id": test_ids, "predicted": answers})
    return MediaShape(
        "accuracy",
        "image",
        ("predicted",),
        len(train),
        len(test),
        solution=solution,
        not_features=("category_id", "file_name"),
        classes_there=1_010,
    )


def alaska2_image_steganalysis(folder: Path, rng: np.random.Generator) -> MediaShape:
    """No training folder: `Cover/<n:05d>.jpg` and the same names again under `JMiPOD/`, `JUNIWARD/` and `UERD/`
    (each cover with a message hidden three ways), `Test/<n:04d>.jpg`, and a sample `Id,Label`. Graded by a
    weighted AUC of cover against any hidden message, which AGENT-K does not compute: the folders are read as four
    classes, scored here by accuracy."""
    folders = ("Cover", "JMiPOD", "JUNIWARD", "UERD")
    covers = FILES // 5
    for number in range(1, covers + 1):
        for label, name in enumerate(folders):
            picture(folder / name / f"{number:05d}.jpg", label, rng)
    tests = [f"{n:04d}.jpg" for n in range(1, covers + 1)]
    for name in tests:
        picture(folder / "Test" / name, int(rng.integers(0, 4)), rng)
    pd.DataFrame({"Id": tests, "Label": 0}).to_csv(folder / "sample_submission.csv", index=False)
    return MediaShape("accuracy", "image", ("Label",), covers * len(folders), covers)
