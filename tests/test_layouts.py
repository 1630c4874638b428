"""Kaggle's file layouts, each arranged from files shaped like a real competition's (the folder a Kaggle download
unpacks to, or what a user hands `agent-k competitions add --data`): into the train and test tables every mission
reads, or refused in one line naming what the folder holds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agent_k.competition.metric import MANY_CLASSES
from agent_k.platforms.layouts import LayoutError, arrange_folder
from agent_k.platforms.layouts.media import labels_in_names
from agent_k.platforms.layouts.records import read_records
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.user_files import from_folder
from agent_k.platforms.targets import CompetitionInputError
from tests.conftest import run_cli

RNG = np.random.default_rng(7)


def _write(folder: Path, **tables: pd.DataFrame) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        frame.to_csv(folder / name.replace("__", "."), index=False)
    return folder


def test_labels_in_a_file_of_their_own_are_joined_to_the_training_rows(tmp_path: Path) -> None:
    # histopathologic-cancer-detection / ranzcr style: train_labels.csv beside the features
    features = pd.DataFrame({"Id": range(60), "x": RNG.normal(size=60)})
    labels = pd.DataFrame({"id": range(59, -1, -1), "label": RNG.integers(0, 2, 60)})  # other order, other spelling
    folder = _write(
        tmp_path / "raw",
        train__csv=features,
        train_labels__csv=labels,
        test__csv=pd.DataFrame({"id": range(60, 80), "x": RNG.normal(size=20)}),
        sample_submission__csv=pd.DataFrame({"id": range(60, 80), "label": 0}),
    )
    arranged = arrange_folder(folder, "labelled")
    assert arranged.id_column == "id" and arranged.targets == ["label"]
    assert len(arranged.train) == 60 and set(arranged.train.columns) == {"id", "x", "label"}
    merged = arranged.train.set_index("id")["label"]
    assert (merged.loc[labels["id"]].to_numpy() == labels["label"].to_numpy()).all(), "labels follow their ids"
    assert any("train_labels.csv" in note for note in arranged.notes)


def test_without_a_test_file_the_test_rows_are_the_sample_ids_with_features_from_a_table_of_every_row(
    tmp_path: Path,
) -> None:
    every_row = pd.DataFrame({"id": range(100), "x": RNG.normal(size=100), "kind": RNG.choice(["a", "b"], 100)})
    folder = tmp_path / "raw"
    _write(
        folder,
        train__csv=pd.DataFrame({"id": range(70), "target": RNG.normal(size=70)}),
        sample_submission__csv=pd.DataFrame({"id": range(70, 100), "target": 0.0}),
    )
    (folder / "records.jsonl").write_text("\n".join(json.dumps(r) for r in every_row.to_dict("records")))
    arranged = arrange_folder(folder, "no-test")
    assert arranged.test["id"].tolist() == list(range(70, 100))
    assert {"x", "kind"} <= set(arranged.test.columns) and {"x", "kind", "target"} <= set(arranged.train.columns)
    assert arranged.test.set_index("id")["x"].equals(every_row.set_index("id")["x"].loc[70:99])


def test_json_records_with_nested_fields_and_lists_become_columns(tmp_path: Path) -> None:
    # random-acts-of-pizza / whats-cooking style: train.json and test.json, an array of records
    def records(ids: range, labelled: bool) -> list[dict[str, object]]:
        rows = []
        for i in ids:
            row: dict[str, object] = {
                "request_id": f"t3_{i}",
                "request_text": "please a pizza for my family tonight" if i % 2 else "hungry student here",
                "meta": {"upvotes": int(i % 7), "account_age": float(i)},
                "ingredients": ["flour", "cheese"] if i % 3 else ["tomato"],
            }
            if labelled:
                row["requester_received_pizza"] = bool(i % 2)
            rows.append(row)
        return rows

    folder = tmp_path / "raw"
    folder.mkdir()
    (folder / "train.json").write_text(json.dumps(records(range(40), True)))
    (folder / "test.json").write_text(json.dumps(records(range(40, 50), False)))
    pd.DataFrame({"request_id": [f"t3_{i}" for i in range(40, 50)], "requester_received_pizza": 0}).to_csv(
        folder / "sampleSubmission.csv", index=False
    )
    arranged = arrange_folder(folder, "pizza")
    assert arranged.targets == ["requester_received_pizza"] and arranged.id_column == "request_id"
    assert {"meta.upvotes", "meta.account_age", "ingredients"} <= set(arranged.test.columns)
    assert arranged.train["ingredients"].iloc[1] == "flour cheese"


def test_an_extra_table_is_joined_on_the_key_it_shares(tmp_path: Path) -> None:
    # rossmann / favorita style: store.csv joined to train and test on Store
    stores = pd.DataFrame({"Store": range(5), "StoreType": list("abcab"), "Size": [10, 20, 30, 40, 50]})
    train = pd.DataFrame({"Id": range(50), "Store": RNG.integers(0, 5, 50), "Sales": RNG.normal(size=50)})
    test = pd.DataFrame({"Id": range(50, 60), "Store": RNG.integers(0, 5, 10)})
    folder = _write(
        tmp_path / "raw",
        train__csv=train,
        test__csv=test,
        store__csv=stores,
        sample_submission__csv=pd.DataFrame({"Id": test["Id"], "Sales": 0.0}),
    )
    arranged = arrange_folder(folder, "stores")
    assert arranged.test["Size"].tolist() == [10 * (s + 1) for s in test["Store"]]
    assert arranged.train["StoreType"].tolist() == [stores["StoreType"][s] for s in train["Store"]]


def test_a_sample_id_composed_of_test_columns_or_matched_by_position(tmp_path: Path) -> None:
    # store-item forecasts: the id is "store_item"; elsewhere the sample's ids are the test rows in order
    test = pd.DataFrame({"store": [1, 1, 2, 2], "item": [7, 8, 7, 8], "x": RNG.normal(size=4)})
    train = pd.DataFrame({"store": [1, 2] * 10, "item": [7, 8] * 10, "x": RNG.normal(size=20), "sales": 1.0})
    composed = _write(
        tmp_path / "composed",
        train__csv=train,
        test__csv=test,
        sample_submission__csv=pd.DataFrame({"id": test["store"].astype(str) + "_" + test["item"].astype(str),
                                             "sales": 0.0}),
    )  # fmt: skip
    arranged = arrange_folder(composed, "composed")
    assert arranged.test["id"].tolist() == ["1_7", "1_8", "2_7", "2_8"] and arranged.targets == ["sales"]
    assert "composed from the test columns ['store', 'item']" in " ".join(arranged.notes)

    positional = _write(
        tmp_path / "positional",
        train__csv=train,
        test__csv=test,
        sample_submission__csv=pd.DataFrame({"row_id": [101, 102, 103, 104], "sales": 0.0}),
    )
    arranged = arrange_folder(positional, "positional")
    assert arranged.test["row_id"].tolist() == [101, 102, 103, 104]
    assert "taken in row order" in " ".join(arranged.notes)


def test_a_target_given_as_one_hot_columns_is_one_class_column(tmp_path: Path) -> None:
    # leaf-classification / forest-cover style: the sample submission has a column per class
    classes = ["Acer", "Betula", "Quercus"]
    chosen = RNG.integers(0, 3, 45)
    one_hot = pd.DataFrame(np.eye(3, dtype=int)[chosen], columns=classes)
    train = pd.concat([pd.DataFrame({"id": range(45), "margin1": RNG.normal(size=45)}), one_hot], axis=1)
    folder = _write(
        tmp_path / "raw",
        train__csv=train,
        test__csv=pd.DataFrame({"id": range(45, 55), "margin1": RNG.normal(size=10)}),
        sample_submission__csv=pd.DataFrame({"id": range(45, 55), **{c: 1 / 3 for c in classes}}),
    )
    arranged = arrange_folder(folder, "leaves")
    assert arranged.targets == ["label"] and arranged.classes == classes
    assert arranged.train["label"].tolist() == [classes[c] for c in chosen]


@pytest.mark.parametrize(
    ("files", "named"),
    [(("jpg", "images"), "image files (.jpg)"), (("wav", "audio"), "audio files (.wav)")],
)
def test_a_folder_of_media_is_refused_in_one_line_naming_what_it_holds(
    tmp_path: Path, files: tuple[str, str], named: str
) -> None:
    suffix, folder_name = files
    folder = _write(
        tmp_path / "raw",
        train__csv=pd.DataFrame({"id": [f"f{i}" for i in range(30)], "label": 1}),
        sample_submission__csv=pd.DataFrame({"id": ["t0"], "label": 0}),
    )
    (folder / folder_name).mkdir()
    for i in range(30):
        (folder / folder_name / f"f{i}.{suffix}").write_bytes(b"\0")
    with pytest.raises(LayoutError) as refused:
        arrange_folder(folder, "media")
    assert named in str(refused.value) and "\n" not in str(refused.value)


def test_competitions_add_takes_a_kaggle_folder_and_scores_against_the_given_solution(
    home: Path, tmp_path: Path
) -> None:
    rows = 240
    x = RNG.normal(size=rows)
    frame = pd.DataFrame({"id": range(rows), "x": x, "noise": RNG.normal(size=rows), "y": (x > 0).astype(int)})
    train, test = frame.iloc[:180], frame.iloc[180:]
    folder = _write(
        tmp_path / "download",
        train__csv=train.drop(columns="y"),
        train_labels__csv=train[["id", "y"]],
        test__csv=test.drop(columns="y"),
        sample_submission__csv=test[["id"]].assign(y=0.5),
    )
    test[["id", "y"]].to_csv(tmp_path / "solution.csv", index=False)
    added = run_cli(
        "competitions", "add", "kaggle-shaped", "--data", str(folder), "--metric", "auc",
        "--solution", str(tmp_path / "solution.csv"),
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    public = home / "competitions" / "kaggle-shaped" / "public"
    assert set(pd.read_csv(public / "train.csv").columns) == {"id", "x", "noise", "y"}
    assert "y" not in pd.read_csv(public / "test.csv").columns

    perfect = tmp_path / "perfect.csv"
    test[["id", "y"]].to_csv(perfect, index=False)
    platform = LocalPlatform(home / "competitions")
    submission = asyncio.run(platform.submit("kaggle-shaped", perfect, "", "perfect"))
    assert submission.public_score == 1.0 and submission.private_score == 1.0

    media = _write(tmp_path / "photos", train__csv=train, sample_submission__csv=test[["id"]].assign(y=0))
    for i in range(25):
        (media / f"{i}.png").write_bytes(b"\0")
    refused = run_cli("competitions", "add", "photos", "--data", str(media), "--metric", "auc")
    assert refused.returncode == 2 and refused.stderr.strip().count("\n") == 0
    assert "25 image files (.png)" in refused.stderr


def test_an_index_pandas_wrote_into_a_table_is_dropped_and_nothing_else(tmp_path: Path) -> None:
    """`to_csv(index=True)` writes a nameless first column counting the rows (iwildcam-2019's sample is `,Id,Category`):
    it is no column of the table. A named column counting the rows, or a nameless one holding anything else, stays."""
    frame = pd.DataFrame({"Id": ["a", "b", "c"], "Category": [0, 1, 0]})
    frame.to_csv(tmp_path / "written.csv", index=True)
    assert list(read_records(tmp_path / "written.csv").columns) == ["Id", "Category"]
    frame.assign(id=[0, 1, 2])[["id", "Id", "Category"]].to_csv(tmp_path / "named.csv", index=False)
    assert list(read_records(tmp_path / "named.csv").columns) == ["id", "Id", "Category"]
    frame.set_index(pd.Index([5, 6, 7])).to_csv(tmp_path / "other.csv", index=True)
    assert list(read_records(tmp_path / "other.csv").columns) == ["Unnamed: 0", "Id", "Category"]


def test_the_part_of_a_file_name_that_is_its_class() -> None:
    """The class is the part of every name that takes a few word or small-number values (words first), never a
    date, a time, a counter or an id; where none is, or two are as likely, there is no answer."""
    dogs = [f"{animal}.{n}.jpg" for animal in ("cat", "dog") for n in range(6)]
    assert labels_in_names(dogs) == (["cat"] * 6 + ["dog"] * 6, "part 1")
    whales = [f"2009032{8 + i % 2}_{i * 3917:06d}_{i:03d}s3ms_TRAIN{i}_{i % 2}.aif" for i in range(12)]
    assert labels_in_names(whales) == ([str(i % 2) for i in range(12)], "part 1 from the end")
    assert labels_in_names([f"{i:08x}.jpg" for i in range(12)]) is None, "ids"
    assert labels_in_names([f"2009032{i % 2}_{i:06d}.aif" for i in range(12)]) is None, "a date and a time"
    assert (
        labels_in_names([f"{s}_{a}.png" for s in ("left", "right") for a in ("up", "down") for _ in range(3)]) is None
    )


def test_a_label_space_past_two_hundred_classes_is_entered_where_the_metric_reads_the_most_probable(
    home: Path, tmp_path: Path
) -> None:
    """300 classes: accuracy and top-1 error (the argmax) enter them; macro F1, whose rule is fitted class by class,
    refuses them in one line. Past MANY_CLASSES every metric does."""

    def folder(classes: int) -> Path:
        rows = 2 * classes + 60
        frame = pd.DataFrame({"id": range(rows), "x": RNG.normal(size=rows), "y": np.arange(rows) % classes})
        train, test = frame.iloc[: 2 * classes], frame.iloc[2 * classes :]
        return _write(tmp_path / str(classes), train__csv=train, test__csv=test.drop(columns="y"),
                      sample_submission__csv=test[["id"]].assign(y=0))  # fmt: skip

    platform = LocalPlatform(home / "competitions")
    tables = from_folder(folder(300), "many", [], solution=None)
    for metric in ("accuracy", "error_rate"):
        spec = platform.add(f"many-{metric.replace('_', '-')}", tables, metric=metric, references=False)
        assert spec.task.value == "multiclass" and len(spec.classes or []) == 300
    with pytest.raises(CompetitionInputError, match="the target has 300 classes"):
        platform.add("many-f1", tables, metric="f1_macro", references=False)
    past = from_folder(folder(MANY_CLASSES + 1), "past", [], solution=None)
    with pytest.raises(CompetitionInputError, match=f"the target has {MANY_CLASSES + 1} classes"):
        platform.add("past", past, metric="accuracy", references=False)
