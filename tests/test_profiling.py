"""Research's data profile: leakage suspects, id-like columns, drift, CV plan."""

from __future__ import annotations

import numpy as np
import pandas as pd

from agent_k.competition import Competition, TaskType
from agent_k.ml.profiling import FIVE_FOLDS_ROWS, FIVE_FOLDS_ROWS_PER_BUDGET_S, profile


def _competition(task: TaskType = TaskType.binary) -> Competition:
    classes = ["0", "1"] if task is TaskType.binary else None
    metric = "auc" if task is TaskType.binary else "rmse"
    return Competition(id="t", title="t", task=task, metric=metric, target="y", classes=classes)


def _frames(n: int = 600, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"id": range(n), "a": rng.normal(size=n), "b": rng.choice(["p", "q", "r"], n)})
    frame["y"] = ((frame["a"] + rng.normal(scale=1.0, size=n)) > 0).astype(int)
    return frame.iloc[: n * 3 // 4].copy(), frame.iloc[n * 3 // 4 :].drop(columns="y").copy()


def test_a_column_that_alone_predicts_the_target_is_a_leakage_suspect() -> None:
    train, test = _frames()
    train["outcome_code"] = train["y"].map({0: "closed", 1: "paid"})
    test["outcome_code"] = "closed"
    findings = profile(_competition(), train, test)
    assert findings.leakage_suspects == ["outcome_code"]
    assert findings.leakage_details[0].single_column_score >= 0.99


def test_a_strong_column_the_test_rows_carry_as_in_training_is_a_feature() -> None:
    """A column that alone predicts the target is dropped only where it would not carry over: here the test rows
    hold it drawn as the training rows do (a random split of the same table), so it stays a feature, named."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"id": range(800), "school": rng.integers(0, 40, 800), "a": rng.normal(size=800)})
    frame["y"] = frame["school"] * 10.0 + rng.normal(scale=0.1, size=800)  # the school fixes the target
    train, test = frame.iloc[:600].copy(), frame.iloc[600:].drop(columns="y").copy()
    findings = profile(_competition(TaskType.regression), train, test)
    assert findings.leakage_suspects == []
    assert any(n.startswith("kept as features") and "school (CV " in n for n in findings.notes)

    emptied = test.assign(school=np.nan)  # filled in only once the outcome was known: absent where it is not
    findings = profile(_competition(TaskType.regression), train, emptied)
    assert findings.leakage_suspects == ["school"]
    assert not any("kept as features" in n for n in findings.notes)


def test_honest_features_are_not_suspects() -> None:
    train, test = _frames()
    findings = profile(_competition(), train, test)
    assert findings.leakage_suspects == []
    assert findings.id_like == ["id"]
    assert findings.cv.kind == "stratified_kfold" and findings.cv.n_folds == 5
    assert findings.target.class_counts.keys() == {"0", "1"}


def test_id_like_columns_and_drift_are_found() -> None:
    train, test = _frames()
    train["ticket"] = [f"T{i:05d}" for i in range(len(train))]
    test["ticket"] = [f"T{i:05d}" for i in range(len(train), len(train) + len(test))]
    test["a"] = test["a"] + 3.0  # the test distribution moved
    findings = profile(_competition(), train, test)
    assert "ticket" in findings.id_like
    drifted = {d.column for d in findings.drift if d.drifted}
    assert drifted == {"a"}
    assert any("drift" in note for note in findings.notes)


def test_regression_profile_recommends_kfold_and_notes_skew() -> None:
    rng = np.random.default_rng(3)
    train = pd.DataFrame({"id": range(400), "x": rng.normal(size=400)})
    train["y"] = np.exp(train["x"] + rng.normal(scale=0.3, size=400)) * 100
    test = pd.DataFrame({"id": range(400, 500), "x": rng.normal(size=100)})
    findings = profile(_competition(TaskType.regression), train, test)
    assert findings.cv.kind == "kfold"
    assert findings.target.skew is not None and findings.target.skew > 1
    assert any("log-transformed" in note for note in findings.notes)


def test_a_category_missing_from_every_test_row_is_drift_not_a_crash() -> None:
    """pandas 3 keeps a missing value missing through `astype(str)`: a category column the test rows all lack
    counted nothing on the test side, and the chi-squared test raised on its empty column."""
    train, test = _frames()
    train["ended"] = np.where(np.arange(len(train)) % 3 == 0, None, "2020-01")
    test["ended"] = pd.Series([None] * len(test), dtype="str")
    findings = profile(_competition(), train, test)
    drift = {d.column: d for d in findings.drift}
    assert drift["ended"].drifted and drift["ended"].statistic > 0.5


def test_five_folds_up_to_the_large_tables_three_beyond() -> None:
    """A fold model that sees four fifths of the rows predicts better than one that sees two thirds, and the
    submission averages them; only past `FIVE_FOLDS_ROWS` rows is a candidate's doubled cost not worth it."""
    real_size, test = _frames(40_000)  # county-murders' size: three folds before
    assert profile(_competition(), real_size, test).cv.n_folds == 5
    larger, test = _frames(FIVE_FOLDS_ROWS * 4 // 3 + 400)
    assert len(larger) > FIVE_FOLDS_ROWS
    assert profile(_competition(), larger, test).cv.n_folds == 3


def test_five_folds_only_where_the_budget_holds_several_full_cross_validations() -> None:
    """A full CV's cost grows with the rows: a short mission on a large table takes three folds, so that its
    search still gets several full evaluations; a longer one on the same rows takes five."""
    table, test = _frames(40_000)
    short, long = 40_000 / FIVE_FOLDS_ROWS_PER_BUDGET_S / 2, 40_000 / FIVE_FOLDS_ROWS_PER_BUDGET_S * 2
    assert profile(_competition(), table, test, budget_s=short).cv.n_folds == 3
    assert profile(_competition(), table, test, budget_s=long).cv.n_folds == 5
