"""The model families, one declaration each: the estimator, its fixed arguments, its search space and defaults,
its traits (what input it needs, how it treats missing values, whether it is seeded) and what a warm worker
preloads for it. A new family is one entry here (and its package in `pyproject.toml`): the renderer, the search,
Research's recommendations and the warm workers read this table."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from agent_k.ml.params import Choice, Param, ParamValue


class ModelFamily(StrEnum):
    lightgbm = "lightgbm"
    hist_gradient_boosting = "hist_gradient_boosting"
    random_forest = "random_forest"
    extra_trees = "extra_trees"
    linear = "linear"
    knn = "knn"
    svm = "svm"
    """A support vector machine with an RBF kernel (small, dense numeric classification tables)."""
    cnn = "cnn"
    """A small convolutional network trained from scratch on the rows' pixels (small images, spectrograms)."""
    finetuned = "finetuned"
    """The pretrained image network, fine-tuned on the rows' pixels (photographs, with a GPU or a long budget)."""
    naive = "naive"
    """A naive forecast (last value, seasonal naive, recent mean per series): no model."""

    @property
    def spec(self) -> Family:
        return FAMILIES[self]


@dataclass(frozen=True)
class DataTraits:
    """What Research found that decides which families suit the data, and in which order."""

    rows: int
    text: bool = False
    numeric_only: bool = False
    forecast: bool = False
    """A regression forecast of unique (series, time) rows: the naive forecasts apply."""
    media: bool = False
    """The rows are images or sounds: a thousand dense features an image, where linear models come first."""
    pixels: bool = False
    """Each row's small image, or its sound's spectrogram, is at hand for a network trained from scratch."""
    fine_tune: bool = False
    """Each row's image is at hand at a size the pretrained network reads, and a GPU or the budget allows training
    it."""
    classification: bool = False
    """The target is a class, not a number."""
    classes: int = 0
    """How many classes (0 for a number)."""

    @property
    def wide(self) -> bool:
        """TF-IDF or embeddings: many weak columns, where a linear model is fast and strong, trees slow."""
        return self.text or self.media


RETRIEVAL_CLASSES = 200
"""Above this many classes the search leads with nearest neighbours, the retrieval head: their fit is storing
the rows, and the classes only widen their output. Boosting, which grows a tree per class a round, is left out
(on 300 classes LightGBM's first fit timed out in its share of 90 s: docs/benchmarks.md, "Many classes")."""
LINEAR_CELLS = 1_000_000
"""Rows times classes above which the linear model (a weight per class and feature) is left out too: on 900 rows
of 300 classes it fit in 25 s and was the best model, on 3,030 rows of 1,010 its first fit ran 135 s of a 180 s
budget and timed out."""


def _many_classes(data: DataTraits) -> bool:
    return data.classes > RETRIEVAL_CLASSES


def affordable(family: ModelFamily, rows: int, classes: int) -> bool:
    """Whether the family's fit grows slowly enough with the classes for these rows: boosting not past
    RETRIEVAL_CLASSES, the linear model not past LINEAR_CELLS (read by the families' ranks and by Prototype's
    baselines alike)."""
    if family in (ModelFamily.lightgbm, ModelFamily.hist_gradient_boosting):
        return classes <= RETRIEVAL_CLASSES
    if family is ModelFamily.linear:
        return rows * classes <= LINEAR_CELLS
    return True


SVM_ROWS = 5_000
"""A kernel machine's fit grows with the square of the rows or faster (five times over, for its probabilities):
above this many, trees and the linear model serve better in the same time."""

EARLY_STOPPING_ROWS = 100_000
"""Fit rows above which a classifier's boosting holds out a tenth to stop on: at least 10,000 held-out rows, where
a score per round is steady (on mpls-stops' ~3,000 held-out rows it stopped on noise and cost AUC:
docs/benchmarks.md)."""
REGRESSION_EARLY_STOPPING_ROWS = 20_000
"""The same for a regression: its loss, averaged over 2,000 held-out rows, moves smoothly round to round, and
stopping there helped on diamonds' 32,000 fit rows (docs/benchmarks.md, "Folds and the budget")."""


