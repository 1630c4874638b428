"""Small folders shaped like the public folders of MLE-bench's competitions (openai/mle-bench,
`mlebench/competitions/<slug>/prepare.py`): the same file names, columns, value types and quirks, with a few
hundred synthetic rows whose target the features explain, so a mission can learn it.

Each maker writes one folder and returns how a user would add it (`--metric`, `--target` where the files do not
say) and what the arranged tables must hold.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

ROWS = 240
TEST_SHARE = 0.25


@dataclass(frozen=True)
class Shape:
    metric: str
    targets: tuple[str, ...]
    """The target columns of the arranged training table."""
    target_option: tuple[str, ...] = ()
    """What the user passes as `--target` (the files do not say)."""
    not_features: tuple[str, ...] = ()
    """Training columns that must not reach the test table (train-only fields)."""
    n_test: int = 0
    notes: tuple[str, ...] = field(default=())
    """Words the arranged notes must mention."""


def _split(frame: pd.DataFrame, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    test = rng.random(len(frame)) < TEST_SHARE
    return frame[~test].reset_index(drop=True), frame[test].reset_index(drop=True)


def _csv(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)


def spaceship_titanic(
    folder: Path, rng: np.random.Generator, *, as_integers: bool = False, answers: Path | None = None
) -> Shape:
    """Booleans written as True/False (CryoSleep, VIP and the target Transported); `answers`: where MLE-bench's
    `prepare.py` writes the test rows with their labels (`private/test.csv`)."""
    n = ROWS
    cryo = rng.random(n) < 0.35
    spend = np.where(cryo, 0.0, rng.gamma(1.0, 400.0, n)).round()
    transported = cryo | (rng.random(n) < 0.15)
    frame = pd.DataFrame({
        "PassengerId": [f"{g:04d}_{m:02d}" for g, m in zip(range(1, n + 1), rng.integers(1, 4, n), strict=True)],
        "HomePlanet": rng.choice(["Earth", "Europa", "Mars"], n),
        "CryoSleep": cryo,
        "Cabin": [f"{deck}/{i}/{rng.choice(['P', 'S'])}" for i, deck in enumerate(rng.choice(list("ABCDEFG"), n))],
        "Destination": rng.choice(["TRAPPIST-1e", "PSO J318.5-22", "55 Cancri e"], n),
        "Age": rng.integers(0, 80, n).astype(float),
        "VIP": rng.random(n) < 0.05,
        "RoomService": spend, "FoodCourt": spend / 2, "ShoppingMall": 0.0, "Spa": spend / 3, "VRDeck": 0.0,
        "Name": [f"Name{i} Family{i % 37}" for i in range(n)],
        "Transported": transported.astype(int) if as_integers else transported,
    })  # fmt: skip
    train, test = _split(frame, rng)
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns="Transported"), folder / "test.csv")
    _csv(test[["PassengerId"]].assign(Transported=0 if as_integers else False), folder / "sample_submission.csv")
    if answers is not None:
        _csv(test, answers)
    return Shape("accuracy", ("Transported",), n_test=len(test))


def random_acts_of_pizza(folder: Path, rng: np.random.Generator) -> Shape:
    """JSON records; the training records carry fields known only after the request ("..._at_retrieval", the
    giver, the flair), and the target is a JSON boolean; zipped copies of both files lie beside them."""
    n = ROWS
    received = rng.random(n) < 0.3
    words = np.where(received, "please grateful family", "want pizza now")
    records = [
        {
            "request_id": f"t3_{i:05x}",
            "request_title": f"[Request] {w}",
            "request_text_edit_aware": f"{w} story {i % 11}",
            "requester_account_age_in_days_at_request": float(rng.gamma(2.0, 100.0)),
            "requester_number_of_posts_at_request": int(rng.integers(0, 50)),
            "requester_subreddits_at_request": ["pizza", "food"][: int(rng.integers(0, 3))],
            "unix_timestamp_of_request": 1.3e9 + i * 1000.0,
            "requester_username": f"user{i}",
            "giver_username_if_known": "N/A" if not r else f"giver{i}",
            "number_of_upvotes_of_request_at_retrieval": int(rng.integers(0, 30)),
            "request_number_of_comments_at_retrieval": int(rng.integers(0, 20)) + 5 * int(r),
            "requester_user_flair": "shroom" if r else None,
            "post_was_edited": bool(rng.random() < 0.1),
            "requester_received_pizza": bool(r),
        }
        for i, (w, r) in enumerate(zip(words, received, strict=True))
    ]
    test_fields = [k for k in records[0] if not k.endswith("_at_retrieval")]
    test_fields = [k for k in test_fields if k not in ("giver_username_if_known", "requester_user_flair",
                                                       "post_was_edited", "requester_received_pizza")]  # fmt: skip
    is_test = rng.random(n) < TEST_SHARE
    train = [r for r, t in zip(records, is_test, strict=True) if not t]
    test = [{k: r[k] for k in test_fields} for r, t in zip(records, is_test, strict=True) if t]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.json").write_text(json.dumps(train, indent=4))
    (folder / "test.json").write_text(json.dumps(test, indent=4))
    shutil.make_archive(str(folder / "train"), "zip", folder, "train.json")
    shutil.make_archive(str(folder / "test"), "zip", folder, "test.json")
    sample = pd.DataFrame({"request_id": [r["request_id"] for r in test], "requester_received_pizza": 0})
    _csv(sample, folder / "sampleSubmission.csv")
    train_only = ("giver_username_if_known", "requester_user_flair", "post_was_edited",
                  "number_of_upvotes_of_request_at_retrieval", "request_number_of_comments_at_retrieval")  # fmt: skip
    return Shape("auc", ("requester_received_pizza",), not_features=train_only, n_test=len(test), notes=("only",))


def new_york_city_taxi_fare_prediction(folder: Path, rng: np.random.Generator) -> Shape:
    """No train.csv: `labels.csv` is the whole training table (key, fare_amount and the features)."""
    n = ROWS
    lon, lat = -73.98 + rng.normal(0, 0.03, (2, n))
    dlon, dlat = -73.98 + rng.normal(0, 0.03, (2, n))
    frame = pd.DataFrame({
        "key": [f"2012-01-{1 + i % 28:02d} 10:{i % 60:02d}:00.000000{i}" for i in range(n)],
        "fare_amount": (2.5 + 100 * np.hypot(lon - dlon, lat - dlat) + rng.normal(0, 0.5, n)).round(2),
        "pickup_datetime": [f"2012-01-{1 + i % 28:02d} 10:{i % 60:02d}:00 UTC" for i in range(n)],
        "pickup_longitude": lon, "pickup_latitude": lat, "dropoff_longitude": dlon, "dropoff_latitude": dlat,
        "passenger_count": rng.integers(1, 6, n),
    })  # fmt: skip
    train, test = _split(frame, rng)
    _csv(train, folder / "labels.csv")
    _csv(test.drop(columns="fare_amount"), folder / "test.csv")
    _csv(test[["key"]].assign(fare_amount=11.35), folder / "sample_submission.csv")
    (folder / "GCP-Coupons-Instructions.rtf").write_text("{\\rtf1 coupons}")
    return Shape("rmse", ("fare_amount",), n_test=len(test))


def detecting_insults_in_social_commentary(folder: Path, rng: np.random.Generator) -> Shape:
    """No id anywhere: the sample submission (`sample_submission_null.csv`) is Insult, Date, Comment, its rows
    those of the test file."""
    n = ROWS
    insult = rng.random(n) < 0.3
    comments = [f'"you are {"an idiot" if x else "right"} about {i}"' for i, x in enumerate(insult)]
    dates = [f"2012061{i % 10}{i % 24:02d}0000Z" if i % 5 else "" for i in range(n)]
    frame = pd.DataFrame({"Insult": insult.astype(int), "Date": dates, "Comment": comments})
    train, test = _split(frame, rng)
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns="Insult"), folder / "test.csv")
    _csv(test.assign(Insult=0), folder / "sample_submission_null.csv")
    return Shape("auc", ("Insult",), n_test=len(test))


def leaf_classification(folder: Path, rng: np.random.Generator) -> Shape:
    """192 numeric features in train.csv, an `images/` folder of every leaf's silhouette beside them, and a
    sample submission with one probability column per species."""
    species = ["Acer_Capillipes", "Acer_Circinatum", "Quercus_Rubra", "Salix_Intergra"]
    n = ROWS
    label = rng.integers(0, len(species), n)
    features = {f"{kind}{j}": rng.normal(label * (j % 3), 1.0) for kind in ("margin", "shape", "texture")
                for j in range(1, 65)}  # fmt: skip
    frame = pd.DataFrame({"id": np.arange(1, n + 1), "species": np.array(species)[label], **features})
    train, test = _split(frame, rng)
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns="species"), folder / "test.csv")
    _csv(test[["id"]].assign(**{s: 1 / len(species) for s in species}), folder / "sample_submission.csv")
    (folder / "images").mkdir()
    for i in frame["id"]:
        (folder / "images" / f"{i}.jpg").write_bytes(b"\xff\xd8\xff\xe0 not a real jpeg")
    return Shape("logloss", ("species",), n_test=len(test))


def playground_series_s3e18(folder: Path, rng: np.random.Generator) -> Shape:
    """Six targets EC1..EC6 in train.csv; the sample submission asks for EC1 and EC2 only."""
    n = ROWS
    x = rng.normal(size=(n, 4))
    frame = pd.DataFrame({"id": range(n), "BertzCT": x[:, 0], "Chi1": x[:, 1], "EState_VSA1": x[:, 2],
                          "fr_COO": rng.integers(0, 2, n), "NumHeteroatoms": x[:, 3]})  # fmt: skip
    for k in range(1, 7):
        frame[f"EC{k}"] = (x[:, k % 4] + rng.normal(0, 0.5, n) > 0).astype(int)
    train, test = _split(frame, rng)
    ecs = [f"EC{k}" for k in range(1, 7)]
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns=ecs), folder / "test.csv")
    _csv(test[["id"]].assign(EC1=0.5, EC2=0.5), folder / "sample_submission.csv")
    return Shape("mean_auc", ("EC1", "EC2"), not_features=("EC3", "EC4", "EC5", "EC6"), n_test=len(test))


def lmsys_chatbot_arena(folder: Path, rng: np.random.Generator) -> Shape:
    """The models' names are in train.csv only; the outcome is three one-hot columns."""
    n = ROWS
    winner = rng.integers(0, 3, n)
    frame = pd.DataFrame({
        "id": rng.choice(10**8, n, replace=False),
        "model_a": rng.choice(["gpt-4", "llama-2"], n), "model_b": rng.choice(["claude-2", "vicuna"], n),
        "prompt": [f'["question {i}"]' for i in range(n)],
        "response_a": [f'["{"long detailed answer " * (3 if w == 0 else 1)}"]' for w in winner],
        "response_b": [f'["{"long detailed answer " * (3 if w == 1 else 1)}"]' for w in winner],
        "winner_model_a": (winner == 0).astype(int), "winner_model_b": (winner == 1).astype(int),
        "winner_tie": (winner == 2).astype(int),
    })  # fmt: skip
    train, test = _split(frame, rng)
    outcome = ["winner_model_a", "winner_model_b", "winner_tie"]
    _csv(train, folder / "train.csv")
    _csv(test[["id", "prompt", "response_a", "response_b"]], folder / "test.csv")
    _csv(test[["id"]].assign(**dict.fromkeys(outcome, 1 / 3)), folder / "sample_submission.csv")
    return Shape("logloss", ("label",), not_features=("model_a", "model_b"), n_test=len(test))


