"""Reference leaderboard entries: real baseline models trained on the public train set and scored on the
hidden test labels, so rank, percentile and medal mean something."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agent_k.competition import Competition, PredictionKind, TaskType, metrics
from agent_k.competition.columns import looks_like_text
from agent_k.competition.levels import row_keys
from agent_k.competition.timing import parse_time, season_of, time_order
from agent_k.platforms.local.materialise import PreparedCompetition

MAX_TRAIN_ROWS = 20_000
KNN_TRAIN_ROWS = 5_000
# Linear, naive-Bayes and k-NN references one-hot encode; an id-like column would become thousands of dense
# columns, which costs far more than it tells a baseline.
MAX_ONE_HOT_LEVELS = 64


def split_columns(frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    numeric = frame.select_dtypes(include="number").columns.tolist()
    categorical = [c for c in frame.columns if c not in numeric]
    return numeric, categorical


def make_preprocessor(frame: pd.DataFrame, *, scale: bool, one_hot: bool) -> Any:
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

    numeric, categorical = split_columns(frame)
    numeric_steps: list[Any] = [SimpleImputer(strategy="median")]
    if scale:
        numeric_steps.append(StandardScaler())
    encoder = (
        OneHotEncoder(
            handle_unknown="infrequent_if_exist",
            min_frequency=5,
            max_categories=MAX_ONE_HOT_LEVELS,
            sparse_output=False,
        )
        if one_hot
        else OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
    )
    return ColumnTransformer(
        [
            ("numeric", make_pipeline(*numeric_steps), numeric),
            ("categorical", make_pipeline(SimpleImputer(strategy="most_frequent"), encoder), categorical),
        ],
        verbose_feature_names_out=False,
    )


def as_object_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """Categorical columns as plain Python strings (sklearn encoders reject mixed str/NaN types)."""
    _, categorical = split_columns(frame)
    if not categorical:
        return frame
    frame = frame.copy()
    for column in categorical:
        frame[column] = frame[column].astype("object").where(frame[column].notna(), None)
    return frame


def _classifiers() -> list[tuple[str, Any, bool]]:
    from sklearn.dummy import DummyClassifier
    from sklearn.ensemble import ExtraTreesClassifier, HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.tree import DecisionTreeClassifier

    return [
        ("constant-prior", DummyClassifier(strategy="prior"), False),
        ("stump", DecisionTreeClassifier(max_depth=1, random_state=0), False),
        ("tree-depth-3", DecisionTreeClassifier(max_depth=3, random_state=0), False),
        ("tree-full", DecisionTreeClassifier(random_state=0), False),
        ("naive-bayes", GaussianNB(), True),
        ("knn-1", KNeighborsClassifier(n_neighbors=1), True),
        ("knn-15", KNeighborsClassifier(n_neighbors=15), True),
        ("logistic-weak", LogisticRegression(C=0.01, max_iter=2000), True),
        ("logistic", LogisticRegression(max_iter=2000), True),
        ("random-forest-10", RandomForestClassifier(n_estimators=10, random_state=0, n_jobs=-1), False),
        ("random-forest", RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=-1), False),
        ("extra-trees", ExtraTreesClassifier(n_estimators=100, random_state=0, n_jobs=-1), False),
        ("gradient-boosting-default", HistGradientBoostingClassifier(random_state=0), False),
    ]


def _regressors() -> list[tuple[str, Any, bool]]:
    from sklearn.dummy import DummyRegressor
    from sklearn.ensemble import ExtraTreesRegressor, HistGradientBoostingRegressor, RandomForestRegressor
    from sklearn.linear_model import Lasso, Ridge
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.tree import DecisionTreeRegressor

    return [
        ("constant-mean", DummyRegressor(strategy="mean"), False),
        ("constant-median", DummyRegressor(strategy="median"), False),
        ("stump", DecisionTreeRegressor(max_depth=1, random_state=0), False),
        ("tree-depth-3", DecisionTreeRegressor(max_depth=3, random_state=0), False),
        ("tree-full", DecisionTreeRegressor(random_state=0), False),
        ("knn-1", KNeighborsRegressor(n_neighbors=1), True),
        ("knn-15", KNeighborsRegressor(n_neighbors=15), True),
        ("ridge-strong", Ridge(alpha=100.0), True),
        ("ridge", Ridge(alpha=1.0), True),
        ("lasso", Lasso(alpha=1.0, max_iter=5000), True),
        ("random-forest-10", RandomForestRegressor(n_estimators=10, random_state=0, n_jobs=-1), False),
        ("random-forest", RandomForestRegressor(n_estimators=100, random_state=0, n_jobs=-1), False),
        ("extra-trees", ExtraTreesRegressor(n_estimators=100, random_state=0, n_jobs=-1), False),
        ("gradient-boosting-default", HistGradientBoostingRegressor(random_state=0), False),
    ]


def as_submission(spec: Competition, model: Any, features: pd.DataFrame) -> pd.DataFrame:
    """A fitted single-target model's predictions in the competition's submission columns (without the id)."""
    kind = spec.prediction
    if spec.task is TaskType.regression:
        values = np.asarray(model.predict(features), dtype=float)
        return pd.DataFrame({spec.target: np.clip(values, 0, None) if spec.scored_by.non_negative else values})
    if kind is PredictionKind.value:
        return pd.DataFrame({spec.target: metrics.normalize_labels(pd.Series(model.predict(features))).to_numpy()})
    proba = model.predict_proba(features)
    by_class = {metrics.normalize_labels(pd.Series([c])).iloc[0]: proba[:, i] for i, c in enumerate(model.classes_)}
    classes = list(spec.classes or [])
    matrix = np.column_stack([by_class.get(label, np.zeros(len(features))) for label in classes])
    if kind is PredictionKind.ranked:
        best = np.argsort(-matrix, axis=1, kind="stable")[:, : spec.top_k or 1]
        return pd.DataFrame({spec.target: [" ".join(np.asarray(classes)[row]) for row in best]})
    if kind is PredictionKind.probability:
        return pd.DataFrame({spec.target: matrix[:, -1]})
    return pd.DataFrame(matrix, columns=classes)


def _fit_predict(spec: Competition, make: Any, x: pd.DataFrame, y: pd.DataFrame, test_x: pd.DataFrame) -> pd.DataFrame:
    """One model per target column for several targets (a 0/1 target's P(1)); else one model."""
    if spec.task.has_several_targets:
        columns = {}
        for name in spec.target_columns:
            model = make().fit(x, y[name] if spec.task.is_regression else y[name].astype(int))
            columns[name] = model.predict(test_x) if spec.task.is_regression else _positive(model, test_x)
        return pd.DataFrame(columns)
    labels = y[spec.target]
    if spec.task is not TaskType.regression:
        labels = metrics.normalize_labels(labels)
    return as_submission(spec, make().fit(x, labels), test_x)


def _positive(model: Any, x: pd.DataFrame) -> np.ndarray:
    proba = model.predict_proba(x)
    classes = list(model.classes_)
    return np.asarray(proba[:, classes.index(1)] if 1 in classes else np.zeros(len(x)), dtype=float)


def _text_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if looks_like_text(frame[c])]


