"""What Research detects of a competition's shape (free text, time and its formats, forecast or not, series keys,
entities), the folds that follow from it, and that every path cuts the same folds: the rendered solution, the
runner, and the harness that cross-validates a model-written script."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agent_k.competition import Competition, TaskType
from agent_k.competition.research import CVScheme
from agent_k.ml.evaluate import CompetitionData
from agent_k.ml.folds import make_folds
from agent_k.ml.harness import evaluate_script
from agent_k.ml.profiling import profile
from agent_k.ml.recipes import ModelFamily, Script
from agent_k.ml.render import render_solution
from agent_k.ml.search import default_recipe
from agent_k.ml.search.selection import feature_options
from agent_k.ml.splits import splits
from agent_k.sandbox import Limits, bwrap_problem
from tests.conftest import need_tool

RNG = np.random.default_rng(11)
CITIES = ["Austin", "Dallas", "El Paso", "Houston"]
MONTHS = pd.date_range("2010-01-01", periods=60, freq="MS")
REVIEW_WORDS = ["great", "awful", "fine", "broken", "lovely", "cheap", "sturdy", "slow", "fast", "bright", "dull"]


def _regression(**fields: object) -> Competition:
    return Competition(id="t", title="t", task=TaskType.regression, metric="rmse", **{"target": "y", **fields})


def _binary() -> Competition:
    return Competition(id="t", title="t", task=TaskType.binary, metric="auc", target="y", classes=["0", "1"])


def _monthly_sales() -> pd.DataFrame:
    """Monthly sales of four cities over five years: a trend, a season and noise."""
    rows = []
    for k, city in enumerate(CITIES):
        for step, month in enumerate(MONTHS):
            season = 10 * np.sin(2 * np.pi * month.month / 12)
            rows.append({"city": city, "month": month, "y": 100 * (k + 1) + 2 * step + season + RNG.normal()})
    frame = pd.DataFrame(rows)
    frame.insert(0, "id", range(len(frame)))
    return frame


def _country_populations() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Populations by country and year in the columns of the `gt` package's countrypops, read as pandas reads its
    CSV, where Namibia's code "NA" is a missing value; the test rows are the last five years."""
    countries = [("Namibia", "NA", "NAM"), ("Nauru", "NR", "NRU"), ("Nepal", "NP", "NPL"), ("Niger", "NE", "NER")]
    rows = [
        {"country_name": name, "country_code_2": two, "country_code_3": three, "year": year,
         "population": round(1e6 * (k + 1) * 1.02 ** (year - 1960) * (1 + RNG.normal(scale=0.01)))}
        for k, (name, two, three) in enumerate(countries)
        for year in range(1960, 2020)
    ]  # fmt: skip
    frame = pd.read_csv(io.StringIO(pd.DataFrame(rows).rename_axis("id").reset_index().to_csv(index=False)))
    assert frame["country_code_2"].isna().sum() == 60, "pandas reads Namibia's code as missing"
    future = frame["year"] >= 2015
    return frame[~future].reset_index(drop=True), frame[future].drop(columns="population").reset_index(drop=True)


def test_a_series_whose_key_reads_as_missing_is_a_series_of_its_own() -> None:
    """A key pandas reads as missing (Namibia's "NA") is a level like any other: the forecast is found, and its
    forward folds score Namibia's years as they score every country's."""
    train, test = _country_populations()
    spec = _regression(target="population")
    findings = profile(spec, train, test)
    assert findings.time is not None and findings.time.forecast and findings.cv.kind == "forward", findings.time
    assert findings.time.keys and findings.time.horizon == 5, findings.time
    for _, scored in splits(train, spec, findings.cv):
        assert train.loc[scored, "country_name"].value_counts().to_dict() == {
            name: 5 for name in ("Namibia", "Nauru", "Nepal", "Niger")
        }