def jigsaw_unintended_bias(folder: Path, rng: np.random.Generator) -> Shape:
    """`target` and some forty annotation columns in train.csv only; the sample asks for `prediction`."""
    n = ROWS
    toxic = rng.random(n)
    comments = [("you fool " if t > 0.5 else "thanks ") + f"note {i}" for i, t in enumerate(toxic)]
    frame = pd.DataFrame({"id": range(7_000_000, 7_000_000 + n), "target": toxic.round(3), "comment_text": comments})
    for column in ("severe_toxicity", "obscene", "identity_attack", "insult", "threat", "asian", "atheist",
                   "created_date", "publication_id", "rating", "funny", "wow", "toxicity_annotator_count"):  # fmt: skip
        frame[column] = rng.random(n).round(3)
    train, test = _split(frame, rng)
    _csv(train, folder / "train.csv")
    _csv(test[["id", "comment_text"]], folder / "test.csv")
    _csv(test[["id"]].assign(prediction=0.0), folder / "sample_submission.csv")
    not_features = ("severe_toxicity", "insult", "rating")
    return Shape("rmse", ("prediction",), target_option=("target",), not_features=not_features, n_test=len(test))


def champs_scalar_coupling(folder: Path, rng: np.random.Generator) -> Shape:
    """`structures.csv` covers every molecule; `potential_energy.csv` and `dipole_moments.csv` only the training
    molecules, so they must not be joined (their test columns would be empty)."""
    molecules = [f"dsgdb9nsd_{i:06d}" for i in range(60)]
    is_test = {m: rng.random() < TEST_SHARE for m in molecules}
    rows = [(m, a, b) for m in molecules for a, b in ((0, 1), (1, 2), (0, 2), (2, 3))]
    frame = pd.DataFrame(rows, columns=["molecule_name", "atom_index_0", "atom_index_1"])
    frame.insert(0, "id", range(len(frame)))
    frame["type"] = rng.choice(["1JHC", "2JHH", "3JHC"], len(frame))
    frame["scalar_coupling_constant"] = (frame["type"].map({"1JHC": 90.0, "2JHH": -10.0, "3JHC": 3.0})
                                         + rng.normal(0, 1, len(frame)))  # fmt: skip
    test_rows = frame["molecule_name"].map(is_test)
    train, test = frame[~test_rows], frame[test_rows]
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns="scalar_coupling_constant"), folder / "test.csv")
    _csv(test[["id"]].assign(scalar_coupling_constant=0), folder / "sample_submission.csv")
    every = pd.DataFrame({"molecule_name": molecules, "n_atoms": rng.integers(4, 20, len(molecules))})
    _csv(every, folder / "structures.csv")
    trained = [m for m in molecules if not is_test[m]]
    _csv(pd.DataFrame({"molecule_name": trained, "potential_energy": rng.normal(-400, 30, len(trained))}),
         folder / "potential_energy.csv")  # fmt: skip
    _csv(pd.DataFrame({"molecule_name": trained, "X": 0.1, "Y": 0.2, "Z": 0.3}), folder / "dipole_moments.csv")
    return Shape("mae", ("scalar_coupling_constant",), n_test=len(test), notes=("potential_energy.csv",))


