"""Reference leaderboard entries: real baseline models trained on the public train set and scored on the
hidden test labels, so rank, percentile and medal mean something."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from agent_k.competition import Competition, PredictionKind, TaskType, metrics
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


def predict_frame(spec: Competition, model: Any, features: pd.DataFrame) -> pd.DataFrame:
    """Predictions in the competition's submission columns (without the id column)."""
    if spec.prediction is PredictionKind.value:
        return pd.DataFrame({spec.target: model.predict(features)})
    proba = model.predict_proba(features)
    by_class = {metrics.normalize_labels(pd.Series([c])).iloc[0]: proba[:, i] for i, c in enumerate(model.classes_)}
    if spec.prediction is PredictionKind.probability:
        return pd.DataFrame({spec.target: by_class.get(spec.positive_class or "", np.zeros(len(features)))})
    columns = {label: by_class.get(label, np.zeros(len(features))) for label in spec.classes or []}
    return pd.DataFrame(columns)


def reference_entries(prepared: PreparedCompetition) -> list[dict[str, object]]:
    """Train each reference model and score it on the public and private parts of the hidden labels."""
    from sklearn.pipeline import make_pipeline

    spec, solution = prepared.spec, prepared.solution
    if solution is None:
        return []
    drop = [spec.id_column, spec.target]
    features = as_object_strings(prepared.train.drop(columns=drop))
    test_features = as_object_strings(prepared.test.drop(columns=[spec.id_column]))
    target = prepared.train[spec.target]
    if spec.task is not TaskType.regression:
        target = metrics.normalize_labels(target)
    order = solution.set_index(spec.id_column).loc[prepared.test[spec.id_column].to_numpy()]
    public = (order["Usage"] == "Public").to_numpy()
    entries: list[dict[str, object]] = []
    models = _regressors() if spec.task is TaskType.regression else _classifiers()
    for name, model, linear in models:
        # Reference teams are a board to rank against, not a search: on large data they train on a sample.
        cap = KNN_TRAIN_ROWS if name.startswith("knn") else MAX_TRAIN_ROWS
        fit_x, fit_y = features, target
        if len(features) > cap:
            rows = np.random.default_rng(0).choice(len(features), cap, replace=False)
            fit_x, fit_y = features.iloc[rows], target.iloc[rows]
        pipeline = make_pipeline(make_preprocessor(fit_x, scale=linear, one_hot=linear), model)
        pipeline.fit(fit_x, fit_y)
        predictions = predict_frame(spec, pipeline, test_features)
        y_true = order[spec.target].reset_index(drop=True)
        entries.append(
            {
                "team": f"reference/{name}",
                "public_score": metrics.score(spec, y_true[public], predictions[public]),
                "private_score": metrics.score(spec, y_true[~public], predictions[~public]),
            }
        )
    return entries