def _forecast_split(frame: pd.DataFrame, horizon: int = 6) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Kaggle's split of a forecast: the test rows are each series' last `horizon` months."""
    future = frame["month"] >= MONTHS[-horizon]
    return frame[~future].reset_index(drop=True), frame[future].drop(columns="y").reset_index(drop=True)


FORMATS = {
    "iso dates": lambda m: {"month": m.dt.strftime("%Y-%m-%d")},
    "1990 Jan": lambda m: {"month": m.dt.strftime("%Y %b")},
    "2015-03": lambda m: {"month": m.dt.strftime("%Y-%m")},
    "20150131": lambda m: {"month": m.dt.strftime("%Y%m%d").astype(int)},
    "epoch seconds": lambda m: {"timestamp": (m - pd.Timestamp("1970-01-01")) // pd.Timedelta(seconds=1)},
    "year and month columns": lambda m: {"year": m.dt.year, "month": m.dt.month},
}


@pytest.mark.parametrize("written", FORMATS)
def test_a_forecast_is_found_in_every_way_time_is_written(written: str) -> None:
    frame = _monthly_sales()
    future = frame["month"] >= MONTHS[-6]
    shown = FORMATS[written](frame["month"])
    frame = frame.drop(columns="month").assign(**shown)
    train, test = frame[~future], frame[future].drop(columns="y")
    findings = profile(_regression(), train, test)
    time = findings.time
    assert time is not None, f"no time found in {written}"
    assert set(time.columns) == set(shown) and time.forecast and time.keys == ["city"]
    assert time.horizon == 6 and time.season == 12, time
    assert findings.cv.kind == "forward" and findings.cv.time == time


def test_timed_rows_whose_test_interleaves_with_training_keep_shuffled_folds_and_say_why() -> None:
    frame = _monthly_sales()
    test_rows = RNG.random(len(frame)) < 0.25
    train, test = frame[~test_rows], frame[test_rows].drop(columns="y")
    findings = profile(_regression(), train, test)
    assert findings.time is not None and not findings.time.forecast
    assert findings.cv.kind == "kfold" and "interleave" in findings.cv.reason


def test_free_text_is_told_from_categories_and_ids() -> None:
    n = 400
    reviews = [" ".join(RNG.choice(REVIEW_WORDS, RNG.integers(4, 12))) for _ in range(n)]
    frame = pd.DataFrame({
        "id": range(n),
        "review": reviews,
        "product_code": [f"P{i:06d}" for i in RNG.permutation(n)],
        "colour": RNG.choice(["red", "green", "blue"], n),
    })  # fmt: skip
    frame["y"] = frame["review"].str.contains("great").astype(int)
    findings = profile(_binary(), frame.iloc[:300], frame.iloc[300:].drop(columns="y"))
    kinds = {c.name: c.kind for c in findings.columns}
    assert findings.text_columns == ["review"] and kinds["colour"] != "text"
    assert "product_code" in findings.id_like and "review" not in findings.id_like


def test_repeated_entities_new_in_the_test_rows_get_grouped_folds() -> None:
    patients = np.repeat(np.arange(80), 6)
    effect = RNG.normal(size=80)[patients]
    frame = pd.DataFrame({"id": range(len(patients)), "patient": patients, "dose": RNG.normal(size=len(patients))})
    frame["y"] = (effect + 0.3 * frame["dose"] + RNG.normal(scale=0.3, size=len(frame)) > 0).astype(int)
    unseen = frame["patient"] >= 60
    findings = profile(_binary(), frame[~unseen], frame[unseen].drop(columns="y"))
    assert findings.cv.kind == "stratified_group_kfold" and findings.cv.group_column == "patient"
    assert "patient" in findings.group_candidates and "patient" in findings.cv.reason


@pytest.mark.parametrize("gap", [0, 2])
def test_forward_folds_never_train_on_a_row_later_than_one_they_score(gap: int) -> None:
    times = RNG.permutation(np.repeat(np.arange(40), 5))  # 40 steps of 5 series, rows in no order
    folds = make_folds({"kind": "forward", "n_folds": 4, "horizon": 3, "gap": gap}, len(times), times=times)
    assert len(folds) == 4
    for fit, scored in folds:
        assert times[fit].max() + gap < times[scored].min()
        assert len(np.unique(times[scored])) == 3
    assert sorted(np.unique(times[folds[-1][1]])) == [37, 38, 39], "the last fold scores the last steps"


@pytest.mark.parametrize("kind", ["group_kfold", "stratified_group_kfold"])
def test_grouped_folds_never_put_an_entity_on_both_sides(kind: str) -> None:
    """Entities by name, some rows' name missing: those rows are one more entity, not an error."""
    groups = np.array([None if g == 0 else f"e{g}" for g in RNG.integers(0, 50, 600)], dtype=object)
    labels = RNG.integers(0, 2, 600)
    folds = make_folds({"kind": kind, "n_folds": 5}, 600, labels=labels, groups=groups)
    assert len(folds) == 5
    for fit, scored in folds:
        assert not set(groups[fit]) & set(groups[scored])
    assert sorted(np.concatenate([scored for _, scored in folds]).tolist()) == list(range(600))