def ranzcr_clip_tables(folder: Path, rng: np.random.Generator) -> Shape:
    """A second training file (`train_annotations.csv`: one row per drawn line, several per image) beside
    train.csv; the labels are eleven 0/1 columns with a patient id. (The X-rays themselves are left out.)"""
    labels = ["ETT - Abnormal", "ETT - Borderline", "ETT - Normal", "NGT - Normal", "CVC - Normal"]
    n = ROWS
    frame = pd.DataFrame({"StudyInstanceUID": [f"1.2.826.0.1.{i}" for i in range(n)],
                          "age_hint": rng.normal(size=n)})  # fmt: skip
    for k, column in enumerate(labels):
        frame[column] = (frame["age_hint"] * (k - 2) + rng.normal(0, 1, n) > 0).astype(int)
    frame["PatientID"] = [f"ec{i % 50:04d}" for i in range(n)]
    train, test = _split(frame, rng)
    _csv(train, folder / "train.csv")
    _csv(test[["StudyInstanceUID", "age_hint", "PatientID"]], folder / "test.csv")
    _csv(test[["StudyInstanceUID"]].assign(**dict.fromkeys(labels, 0)), folder / "sample_submission.csv")
    annotations = train.loc[train.index.repeat(2), ["StudyInstanceUID"]].assign(label="CVC - Normal", data="[[1, 2]]")
    _csv(annotations, folder / "train_annotations.csv")
    return Shape("mean_auc", tuple(labels), n_test=len(test))