def early_stopping_rows(regression: bool) -> int:
    """Fit rows above which boosting holds out a tenth to stop on."""
    return REGRESSION_EARLY_STOPPING_ROWS if regression else EARLY_STOPPING_ROWS


TIMED_ROUNDS_STRETCH = 2.0
"""How far past the time left a candidate's projected cost may go where its rounds end with the time (`stops_early`):
it then comes back with about half its rounds or more, where another family would time out."""

FINE_TUNE_BATCH = 32
"""Images a fine-tuning step trains on: what a CPU manages, and plenty on a GPU for a network this size."""

Arguments = Callable[[dict[str, ParamValue], bool, bool], dict[str, ParamValue]]
"""(the recipe's params, regression, reads text) -> the estimator's keyword arguments."""


@dataclass(frozen=True)
class Family:
    module: str
    """Where the estimators live (empty for a family without a model)."""
    classifier: str
    regressor: str
    space: Mapping[str, Param | Choice]
    defaults: Mapping[str, ParamValue]
    rank: Callable[[DataTraits], float | None]
    """Its place among Research's recommendations for data of these traits (lower first); None: not for it."""
    fixed: str = ""
    """Arguments every fit gets, in the script's terms (SEED, N_JOBS)."""
    classifier_fixed: str = ""
    """Arguments a classifier's fits get besides `fixed`, in the same terms."""
    arguments: Arguments | None = None
    """How the recipe's params become the estimator's arguments, where they are not passed as they are."""
    text_defaults: Mapping[str, ParamValue] = field(default_factory=dict)
    """Defaults that differ when the family reads TF-IDF text."""
    scaled: bool = False
    """Needs standard-scaled numbers and one-hot categories (a dense, comparable input)."""
    handles_missing: bool = False
    """Its trees learn where missing values go, so imputing them first only costs time and information."""
    seeded: bool = True
    """Its fit depends on a random seed, so seeds of one recipe differ and blend well."""
    reads_sparse_text: bool = False
    """Reads the TF-IDF matrix itself (else text reaches it through a stacked text model)."""
    native_categorical: bool = False
    """Can split on categories themselves (LightGBM's categorical features)."""
    stops_early: bool = False
    """Boosting whose rounds stop early: on a held-out tenth of a fit's rows once they stop improving (above
    `early_stopping_rows`), so its rounds fit the data rather than the searched cap, and at its share of the
    run's time where one is given, so a large table on a short budget gets fewer rounds rather than a timeout."""
    stopping_defaults: Mapping[str, ParamValue] = field(default_factory=dict)
    """Defaults that differ where its fits stop early: a high cap on the rounds, which the held-out rows cut."""
    forecast_form: Literal["ratio", "difference"] = "ratio"
    """How it predicts a forecast of a positive target relative to the series' level: trees cannot extrapolate a
    trend, so they predict ratios; a linear model extrapolates differences."""
    preload: tuple[str, ...] = ()
    """Modules a warm worker imports once for it."""
    gpu: bool = False
    """Uses a GPU where one is present."""
    copied: bool = False
    """Its estimators are AGENT-K's own (`module`, a file of the package), copied into the scripts that use them:
    a solution never imports agent_k."""
    pixels: bool = False
    """Reads each row's pixels (`agent_k.media.cnn.PIXELS`), not the feature table."""

    @property
    def model_free(self) -> bool:
        return not self.module


def _linear_arguments(params: dict[str, ParamValue], regression: bool, text: bool) -> dict[str, ParamValue]:
    """Ridge's alpha is logistic regression's 1/C, so both search one C; TF-IDF wants its own solver."""
    from agent_k.ml.textfeatures import TEXT_SOLVER  # scikit-learn: imported when a script is rendered, not before

    if regression:
        return {"alpha": round(1.0 / float(params["C"]), 6)}
    return {**params, **(TEXT_SOLVER if text else {"max_iter": 3000})}