def _tfidf_model(spec: Competition, text: list[str], frame: pd.DataFrame) -> Any:
    """The practitioner's text baseline: word and character TF-IDF with a logistic regression (ridge for numbers),
    small categories one-hot, numbers scaled."""
    from sklearn.compose import ColumnTransformer
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import FeatureUnion, make_pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

    numeric, categorical = split_columns(frame.drop(columns=text))
    joined = FunctionTransformer(lambda t: t.fillna("").astype(str).agg(" ".join, axis=1))
    words = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    characters = TfidfVectorizer(
        analyzer="char_wb", ngram_range=(2, 5), min_df=2, sublinear_tf=True, max_features=100_000
    )
    parts = [("text", make_pipeline(joined, FeatureUnion([("w", words), ("c", characters)])), text)]
    if numeric:
        parts.append(("numeric", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric))
    if categorical:
        encoder = OneHotEncoder(
            handle_unknown="infrequent_if_exist", min_frequency=5, max_categories=MAX_ONE_HOT_LEVELS
        )
        parts.append(("categorical", make_pipeline(SimpleImputer(strategy="most_frequent"), encoder), categorical))
    regression = spec.task.is_regression
    model = Ridge(alpha=1.0) if regression else LogisticRegression(C=4.0, max_iter=3000)
    return lambda: make_pipeline(ColumnTransformer(parts), model)