def spooky_author_identification(folder: Path, rng: np.random.Generator) -> Shape:
    """`id,text,author` (ids like `id26305`); the sample wants one probability column per author (EAP, HPL, MWS),
    filled with Kaggle's arbitrary values."""
    authors = ["EAP", "HPL", "MWS"]
    words = {"EAP": "raven midnight dreary", "HPL": "eldritch cyclopean abyss", "MWS": "creature misery wretch"}
    n = ROWS
    author = rng.choice(authors, n)
    frame = pd.DataFrame({
        "id": [f"id{i:05d}" for i in rng.choice(30_000, n, replace=False)],
        "text": [f"It was {words[a].split()[i % 3]} and the night {i}." for i, a in enumerate(author)],
        "author": author,
    })  # fmt: skip
    train, test = _split(frame, rng)
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns="author"), folder / "test.csv")
    arbitrary = {"EAP": 0.403493538995863, "HPL": 0.287808366106543, "MWS": 0.308698094897594}
    _csv(test[["id"]].assign(**arbitrary), folder / "sample_submission.csv")
    return Shape("logloss", ("author",), n_test=len(test))


def tabular_playground_series_dec_2021(folder: Path, rng: np.random.Generator) -> Shape:
    """Forest cover types: `Id`, 54 numeric and 0/1 columns, `Cover_Type` 1..7 (some types rare); the sample
    fills every row with 2."""
    n = ROWS
    elevation = rng.normal(2900, 250, n).round()
    cover = np.digitize(elevation, [2600, 2750, 2900, 3050, 3200, 3350]) + 1
    frame = pd.DataFrame({"Id": rng.choice(4_000_000, n, replace=False), "Elevation": elevation,
                          "Aspect": rng.integers(0, 360, n), "Slope": rng.integers(0, 60, n)})  # fmt: skip
    for k in range(1, 5):
        frame[f"Wilderness_Area{k}"] = (rng.random(n) < 0.25).astype(int)
    for k in range(1, 41):
        frame[f"Soil_Type{k}"] = (rng.random(n) < 0.05).astype(int)
    frame["Cover_Type"] = cover
    train, test = _split(frame, rng)
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns="Cover_Type"), folder / "test.csv")
    _csv(pd.DataFrame({"Id": test["Id"].to_numpy(), "Cover_Type": 2}), folder / "sample_submission.csv")
    return Shape("accuracy", ("Cover_Type",), n_test=len(test))


