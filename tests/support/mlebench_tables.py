"""Folders shaped like the public folders of MLE-bench's competitions whose rows are tables of numbers and
categories (`tests/support/mlebench.py` lists every maker)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from tests.support.mlebench_base import ROWS, TEST_SHARE, Shape, split, write_csv


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
    train, test = split(frame, rng)
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns="Transported"), folder / "test.csv")
    write_csv(test[["PassengerId"]].assign(Transported=0 if as_integers else False), folder / "sample_submission.csv")
    if answers is not None:
        write_csv(test, answers)
    return Shape("accuracy", ("Transported",), n_test=len(test))


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
    train, test = split(frame, rng)
    write_csv(train, folder / "labels.csv")
    write_csv(test.drop(columns="fare_amount"), folder / "test.csv")
    write_csv(test[["key"]].assign(fare_amount=11.35), folder / "sample_submission.csv")
    (folder / "GCP-Coupons-Instructions.rtf").write_text("{\\rtf1 coupons}")
    return Shape("rmse", ("fare_amount",), n_test=len(test))


def leaf_classification(folder: Path, rng: np.random.Generator) -> Shape:
    """192 numeric features in train.csv, an `images/` folder of every leaf's silhouette beside them, and a
    sample submission with one probability column per species."""
    species = ["Acer_Capillipes", "Acer_Circinatum", "Quercus_Rubra", "Salix_Intergra"]
    n = ROWS
    label = rng.integers(0, len(species), n)
    features = {f"{kind}{j}": rng.normal(label * (j % 3), 1.0) for kind in ("margin", "shape", "texture")
                for j in range(1, 65)}  # fmt: skip
    frame = pd.DataFrame({"id": np.arange(1, n + 1), "species": np.array(species)[label], **features})
    train, test = split(frame, rng)
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns="species"), folder / "test.csv")
    write_csv(test[["id"]].assign(**{s: 1 / len(species) for s in species}), folder / "sample_submission.csv")
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
    train, test = split(frame, rng)
    ecs = [f"EC{k}" for k in range(1, 7)]
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns=ecs), folder / "test.csv")
    write_csv(test[["id"]].assign(EC1=0.5, EC2=0.5), folder / "sample_submission.csv")
    return Shape("mean_auc", ("EC1", "EC2"), not_features=("EC3", "EC4", "EC5", "EC6"), n_test=len(test))


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
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns="scalar_coupling_constant"), folder / "test.csv")
    write_csv(test[["id"]].assign(scalar_coupling_constant=0), folder / "sample_submission.csv")
    every = pd.DataFrame({"molecule_name": molecules, "n_atoms": rng.integers(4, 20, len(molecules))})
    write_csv(every, folder / "structures.csv")
    trained = [m for m in molecules if not is_test[m]]
    write_csv(pd.DataFrame({"molecule_name": trained, "potential_energy": rng.normal(-400, 30, len(trained))}),
         folder / "potential_energy.csv")  # fmt: skip
    write_csv(pd.DataFrame({"molecule_name": trained, "X": 0.1, "Y": 0.2, "Z": 0.3}), folder / "dipole_moments.csv")
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
    train, test = split(frame, rng)
    write_csv(train, folder / "train.csv")
    write_csv(test[["StudyInstanceUID", "age_hint", "PatientID"]], folder / "test.csv")
    write_csv(test[["StudyInstanceUID"]].assign(**dict.fromkeys(labels, 0)), folder / "sample_submission.csv")
    annotations = train.loc[train.index.repeat(2), ["StudyInstanceUID"]].assign(label="CVC - Normal", data="[[1, 2]]")
    write_csv(annotations, folder / "train_annotations.csv")
    return Shape("mean_auc", tuple(labels), n_test=len(test))


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
    train, test = split(frame, rng)
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns="Cover_Type"), folder / "test.csv")
    write_csv(pd.DataFrame({"Id": test["Id"].to_numpy(), "Cover_Type": 2}), folder / "sample_submission.csv")
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
    train, test = split(frame, rng)
    train = train.assign(id=np.arange(len(train)))
    test = test.assign(id=np.arange(len(train), len(train) + len(test)))
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns="target"), folder / "test.csv")
    write_csv(test[["id"]].assign(target=0.5), folder / "sample_submission.csv")
    return Shape("auc", ("target",), n_test=len(test))


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
    train, test = split(frame, rng)
    train.insert(0, "id", np.arange(1, len(train) + 1))
    test.insert(0, "id", np.arange(1, len(test) + 1))
    targets = ["formation_energy_ev_natom", "bandgap_energy_ev"]
    write_csv(train, folder / "train.csv")
    write_csv(test.drop(columns=targets), folder / "test.csv")
    write_csv(test[["id"]].assign(formation_energy_ev_natom=0.1779, bandgap_energy_ev=1.8892),
         folder / "sample_submission.csv")  # fmt: skip
    for side, rows in (("train", train), ("test", test)):
        for ident in rows["id"]:
            geometry = folder / side / str(ident) / "geometry.xyz"
            geometry.parent.mkdir(parents=True)
            geometry.write_text("#=======\nlattice_vector 9.95 0.0 0.0\natom 1.0 2.0 3.0 Ga\n")
    return Shape("rmsle", tuple(targets), n_test=len(test))


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
    write_csv(pd.DataFrame({"id": tested, "is_iceberg": 0.5}), folder / "sample_submission.csv")
    return Shape("logloss", ("is_iceberg",), n_test=len(tested))