def _small_numeric_classes(data: DataTraits) -> bool:
    """Where an RBF kernel machine is a strong, different model: a few thousand rows of numbers and a class (its
    regression would need a scaled target; text and embeddings are the linear model's)."""
    return data.classification and data.numeric_only and not data.wide and data.rows <= SVM_ROWS


_FOREST = {
    "n_estimators": Param(50, 500, log=True, integer=True),
    "min_samples_leaf": Param(1, 20, log=True, integer=True),
    "max_features": Param(0.2, 1.0),
}

FAMILIES: dict[ModelFamily, Family] = {
    ModelFamily.lightgbm: Family(
        "lightgbm", "LGBMClassifier", "LGBMRegressor",
        space={
            "n_estimators": Param(50, 1500, log=True, integer=True),
            "learning_rate": Param(0.01, 0.3, log=True),
            "num_leaves": Param(4, 128, log=True, integer=True),
            "min_child_samples": Param(2, 100, log=True, integer=True),
            "subsample": Param(0.5, 1.0),
            "colsample_bytree": Param(0.3, 1.0),
            "reg_lambda": Param(1e-3, 10.0, log=True),
        },
        defaults={"n_estimators": 300, "learning_rate": 0.05, "num_leaves": 31, "min_child_samples": 20,
                  "subsample": 0.8, "colsample_bytree": 0.8, "reg_lambda": 0.1},
        rank=lambda data: int(data.wide) if affordable(ModelFamily.lightgbm, data.rows, data.classes) else None,
        fixed="subsample_freq=1, random_state=SEED, n_jobs=N_JOBS, verbosity=-1",
        stopping_defaults={"n_estimators": 1500, "learning_rate": 0.1},
        handles_missing=True, native_categorical=True, stops_early=True, preload=("lightgbm",),
    ),
    ModelFamily.hist_gradient_boosting: Family(
        "sklearn.ensemble", "HistGradientBoostingClassifier", "HistGradientBoostingRegressor",
        space={
            "learning_rate": Param(0.01, 0.3, log=True),
            "max_iter": Param(50, 1000, log=True, integer=True),
            "max_leaf_nodes": Param(4, 128, log=True, integer=True),
            "min_samples_leaf": Param(2, 100, log=True, integer=True),
            "l2_regularization": Param(1e-4, 10.0, log=True),
        },
        defaults={"learning_rate": 0.1, "max_iter": 200, "max_leaf_nodes": 31, "min_samples_leaf": 20,
                  "l2_regularization": 0.01},
        rank=lambda data: 3 if affordable(ModelFamily.hist_gradient_boosting, data.rows, data.classes) else None,
        fixed="random_state=SEED", handles_missing=True, preload=("sklearn.ensemble",),
    ),
    ModelFamily.random_forest: Family(
        "sklearn.ensemble", "RandomForestClassifier", "RandomForestRegressor", space=_FOREST,
        defaults={"n_estimators": 100, "min_samples_leaf": 1, "max_features": 0.5},
        rank=lambda data: 5, fixed="random_state=SEED, n_jobs=N_JOBS", preload=("sklearn.ensemble",),
    ),
    ModelFamily.extra_trees: Family(
        "sklearn.ensemble", "ExtraTreesClassifier", "ExtraTreesRegressor", space=_FOREST,
        defaults={"n_estimators": 100, "min_samples_leaf": 1, "max_features": 0.7},
        rank=lambda data: 4, fixed="random_state=SEED, n_jobs=N_JOBS", preload=("sklearn.ensemble",),
    ),
    ModelFamily.linear: Family(
        "sklearn.linear_model", "LogisticRegression", "Ridge",
        space={"C": Param(1e-3, 100.0, log=True)}, defaults={"C": 1.0}, text_defaults={"C": 4.0},
        rank=lambda data: (0 if data.wide else 1) if affordable(ModelFamily.linear, data.rows, data.classes) else None,
        arguments=_linear_arguments,
        scaled=True, seeded=False, reads_sparse_text=True, forecast_form="difference",
        preload=("sklearn.linear_model",),
    ),
    ModelFamily.knn: Family(
        "sklearn.neighbors", "KNeighborsClassifier", "KNeighborsRegressor",
        space={"n_neighbors": Param(1, 50, log=True, integer=True), "weights": Choice(("uniform", "distance"))},
        defaults={"n_neighbors": 10, "weights": "distance"},
        rank=lambda data: (
            -1 if _many_classes(data) else 2 if data.numeric_only and not data.text and data.rows <= 20_000 else None
        ),
        scaled=True, seeded=False, preload=("sklearn.neighbors",),
    ),
    ModelFamily.svm: Family(
        "sklearn.svm", "SVC", "SVR",
        space={"C": Param(0.1, 1000.0, log=True)}, defaults={"C": 1.0},
        rank=lambda data: 2.5 if _small_numeric_classes(data) else None,
        classifier_fixed="probability=True, random_state=SEED", scaled=True, preload=("sklearn.svm",),
    ),
    ModelFamily.cnn: Family(
        "agent_k.media.cnn", "SmallCNNClassifier", "SmallCNNRegressor",
        space={
            "steps": Param(50, 2000, log=True, integer=True),
            "learning_rate": Param(1e-3, 3e-2, log=True),
            "width": Param(8, 48, log=True, integer=True),
            "size": Param(24, 64, integer=True),
            "augment": Choice(("shift", "mirror")),
        },
        defaults={"steps": 150, "learning_rate": 0.01, "width": 16, "size": 32, "augment": "shift"},
        rank=lambda data: 0.5 if data.pixels else None,
        fixed="pixels=MEDIA['pixel_kind'], random_state=SEED, n_jobs=N_JOBS", copied=True, pixels=True, gpu=True,
    ),
    ModelFamily.finetuned: Family(
        "agent_k.media.cnn", "FineTunedClassifier", "FineTunedRegressor",
        space={
            "steps": Param(50, 3000, log=True, integer=True),
            "learning_rate": Param(1e-4, 3e-3, log=True),
            "size": Param(64, 160, integer=True),
            "augment": Choice(("shift", "mirror")),
        },
        defaults={"steps": 300, "learning_rate": 0.001, "size": 128, "augment": "mirror"},
        rank=lambda data: 0.25 if data.fine_tune else None,
        fixed=f"pixels=MEDIA['pixel_kind'], batch_size={FINE_TUNE_BATCH}, random_state=SEED, n_jobs=N_JOBS",
        copied=True, pixels=True, gpu=True,
    ),
    ModelFamily.naive: Family(
        "", "", "", space={"method": Choice(("last", "seasonal", "mean"))}, defaults={"method": "seasonal"},
        rank=lambda data: 6 if data.forecast else None, seeded=False,
    ),
}  # fmt: skip


def recommended(data: DataTraits) -> list[ModelFamily]:
    """The families that suit the data, in Research's order: a strong baseline, then the cheap ones (fast
    diversity for blends)."""
    ranked = [(rank, family) for family, spec in FAMILIES.items() if (rank := spec.rank(data)) is not None]
    return [family for _, family in sorted(ranked, key=lambda pair: pair[0])]


def preloaded_modules() -> tuple[str, ...]:
    """What a warm worker imports for the families, each module once."""
    return tuple(dict.fromkeys(module for spec in FAMILIES.values() for module in spec.preload))


WARM_PRELOAD = (
    "numpy",
    "pandas",
    "pyarrow.parquet",
    "sklearn.base",
    "sklearn.compose",
    "sklearn.impute",
    "sklearn.model_selection",
    "sklearn.pipeline",
    "sklearn.preprocessing",
    *preloaded_modules(),
)
"""What a warm worker's parent imports once (`agent_k.sandbox.warm.WarmPool.preload`): what every rendered
script reads, and what the model families declare."""