def tabular_playground_series_may_2022(folder: Path, rng: np.random.Generator) -> Shape:
    """`id` renumbered from 0 (train) then on (test), `f_00`..`f_30` with `f_27` a ten-letter string, a 0/1
    `target`; the sample says 0.5 for every row."""
    n = ROWS
    frame = pd.DataFrame({"id": np.arange(n)})
    for k in range(31):
        if k == 27:
            frame["f_27"] = ["".join(rng.choice(list("ABCDEFGHIJ"), 10)) for _ in range(n)]
        elif 7 <= k <= 18:
            frame[f"f_{k:02d}"] = rng.integers(0, 12, n)
        else:
            frame[f"f_{k:02d}"] = rng.normal(size=n)
    frame["target"] = (frame["f_00"] + frame["f_27"].str.count("A") * 0.5 + rng.normal(0, 0.5, n) > 0.5).astype(int)
    train, test = _split(frame, rng)
    train = train.assign(id=np.arange(len(train)))
    test = test.assign(id=np.arange(len(train), len(train) + len(test)))
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns="target"), folder / "test.csv")
    _csv(test[["id"]].assign(target=0.5), folder / "sample_submission.csv")
    return Shape("auc", ("target",), n_test=len(test))


TOXIC = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]


def jigsaw_toxic_comment_classification_challenge(folder: Path, rng: np.random.Generator) -> Shape:
    """`id,comment_text` and six 0/1 labels in train.csv (hex ids); test.csv is Kaggle's own test; the sample
    asks for the six columns at 0.5. MLE-bench grades it with "auc-roc": their mean column-wise AUC."""
    n = ROWS
    rude = rng.random(n) < 0.3
    frame = pd.DataFrame({
        "id": [rng.bytes(8).hex() for _ in range(n)],
        "comment_text": [("you idiot, " if r else "thanks for the edit, ") + f"see talk page {i}"
                         for i, r in enumerate(rude)],
    })  # fmt: skip
    for k, label in enumerate(TOXIC):
        frame[label] = (rude & (rng.random(n) < 0.9 - 0.1 * k)).astype(int)
    train, test = _split(frame, rng)
    _csv(train, folder / "train.csv")
    _csv(test[["id", "comment_text"]], folder / "test.csv")
    _csv(test[["id"]].assign(**dict.fromkeys(TOXIC, 0.5)), folder / "sample_submission.csv")
    return Shape("mean_auc", tuple(TOXIC), n_test=len(test))


