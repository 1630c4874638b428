"""Text columns as features, as a strong practitioner starts: word (1-2) and character (2-5) n-gram TF-IDF.

- A linear model reads the sparse TF-IDF matrix directly (`tfidf`). It reads no label, so it is fitted once on all
  of a table's text, training and test rows alike (as a practitioner fits it on train and test), and every fold of
  the model takes its rows of that one matrix (`shared_tfidf`): one fit where each fold made its own, and the
  same footing in CV as for the submission, whose vocabulary also saw the rows it predicts.
- A tree model gets what it can split on: the out-of-fold prediction of a linear text model (`TextModel`: on
  the rows it is fitted on, each row's value comes from a model that never saw that row; elsewhere, from one
  fitted on all of them), a few SVD components of the TF-IDF (`svd`), and cheap statistics (`TextStatistics`).

Settings (a plain dict, part of a recipe's search space): `word` (longest word n-gram), `char` (longest
character n-gram, 0 for none), `min_df`, `max_features`, `svd` (components, 0 for none), `C` (the text
model's regularisation). Self-contained (NumPy, pandas, scikit-learn): our templates embed this source.
"""

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.pipeline import FeatureUnion, make_pipeline

DEFAULT_TEXT: dict[str, Any] = {"word": 2, "char": 5, "min_df": 2, "max_features": 100_000, "svd": 0, "C": 4.0}
INNER_FOLDS = 3
TEXT_SOLVER: dict[str, Any] = {"tol": 1e-3, "max_iter": 300}
"""On TF-IDF a logistic regression stopped early fits in half the time, and it regularises (measured on the
bird-strike remarks: 1.7 s a fit instead of 2.9 s, macro F1 0.477 instead of 0.455)."""


def joined(frame: Any) -> pd.Series:
    """The text columns of a frame as one string per row (missing text is empty)."""
    table = pd.DataFrame(frame)
    return table.fillna("").astype(str).agg(" | ".join, axis=1)


def tfidf(settings: dict[str, Any]) -> Any:
    """Word and character n-gram TF-IDF of the joined text columns (sparse)."""
    words = TfidfVectorizer(
        ngram_range=(1, int(settings["word"])),
        min_df=int(settings["min_df"]),
        max_features=int(settings["max_features"]),
        sublinear_tf=True,
        strip_accents="unicode",
    )
    parts = [("words", words)]
    if int(settings["char"]) >= 2:
        characters = TfidfVectorizer(
            analyzer="char_wb",
            ngram_range=(2, int(settings["char"])),
            min_df=int(settings["min_df"]),
            max_features=int(settings["max_features"]),
            sublinear_tf=True,
        )
        parts.append(("characters", characters))
    return make_pipeline(_Joiner(), FeatureUnion(parts))


class _Shared:
    """A matrix that copies of an estimator share (scikit-learn's `clone` deep-copies parameters)."""

    def __init__(self, matrix: Any) -> None:
        self.matrix = matrix

    def __deepcopy__(self, memo: dict[int, Any]) -> "_Shared":
        return self


class MatrixRows(BaseEstimator, TransformerMixin):  # type: ignore[misc]
    """The rows of a matrix made once for every row of a table, picked by the frame's index (training rows first,
    then the test rows)."""

    def __init__(self, shared: _Shared) -> None:
        self.shared = shared

    def fit(self, frame: Any, y: Any = None) -> "MatrixRows":
        return self

    def transform(self, frame: Any) -> Any:
        return self.shared.matrix[np.asarray(frame.index)]


def shared_tfidf(settings: dict[str, Any], text: pd.DataFrame) -> MatrixRows:
    """The TF-IDF of every row's text (`text` indexed by row position), fitted once, as a transformer of rows."""
    return MatrixRows(_Shared(tfidf(settings).fit_transform(text)))


class _Joiner(BaseEstimator, TransformerMixin):  # type: ignore[misc]
    def fit(self, frame: Any, y: Any = None) -> "_Joiner":
        return self

    def transform(self, frame: Any) -> pd.Series:
        return joined(frame)


class TextStatistics(BaseEstimator, TransformerMixin):  # type: ignore[misc]
    """Per text column: its length, words, digits, capitals and punctuation."""

    def fit(self, frame: Any, y: Any = None) -> "TextStatistics":
        return self

    def transform(self, frame: Any) -> np.ndarray:
        columns = []
        for _, text in pd.DataFrame(frame).fillna("").astype(str).items():
            columns += [
                text.str.len(),
                text.str.count(r"\S+"),
                text.str.count(r"\d"),
                text.str.count(r"[A-Z]"),
                text.str.count(r"[^\w\s]"),
            ]
        return np.column_stack([c.to_numpy(dtype=float) for c in columns])


def svd(settings: dict[str, Any]) -> Any:
    components = int(settings["svd"])
    return make_pipeline(tfidf(settings), TruncatedSVD(components, random_state=0))


class TextModel(BaseEstimator, TransformerMixin):  # type: ignore[misc]
    """A linear model on the text's TF-IDF, as features for another model: its class probabilities (the
    positive one for two classes) or its value. `fit_transform` returns out-of-fold outputs on the rows it is
    fitted on, so the model downstream never learns from a prediction that saw its own label. The TF-IDF is
    fitted once on those rows (it reads no label); only the linear model is refitted in the inner folds."""

    def __init__(self, settings: dict[str, Any], regression: bool, seed: int = 0) -> None:
        self.settings = settings
        self.regression = regression
        self.seed = seed

    def _estimator(self) -> Any:
        c = float(self.settings["C"])
        return Ridge(alpha=1.0 / c) if self.regression else LogisticRegression(C=c, **TEXT_SOLVER)

    def _outputs(self, model: Any, matrix: Any) -> np.ndarray:
        if self.regression:
            return np.asarray(model.predict(matrix), dtype=float)[:, None]
        probabilities = np.asarray(model.predict_proba(matrix), dtype=float)
        return probabilities[:, 1:] if probabilities.shape[1] == 2 else probabilities

    def fit(self, frame: Any, y: Any = None) -> "TextModel":
        self.vectorizer_ = tfidf(self.settings)
        self.model_ = self._estimator().fit(self.vectorizer_.fit_transform(frame), y)
        return self

    def transform(self, frame: Any) -> np.ndarray:
        return self._outputs(self.model_, self.vectorizer_.transform(frame))

    def fit_transform(self, frame: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        self.vectorizer_ = tfidf(self.settings)
        matrix = self.vectorizer_.fit_transform(frame)
        target = pd.Series(np.asarray(y))
        self.model_ = self._estimator().fit(matrix, target)
        if self.regression or target.value_counts().min() < INNER_FOLDS:
            splitter = KFold(INNER_FOLDS, shuffle=True, random_state=self.seed)
        else:
            splitter = StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=self.seed)
        full = self._outputs(self.model_, matrix)
        outputs = np.zeros_like(full)
        for fit_rows, held_out in splitter.split(np.zeros(len(target)), target.astype(str)):
            inner = self._estimator().fit(matrix[fit_rows], target.iloc[fit_rows])
            part = self._outputs(inner, matrix[held_out])
            # a class missing from this inner fold would not line up: those rows take the full model's output
            outputs[held_out] = part if part.shape[1] == full.shape[1] else full[held_out]
        return outputs
