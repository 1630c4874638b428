"""Image and audio competitions entered from folders shaped like the real downloads (`tests/support/
mlebench_media.py`), zips of them included, with the practitioner's baselines on their boards; and refused in one
line, naming the pip command, where the media extra is not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agent_k.competition.models import MEDIA_FOLDER
from agent_k.media import INSTALL
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.user_files import from_folder
from tests.conftest import run_cli
from tests.support.mlebench_media import MAKERS

pytestmark = pytest.mark.usefixtures("media_home")


@pytest.mark.parametrize("slug", sorted(MAKERS))
def test_a_media_folder_shaped_like_the_real_download_is_entered(home: Path, tmp_path: Path, slug: str) -> None:
    shape = MAKERS[slug](tmp_path / slug, np.random.default_rng(4))
    tables = from_folder(tmp_path / slug, slug, [], solution=None, scratch=tmp_path / "scratch")
    # the layout alone: its board (reference teams) is tested elsewhere
    spec = LocalPlatform(home / "competitions").add(slug, tables, metric=shape.metric, references=False)  # type: ignore[arg-type]

    assert spec.media is not None and spec.media.kind == shape.kind
    assert spec.top_k == shape.top_k, "a map@k ranks as many labels a row as the sample lists"
    assert (spec.n_train, spec.n_test) == (shape.n_train, shape.n_test)
    assert spec.target_columns == list(shape.targets)
    public = home / "competitions" / slug / "public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    for path in (*train[spec.media.column], *test[spec.media.column]):
        assert (public / MEDIA_FOLDER / path).is_file(), path
    assert set(shape.features) <= set(test.columns) and not set(shape.not_features) & set(train.columns)


def test_a_media_board_holds_the_practitioners_baselines(home: Path, tmp_path: Path) -> None:
    shape = MAKERS["aerial-cactus-identification"](tmp_path / "cactus", np.random.default_rng(2))
    assert shape.solution is not None
    shape.solution.to_csv(tmp_path / "solution.csv", index=False)
    tables = from_folder(tmp_path / "cactus", "cactus", [], solution=tmp_path / "solution.csv")
    spec = LocalPlatform(home / "competitions").add("cactus", tables, metric="auc")
    board = json.loads((home / "competitions" / "cactus" / "private" / "leaderboard.json").read_text())["teams"]
    scores = {entry["team"]: entry["private_score"] for entry in board}
    assert set(scores) == {"reference/constant-prior", "reference/embeddings-224px-logistic",
                           "reference/colour-histogram-lightgbm"}  # fmt: skip
    assert scores["reference/embeddings-224px-logistic"] > scores["reference/constant-prior"] == 0.5
    assert {entry["train_rows"] for entry in board} == {spec.n_train}, "every team learns from every file"


def test_classes_named_only_in_the_file_names_are_learned(home: Path, tmp_path: Path) -> None:
    """dogs-vs-cats: `cat.<n>.jpg` and `dog.<n>.jpg` (the counter is no class), and `label` is the chance of a dog:
    the second class, as a binary submission's probability is. The practitioner's baseline, trained on the classes
    the names give, beats the prior on the hidden answers (given by name)."""
    shape = MAKERS["dogs-vs-cats-redux-kernels-edition"](tmp_path / "dogs", np.random.default_rng(3))
    assert shape.solution is not None
    named = shape.solution.assign(label=shape.solution["label"].map({0: "cat", 1: "dog"}))
    named.to_csv(tmp_path / "solution.csv", index=False)
    tables = from_folder(tmp_path / "dogs", "dogs", [], solution=tmp_path / "solution.csv")
    assert any("names carry their class (part 1" in note for note in tables.notes), tables.notes
    spec = LocalPlatform(home / "competitions").add("dogs", tables, metric="logloss")
    assert spec.classes == ["cat", "dog"] and spec.task.value == "binary"
    board = json.loads((home / "competitions" / "dogs" / "private" / "leaderboard.json").read_text())["teams"]
    scores = {entry["team"]: entry["private_score"] for entry in board}
    assert scores["reference/embeddings-224px-logistic"] < scores["reference/constant-prior"], scores


def test_an_image_there_in_two_formats_is_read_once_in_the_one_that_decodes(tmp_path: Path) -> None:
    """siim-isic-melanoma: each image is `jpeg/train/<name>.jpg` and `train/<name>.dcm`; the table names it by
    `<name>`. The JPEG is read (the kind's formats, most common first), and the notes say so."""
    MAKERS["siim-isic-melanoma-classification"](tmp_path / "siim", np.random.default_rng(6))
    tables = from_folder(tmp_path / "siim", "siim", [], solution=None)
    paths = [*tables.train["path"], *tables.test["path"]]
    assert all(path.startswith("jpeg/") and path.endswith(".jpg") for path in paths), paths[:3]
    assert "files are there as .dcm and .jpg under one name: the .jpg copy of each is read" in tables.notes


def test_zips_of_media_are_read_without_touching_the_folder(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "download"
    shape = MAKERS["aerial-cactus-identification"](folder, np.random.default_rng(8))
    for side in ("train", "test"):
        shutil.rmtree(folder / side)  # as Kaggle ships it: train.zip and test.zip only
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    added = run_cli("competitions", "add", "cactus", "--data", str(folder), "--metric", "auc")
    assert added.returncode == 0, added.stderr
    spec = LocalPlatform(home / "competitions").ensure("cactus")
    assert (spec.n_train, spec.n_test) == (shape.n_train, shape.n_test)
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
    assert not list((home / "competitions").glob(".unzipped-*")), "the extraction is cleaned up"


def _hide_media_modules(folder: Path) -> dict[str, str]:
    """An environment where the media extra's modules cannot be imported (a real ImportError, as without it)."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        "import sys\n"
        "class Hidden:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in {'onnxruntime', 'torch', 'librosa', 'soundfile', 'PIL'}:\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hidden())\n"
    )
    return {"PYTHONPATH": str(folder)}


def test_without_the_extra_a_media_competition_is_refused_naming_the_pip_command_and_tables_run(
    home: Path, tmp_path: Path
) -> None:
    hidden = _hide_media_modules(tmp_path / "site")
    check = subprocess.run([sys.executable, "-c", "import PIL"], env={**os.environ, **hidden}, capture_output=True)
    assert check.returncode != 0, "the extra's modules are hidden"
    refused = run_cli("run", "--competition", "synth-sounds", "--time-budget", "30", env=hidden)
    assert refused.returncode == 2 and refused.stderr.strip().count("\n") == 0, refused.stderr
    assert INSTALL in refused.stderr and "audio" in refused.stderr
    MAKERS["plant-seedlings-classification"](tmp_path / "plants", np.random.default_rng(0))
    added = run_cli("competitions", "add", "plants", "--data", str(tmp_path / "plants"), "--metric", "accuracy",
                    env=hidden)  # fmt: skip
    assert added.returncode == 2 and INSTALL in added.stderr and "\n" not in added.stderr.strip()
    tables = run_cli("competitions", "show", "breast-cancer", env=hidden)  # made here: its references too
    assert tables.returncode == 0, "a competition of tables needs none of the extra"


def test_nested_class_folders_keep_their_whole_path(tmp_path: Path) -> None:
    """herbarium's images lie in `train/images/<category // 100>/<category % 100>/`: the leaf folder's name alone
    would merge `000/05` with `001/05`. Each class is its folder's path below the folder all of them share."""
    from agent_k.platforms.layouts import arrange_folder
    from tests.support.mlebench_media import picture

    rng = np.random.default_rng(7)
    classes = ["000/05", "001/05", "000/17", "001/17"]
    for i in range(40):
        label = i % len(classes)
        side = Path("test", "images") if i % 5 == 4 else Path("train", "images", classes[label])
        picture(tmp_path / "nested" / side / f"{i:05d}.jpg", label, rng)
    tests = sorted(p.name for p in (tmp_path / "nested" / "test" / "images").iterdir())
    pd.DataFrame({"Id": tests, "Predicted": "000/05"}).to_csv(tmp_path / "nested" / "sample_submission.csv",
                                                               index=False)  # fmt: skip
    arranged = arrange_folder(tmp_path / "nested", "nested")
    assert arranged.targets == ["Predicted"]
    assert sorted(arranged.train["Predicted"].unique()) == sorted(classes)
    assert all(p.split("/")[-2] in ("05", "17") for p in arranged.train["path"])
    assert any("4 classes" in note for note in arranged.notes), arranged.notes


def test_a_target_given_as_sets_of_labels_becomes_a_column_per_label(tmp_path: Path) -> None:
    """freesound-audio-tagging-2019: `labels` holds a comma-separated set of tags, the sample a score per tag, and
    two training tables (curated and noisy) name the clips: both are read, and each row's set becomes its 0/1
    tag columns."""
    from tests.support.mlebench_media import TAGS

    slug = "freesound-audio-tagging-2019"
    MAKERS[slug](tmp_path / slug, np.random.default_rng(4))
    tables = from_folder(tmp_path / slug, slug, [], solution=None, scratch=tmp_path / "scratch")
    assert tables.targets == TAGS and "labels" not in tables.train.columns
    listed = pd.concat([pd.read_csv(tmp_path / slug / f"{side}.csv") for side in ("train_curated", "train_noisy")])
    by_name = dict(zip(listed["fname"], listed["labels"].str.split(","), strict=True))
    for _, row in tables.train.iterrows():
        assert {tag for tag in TAGS if row[tag] == 1} == set(by_name[row["fname"]])
    assert len(tables.train) == len(listed), "the noisy table's rows are added to the curated table's"
    assert any("sets of labels in 'labels'" in note for note in tables.notes), tables.notes


def test_arrays_are_read_and_their_board_beats_the_prior(home: Path, tmp_path: Path) -> None:
    """seti-breakthrough-listen: a `.npy` cadence a row. The array kind's reader summarises each array (whole and
    per look) in the sandboxed featurisation job, and the board's statistics team, trained on those summaries,
    beats the constant prior on the hidden answers."""
    shape = MAKERS["seti-breakthrough-listen"](tmp_path / "seti", np.random.default_rng(2))
    assert shape.solution is not None
    shape.solution.to_csv(tmp_path / "solution.csv", index=False)
    tables = from_folder(tmp_path / "seti", "seti", [], solution=tmp_path / "solution.csv", scratch=tmp_path / "s")
    spec = LocalPlatform(home / "competitions").add("seti", tables, metric="auc")
    assert spec.media is not None and spec.media.kind == "array"
    board = json.loads((home / "competitions" / "seti" / "private" / "leaderboard.json").read_text())["teams"]
    scores = {entry["team"]: entry["private_score"] for entry in board}
    strong = next(team for team in scores if team.startswith("reference/array-statistics"))
    assert scores[strong] > scores["reference/constant-prior"] == 0.5, scores