def nomad2018_predict_transparent_conductors(folder: Path, rng: np.random.Generator) -> Shape:
    """Two targets (`formation_energy_ev_natom`, `bandgap_energy_ev`), ids from 1 in train and again from 1 in
    test, and each material's `geometry.xyz` in `train/<id>/` and `test/<id>/` (a format nobody reads)."""
    n = ROWS
    al = rng.random(n).round(4)
    frame = pd.DataFrame({
        "spacegroup": rng.choice([12, 33, 167, 194, 206, 227], n),
        "number_of_total_atoms": rng.choice([10, 20, 40, 80], n),
        "percent_atom_al": al, "percent_atom_ga": ((1 - al) * rng.random(n)).round(4),
        "lattice_vector_1_ang": rng.normal(10, 2, n), "lattice_angle_alpha_degree": rng.normal(90, 3, n),
        "formation_energy_ev_natom": (0.1 + 0.2 * al + rng.normal(0, 0.02, n)).clip(0),
        "bandgap_energy_ev": (1.5 + 3 * al + rng.normal(0, 0.2, n)).clip(0),
    })  # fmt: skip
    frame["percent_atom_in"] = (1 - frame["percent_atom_al"] - frame["percent_atom_ga"]).round(4)
    train, test = _split(frame, rng)
    train.insert(0, "id", np.arange(1, len(train) + 1))
    test.insert(0, "id", np.arange(1, len(test) + 1))
    targets = ["formation_energy_ev_natom", "bandgap_energy_ev"]
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns=targets), folder / "test.csv")
    _csv(test[["id"]].assign(formation_energy_ev_natom=0.1779, bandgap_energy_ev=1.8892),
         folder / "sample_submission.csv")  # fmt: skip
    for side, rows in (("train", train), ("test", test)):
        for ident in rows["id"]:
            geometry = folder / side / str(ident) / "geometry.xyz"
            geometry.parent.mkdir(parents=True)
            geometry.write_text("#=======\nlattice_vector 9.95 0.0 0.0\natom 1.0 2.0 3.0 Ga\n")
    return Shape("rmsle", tuple(targets), n_test=len(test))


