"""How the reference teams encode a table: numbers imputed (and scaled for linear models), categories one-hot
encoded (linear, naive-Bayes and k-NN teams) or as ordinal codes (trees)."""

from __future__ import annotations

from typing import Any

import pandas as pd

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