def _schemes() -> dict[str, tuple[Competition, pd.DataFrame, pd.DataFrame, CVScheme]]:
    train, test = _forecast_split(_monthly_sales())
    forecast = _regression(time_column="month", series_keys=["city"])
    forward = profile(forecast, train, test).cv
    patients = np.repeat(np.arange(40), 5)
    grouped = pd.DataFrame({"id": range(200), "patient": patients, "x": RNG.normal(size=200)})
    grouped["y"] = (RNG.normal(size=40)[patients] > 0).astype(int)
    group_cv = CVScheme(kind="stratified_group_kfold", n_folds=4, group_column="patient")
    countries, future = _country_populations()
    populations = _regression(target="population")
    return {
        "forward": (forecast, train, test, forward),
        "a key read as missing": (populations, countries, future, profile(populations, countries, future).cv),
        "grouped": (_binary(), grouped.iloc[:160], grouped.iloc[160:].drop(columns="y"), group_cv),
    }


@pytest.mark.parametrize("scheme", ["forward", "grouped", "a key read as missing"])
def test_a_rendered_solution_cuts_the_very_folds_the_runner_cuts(scheme: str, tmp_path: Path) -> None:
    spec, train, test, cv = _schemes()[scheme]
    assert cv.kind == ("stratified_group_kfold" if scheme == "grouped" else "forward")
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    (tmp_path / "solution.py").write_text(render_solution(default_recipe(ModelFamily.linear), spec, cv))
    subprocess.run(
        [sys.executable, "solution.py", "--data", str(tmp_path), "--oof", "oof.csv", "--cv-only"],
        cwd=tmp_path, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    oof = pd.read_csv(tmp_path / "oof.csv")
    expected = {(int(train["id"].iloc[i]), k) for k, (_, scored) in enumerate(splits(train, spec, cv)) for i in scored}
    assert set(zip(oof["id"], oof["fold"], strict=True)) == expected


SNOOPING_SCRIPT = """
import argparse, pandas as pd
p = argparse.ArgumentParser(); p.add_argument("--data"); p.add_argument("--out"); a = p.parse_args()
train, test = pd.read_csv(f"{a.data}/train.csv"), pd.read_csv(f"{a.data}/test.csv")
key = lambda f: pd.to_datetime(f["month"])
if key(train).max() >= key(test).min():  # never so, on a forward fold or on the real test rows
    raise SystemExit(f"trained on {key(train).max()}, scored from {key(test).min()}")
last = train.sort_values("month").groupby("city")["y"].last()
pd.DataFrame({"id": test["id"], "y": test["city"].map(last).fillna(train["y"].mean())}).to_csv(a.out, index=False)
"""


def test_a_model_written_script_is_cross_validated_on_forward_folds_that_never_show_it_the_future(
    tmp_path: Path,
) -> None:
    need_tool(bwrap_problem())
    spec, train, test, cv = _schemes()["forward"]
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    train.to_csv(data_dir / "train.csv", index=False)
    test.to_csv(data_dir / "test.csv", index=False)
    data = CompetitionData.load(spec, data_dir, cv)
    script = Script(source=SNOOPING_SCRIPT)
    result = asyncio.run(evaluate_script(script, data, cv, tmp_path / "work", Limits(timeout_s=120)))
    assert result.status == "succeeded", result.error
    assert len(result.fold_scores) == len(splits(train, spec, cv)) and result.submission_path is not None


def test_a_forecasts_time_columns_are_never_named_by_a_feature_operation() -> None:
    """A forecast's time columns leave the table (they become calendar features): a ratio, log or encoding of
    them would name a column the solution no longer has."""
    frame = _monthly_sales()
    frame = frame.assign(year=frame["month"].dt.year, listings=RNG.gamma(5, 20, len(frame)))
    frame["month"] = frame["month"].dt.month
    future = (frame["year"] == 2014) & (frame["month"] > 6)
    train, test = frame[~future], frame[future].drop(columns="y")
    findings = profile(_regression(), train, test)
    assert findings.cv.kind == "forward" and findings.cv.time is not None
    assert findings.cv.time.columns == ["year", "month"]
    options = feature_options(findings, _regression(), ())
    named = {c for pair in options.ratios for c in pair} | {*options.skewed, *options.high_cardinality}
    assert not named & {"year", "month"}