def learning_agency_lab_automated_essay_scoring_2(folder: Path, rng: np.random.Generator) -> Shape:
    """`essay_id,full_text,score` (scores 1..6, hex ids); the sample is `essay_id,score` at 3. Quadratic weighted
    kappa."""
    n = ROWS
    score = rng.integers(1, 7, n)
    frame = pd.DataFrame({
        "essay_id": [rng.bytes(4).hex()[:7] for _ in range(n)],
        "full_text": [" ".join(["because evidence shows"] * int(s) + [f"essay {i}"]) for i, s in enumerate(score)],
        "score": score,
    })  # fmt: skip
    frame = frame.drop_duplicates("essay_id")
    train, test = _split(frame, rng)
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns="score"), folder / "test.csv")
    _csv(test[["essay_id"]].assign(score=3), folder / "sample_submission.csv")
    return Shape("qwk", ("score",), n_test=len(test))


def us_patent_phrase_to_phrase_matching(folder: Path, rng: np.random.Generator) -> Shape:
    """`id,anchor,target,context,score`: two phrases, a CPC context code and their similarity in quarters; the
    sample is `id,score` at 0. Pearson's correlation."""
    n = ROWS
    anchors = ["abatement", "acid absorption", "adjustable cup", "wire guide", "optical sensor"]
    anchor = rng.choice(anchors, n)
    same = rng.integers(0, 5, n)
    frame = pd.DataFrame({
        "id": [rng.bytes(8).hex() for _ in range(n)], "anchor": anchor,
        "target": [f"{a}{' variant' * (4 - s)} {i}" for i, (a, s) in enumerate(zip(anchor, same, strict=True))],
        "context": rng.choice(["A47", "B01", "F16", "G01", "H04"], n), "score": same / 4,
    })  # fmt: skip
    train, test = _split(frame, rng)
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns="score"), folder / "test.csv")
    _csv(test[["id"]].assign(score=0), folder / "sample_submission.csv")
    return Shape("pearson", ("score",), n_test=len(test))


QUEST = [f"question_{name}" for name in ("asker_intent_understanding", "body_critical", "conversational",
                                         "fact_seeking", "type_spelling", "well_written")]  # fmt: skip
QUEST += [f"answer_{name}" for name in ("helpful", "plausible", "relevance", "well_written")]


def google_quest_challenge(folder: Path, rng: np.random.Generator) -> Shape:
    """`qa_id`, question and answer texts with their users and hosts, and raters' fractions as targets (30 in the
    real one; ten here, `question_type_spelling` almost always 0); the sample fills each target column with a
    rising 0..1 so that Spearman's coefficient is defined. Mean column-wise Spearman."""
    n = ROWS
    quality = rng.random(n)
    frame = pd.DataFrame({
        "qa_id": rng.choice(10_000, n, replace=False),
        "question_title": [f"How do I {'configure' if q > 0.5 else 'fix'} thing {i}?" for i, q in enumerate(quality)],
        "question_body": [("A clear detailed question " if q > 0.5 else "help ") * 3 for q in quality],
        "question_user_name": [f"user{i % 40}" for i in range(n)],
        "answer": [("Step one, step two, then verify. " if q > 0.4 else "no idea ") * 2 for q in quality],
        "category": rng.choice(["TECHNOLOGY", "STACKOVERFLOW", "CULTURE", "SCIENCE", "LIFE_ARTS"], n),
        "host": rng.choice(["superuser.com", "stackoverflow.com", "english.stackexchange.com"], n),
    })  # fmt: skip
    for k, column in enumerate(QUEST):
        raw = quality * (0.5 + 0.05 * k) + rng.normal(0, 0.1, n)
        frame[column] = (np.clip(raw, 0, 1) * 3).round() / 3
    frame["question_type_spelling"] = (rng.random(n) < 0.03).astype(float) / 3
    train, test = _split(frame, rng)
    _csv(train, folder / "train.csv")
    _csv(test.drop(columns=QUEST), folder / "test.csv")
    rising = np.linspace(0, 1, len(test))
    _csv(test[["qa_id"]].assign(**{c: rising for c in QUEST}), folder / "sample_submission.csv")
    return Shape("spearman", tuple(QUEST), n_test=len(test))