def _naive_entries(prepared: PreparedCompetition, time: dict[str, Any]) -> Iterator[tuple[str, pd.DataFrame]]:
    """The naive forecasts of each series from its training rows: its last value, its value one (or more)
    seasons before the forecast time, its last season's mean. Written apart from the mission's own forecasting
    code, so a board built with them does not grade that code by itself."""
    spec = prepared.spec
    keys = list(time.get("keys", []))
    history = pd.concat([prepared.train, prepared.test], ignore_index=True)
    times = parse_time(history, time)
    order = time_order(times)
    steps = np.unique(order[np.isfinite(order)])
    season = max(1, season_of(times, steps))
    step = np.searchsorted(steps, order)
    series = row_keys(history, keys)
    n_train = len(prepared.train)
    known = pd.DataFrame({"series": series[:n_train], "step": step[:n_train], "y": prepared.train[spec.target]})
    known = known.dropna(subset=["y"]).sort_values("step")
    value_at = known.groupby(["series", "step"])["y"].mean()
    by_series = known.groupby("series")
    last_step, last = by_series["step"].max(), by_series["y"].last()
    recent = by_series["y"].apply(lambda y: y.tail(season).mean())
    fallback = float(known["y"].mean())
    wanted = pd.DataFrame({"series": series[n_train:].to_numpy(), "step": step[n_train:]})
    ahead = wanted["step"] - wanted["series"].map(last_step).fillna(wanted["step"] - 1)
    cycles = np.ceil(ahead.clip(lower=1) / season).astype(int)
    back = pd.MultiIndex.from_arrays([wanted["series"], wanted["step"] - cycles * season])
    lasts = wanted["series"].map(last).fillna(fallback).to_numpy(dtype=float)
    seasonal = value_at.reindex(back).to_numpy(dtype=float)
    forecasts = {
        "last": lasts,
        "seasonal": np.where(np.isnan(seasonal), lasts, seasonal),
        "mean": wanted["series"].map(recent).fillna(fallback).to_numpy(dtype=float),
    }
    for method, values in forecasts.items():
        yield f"naive-{method}", pd.DataFrame({spec.target: values})


def reference_entries(
    prepared: PreparedCompetition, time: dict[str, Any] | None = None, *, models: Path | None = None
) -> list[dict[str, object]]:
    """Train each reference team and score it on the public and private parts of the hidden labels. `time`: the
    rows' time, when the test rows are a forecast (the naive forecasts then enter too); `models`: where the image
    network's export is kept (a media competition's baselines embed its images)."""
    from sklearn.pipeline import make_pipeline

    spec, solution = prepared.spec, prepared.solution
    if solution is None:
        return []
    features = as_object_strings(prepared.train.drop(columns=[spec.id_column, *spec.target_columns]))
    test_features = as_object_strings(prepared.test.drop(columns=[spec.id_column]))
    order = solution.set_index(spec.id_column).loc[prepared.test[spec.id_column].to_numpy()]
    public = (order["Usage"] == "Public").to_numpy()
    y_true = order[spec.target_columns].reset_index(drop=True)
    truth = y_true if spec.targets else y_true[spec.target]
    regression = spec.task.is_regression
    teams: list[tuple[str, pd.DataFrame]] = []
    if spec.media is not None:  # the media extra: imported only for a media competition
        from agent_k.platforms.local.media_references import media_teams

        assert models is not None, "a media competition's baselines need the image network's cache"
        teams = media_teams(spec, prepared.train, prepared.test, prepared.files, models, _fit_predict)
    for name, model, linear in [] if spec.media else _regressors() if regression else _classifiers():
        # Reference teams are a board to rank against, not a search: on large data they train on a sample.
        cap = KNN_TRAIN_ROWS if name.startswith("knn") else MAX_TRAIN_ROWS
        rows = np.arange(len(features))
        if len(features) > cap:
            rows = np.random.default_rng(0).choice(len(features), cap, replace=False)
        x, y = features.iloc[rows], prepared.train.iloc[rows]

        def make(x: pd.DataFrame = x, model: Any = model, linear: bool = linear) -> Any:
            from sklearn.base import clone

            return make_pipeline(make_preprocessor(x, scale=linear, one_hot=linear), clone(model))

        teams.append((name, _fit_predict(spec, make, x, y, test_features)))
    text = [] if spec.media else _text_columns(features)
    if text:
        teams.append(("tfidf-linear", _fit_predict(spec, _tfidf_model(spec, text, features), features,
                                                    prepared.train, test_features)))  # fmt: skip
    if time is not None and spec.task is TaskType.regression:
        teams += list(_naive_entries(prepared, time))
    return [
        {
            "team": f"reference/{name}",
            "public_score": metrics.score(spec, truth[public], predictions[public]),
            "private_score": metrics.score(spec, truth[~public], predictions[~public]),
        }
        for name, predictions in teams
    ]
