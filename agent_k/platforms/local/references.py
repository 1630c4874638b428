"""A competition's reference teams: real models trained on every public training row and scored on the hidden
test labels, so that rank, percentile and medal mean something (docs/architecture.md, "Standings").

The board holds the classic baselines, weak to strong, and the practitioner's strong first entry for the
competition's shape: early-stopped gradient boosting for a table, TF-IDF and a linear model for text, the naive
forecasts and gradient boosting on lags for a forecast, a pretrained network's embeddings or MFCC statistics and a
linear model for images and sounds. Each team's build time is recorded with it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from time import perf_counter
from typing import Any

import numpy as np
import pandas as pd

from agent_k.competition import Competition, PredictionKind, TaskType, metric_scoring
from agent_k.competition.columns import looks_like_text
from agent_k.platforms.local.encoding import MAX_ONE_HOT_LEVELS, as_object_strings, make_preprocessor, split_columns
from agent_k.platforms.local.forecast_references import NAIVE_METHODS, lag_features, naive_forecast
from agent_k.platforms.local.materialise import PreparedCompetition
from agent_k.platforms.local.practitioner import boosting

KNN_TRAIN_ROWS = 5_000
"""k-NN compares every test row with every training row: above this many rows its teams train on a sample, and
their names say so (`knn-15-sample-5000`)."""
PRACTITIONER = "lightgbm-early-stopping"

Team = tuple[str, int, Callable[[], pd.DataFrame]]
"""A team's name, the training rows it learns from, and how to train it and predict the test rows."""


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
        return pd.DataFrame(
            {spec.target: metric_scoring.normalize_labels(pd.Series(model.predict(features))).to_numpy()}
        )
    proba = model.predict_proba(features)
    by_class = {
        metric_scoring.normalize_labels(pd.Series([c])).iloc[0]: proba[:, i] for i, c in enumerate(model.classes_)
    }
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
        labels = metric_scoring.normalize_labels(labels)
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


def _table_teams(spec: Competition, train: pd.DataFrame, features: pd.DataFrame, test: pd.DataFrame) -> list[Team]:
    """The classic baselines, weak to strong, and the practitioner's early-stopped LightGBM."""
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline

    teams: list[Team] = []
    for name, model, linear in _regressors() if spec.task.is_regression else _classifiers():
        x, y = features, train
        if name.startswith("knn") and len(features) > KNN_TRAIN_ROWS:
            rows = np.random.default_rng(0).choice(len(features), KNN_TRAIN_ROWS, replace=False)
            x, y, name = features.iloc[rows], train.iloc[rows], f"{name}-sample-{KNN_TRAIN_ROWS}"

        def make(x: pd.DataFrame = x, model: Any = model, linear: bool = linear) -> Any:
            return make_pipeline(make_preprocessor(x, scale=linear, one_hot=linear), clone(model))

        teams.append((name, len(x), partial(_fit_predict, spec, make, x, y, test)))
    practitioner = partial(_fit_predict, spec, boosting(spec, features), features, train, test)
    teams.append((PRACTITIONER, len(features), practitioner))
    return teams


def _lag_boosting(
    prepared: PreparedCompetition, time: dict[str, Any], features: pd.DataFrame, test: pd.DataFrame
) -> pd.DataFrame:
    """The practitioner's forecast: early-stopped LightGBM on the rows' own columns and lags every test row can
    know, validated on the latest tenth of the training rows."""
    spec, n_train = prepared.spec, len(features)
    lags, step = lag_features(prepared, time)
    frame = pd.concat([pd.concat([features, test], ignore_index=True), lags], axis=1)
    x, test_x = frame.iloc[:n_train], frame.iloc[n_train:].reset_index(drop=True)
    y = prepared.train[spec.target].reset_index(drop=True)
    known = y.notna().to_numpy()
    model = boosting(spec, x)().fit(x[known], y[known], earlystoppedboosting__order=step[:n_train][known])
    return as_submission(spec, model, test_x)


def _timed(teams: list[Team]) -> list[tuple[str, int, pd.DataFrame, float]]:
    built = []
    for name, rows, build in teams:
        start = perf_counter()
        predictions = build()
        built.append((name, rows, predictions, round(perf_counter() - start, 3)))
    return built


def reference_entries(
    prepared: PreparedCompetition, time: dict[str, Any] | None = None, *, models: Path | None = None
) -> list[dict[str, object]]:
    """Train each reference team on every training row and score it on the public and private parts of the hidden
    labels. `time`: the rows' time, when the test rows are a forecast (the forecasting teams then enter too);
    `models`: where the image network's export is kept (a media competition's teams embed its images)."""
    spec, solution = prepared.spec, prepared.solution
    if solution is None:
        return []
    features = as_object_strings(prepared.train.drop(columns=[spec.id_column, *spec.target_columns]))
    test_features = as_object_strings(prepared.test.drop(columns=[spec.id_column]))
    order = solution.set_index(spec.id_column).loc[prepared.test[spec.id_column].to_numpy()]
    public = (order["Usage"] == "Public").to_numpy()
    y_true = order[spec.target_columns].reset_index(drop=True)
    truth = y_true if spec.targets else y_true[spec.target]
    teams: list[Team] = []
    if spec.media is not None:  # the media extra: imported only for a media competition
        from agent_k.platforms.local.media_references import media_teams

        assert models is not None, "a media competition's teams need the image network's cache"
        built = media_teams(spec, prepared.train, prepared.test, prepared.files, models, _fit_predict)
        teams = [(name, len(features), build) for name, build in built]
    else:
        n_train = len(features)
        teams = _table_teams(spec, prepared.train, features, test_features)
        if text := _text_columns(features):
            make = _tfidf_model(spec, text, features)
            tfidf = partial(_fit_predict, spec, make, features, prepared.train, test_features)
            teams.append(("tfidf-linear", n_train, tfidf))
        if time is not None and spec.task is TaskType.regression:
            teams += [(f"naive-{m}", n_train, partial(naive_forecast, prepared, time, m)) for m in NAIVE_METHODS]
            teams.append(("lightgbm-lags", n_train, partial(_lag_boosting, prepared, time, features, test_features)))
    return [
        {
            "team": f"reference/{name}",
            "public_score": metric_scoring.score(spec, truth[public], predictions[public]),
            "private_score": metric_scoring.score(spec, truth[~public], predictions[~public]),
            "train_rows": rows,
            "build_s": seconds,
        }
        for name, rows, predictions, seconds in _timed(teams)
    ]