def statoil_iceberg_classifier_challenge(folder: Path, rng: np.random.Generator) -> Shape:
    """`train.json.7z` and `test.json.7z` only (7-Zip, as MLE-bench's `prepare.py` writes them): records of `id`,
    two radar bands as lists of numbers (75 by 75 in the real one; 10 by 10 here), `inc_angle` (a number, or "na")
    and the 0/1 `is_iceberg`; the sample is `id,is_iceberg` at 0.5. Log loss."""
    import py7zr

    folder.mkdir(parents=True, exist_ok=True)
    n = ROWS
    iceberg = rng.random(n) < 0.45
    records = [
        {
            "id": rng.bytes(4).hex(),
            "band_1": (rng.normal(-22 if berg else -18, 4 if berg else 7, 100)).round(4).tolist(),
            "band_2": (rng.normal(-26, 3, 100)).round(4).tolist(),
            "inc_angle": "na" if i % 17 == 0 else round(float(rng.uniform(30, 45)), 4),
            "is_iceberg": int(berg),
        }
        for i, berg in enumerate(iceberg)
    ]
    test = rng.random(n) < TEST_SHARE
    for name, rows in (("train", [r for r, t in zip(records, test, strict=True) if not t]),
                       ("test", [{k: v for k, v in r.items() if k != "is_iceberg"}
                                 for r, t in zip(records, test, strict=True) if t])):  # fmt: skip
        with py7zr.SevenZipFile(folder / f"{name}.json.7z", "w") as archive:
            archive.writestr(json.dumps(rows), f"data/processed/{name}.json")
    tested = [r["id"] for r, t in zip(records, test, strict=True) if t]
    _csv(pd.DataFrame({"id": tested, "is_iceberg": 0.5}), folder / "sample_submission.csv")
    return Shape("logloss", ("is_iceberg",), n_test=len(tested))


MAKERS: dict[str, Callable[[Path, np.random.Generator], Shape]] = {
    "spaceship-titanic": spaceship_titanic,
    "random-acts-of-pizza": random_acts_of_pizza,
    "new-york-city-taxi-fare-prediction": new_york_city_taxi_fare_prediction,
    "detecting-insults-in-social-commentary": detecting_insults_in_social_commentary,
    "leaf-classification": leaf_classification,
    "playground-series-s3e18": playground_series_s3e18,
    "lmsys-chatbot-arena": lmsys_chatbot_arena,
    "jigsaw-unintended-bias-in-toxicity-classification": jigsaw_unintended_bias,
    "champs-scalar-coupling": champs_scalar_coupling,
    "ranzcr-clip-catheter-line-classification": ranzcr_clip_tables,
    "spooky-author-identification": spooky_author_identification,
    "tabular-playground-series-dec-2021": tabular_playground_series_dec_2021,
    "tabular-playground-series-may-2022": tabular_playground_series_may_2022,
    "jigsaw-toxic-comment-classification-challenge": jigsaw_toxic_comment_classification_challenge,
    "nomad2018-predict-transparent-conductors": nomad2018_predict_transparent_conductors,
    "learning-agency-lab-automated-essay-scoring-2": learning_agency_lab_automated_essay_scoring_2,
    "us-patent-phrase-to-phrase-matching": us_patent_phrase_to_phrase_matching,
    "google-quest-challenge": google_quest_challenge,
    "statoil-iceberg-classifier-challenge": statoil_iceberg_classifier_challenge,
}
