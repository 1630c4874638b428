"""The search space: each model family's hyperparameters with their ranges, and the defaults it starts from.

It is also the closed set a recipe is checked against before it is rendered (`check_recipe`): a model may only
move the parameters declared here, within their ranges, and name the data's own columns.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection
from dataclasses import dataclass

from agent_k.ml.recipes import ModelFamily, ParamValue, Recipe

MAX_SEED = 2**31 - 1


class InvalidRecipe(ValueError):
    """A recipe outside the search space; the message says what, in one line."""


@dataclass(frozen=True)
class Param:
    low: float
    high: float
    log: bool = False
    integer: bool = False

    def sample(self, rng: random.Random) -> ParamValue:
        if self.log:
            value = math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        else:
            value = rng.uniform(self.low, self.high)
        return round(value) if self.integer else round(value, 6)

    def perturb(self, current: ParamValue, rng: random.Random, scale: float = 0.3) -> ParamValue:
        assert isinstance(current, int | float)
        if self.log:
            value = math.exp(math.log(max(float(current), self.low)) + rng.gauss(0, scale * 1.5))
        else:
            value = float(current) + rng.gauss(0, scale * (self.high - self.low))
        value = min(self.high, max(self.low, value))
        return round(value) if self.integer else round(value, 6)

    def check(self, name: str, value: ParamValue) -> None:
        """`InvalidRecipe` unless `value` is a number of this parameter's kind within its range."""
        if isinstance(value, bool) or not isinstance(value, int | float) or (self.integer and isinstance(value, float)):
            kind = "an integer" if self.integer else "a number"
            raise InvalidRecipe(f"{name} must be {kind}, got {_shown(value)}")
        if not (math.isfinite(value) and self.low <= value <= self.high):
            raise InvalidRecipe(f"{name} must be between {self.low:g} and {self.high:g}, got {_shown(value)}")


@dataclass(frozen=True)
class Choice:
    options: tuple[str, ...]

    def sample(self, rng: random.Random) -> ParamValue:
        return rng.choice(self.options)

    def perturb(self, current: ParamValue, rng: random.Random, scale: float = 0.3) -> ParamValue:
        return rng.choice(self.options)

    def check(self, name: str, value: ParamValue) -> None:
        if not isinstance(value, str) or value not in self.options:
            raise InvalidRecipe(f"{name} must be one of {', '.join(self.options)}, got {_shown(value)}")


SPACE: dict[ModelFamily, dict[str, Param | Choice]] = {
    ModelFamily.lightgbm: {
        "n_estimators": Param(50, 1500, log=True, integer=True),
        "learning_rate": Param(0.01, 0.3, log=True),
        "num_leaves": Param(4, 128, log=True, integer=True),
        "min_child_samples": Param(2, 100, log=True, integer=True),
        "subsample": Param(0.5, 1.0),
        "colsample_bytree": Param(0.3, 1.0),
        "reg_lambda": Param(1e-3, 10.0, log=True),
    },
    ModelFamily.hist_gradient_boosting: {
        "learning_rate": Param(0.01, 0.3, log=True),
        "max_iter": Param(50, 1000, log=True, integer=True),
        "max_leaf_nodes": Param(4, 128, log=True, integer=True),
        "min_samples_leaf": Param(2, 100, log=True, integer=True),
        "l2_regularization": Param(1e-4, 10.0, log=True),
    },
    ModelFamily.random_forest: {
        "n_estimators": Param(50, 500, log=True, integer=True),
        "min_samples_leaf": Param(1, 20, log=True, integer=True),
        "max_features": Param(0.2, 1.0),
    },
    ModelFamily.extra_trees: {
        "n_estimators": Param(50, 500, log=True, integer=True),
        "min_samples_leaf": Param(1, 20, log=True, integer=True),
        "max_features": Param(0.2, 1.0),
    },
    ModelFamily.linear: {"C": Param(1e-3, 100.0, log=True)},
    ModelFamily.knn: {"n_neighbors": Param(1, 50, log=True, integer=True), "weights": Choice(("uniform", "distance"))},
    ModelFamily.naive: {"method": Choice(("last", "seasonal", "mean"))},
}

DEFAULTS: dict[ModelFamily, dict[str, ParamValue]] = {
    ModelFamily.lightgbm: {
        "n_estimators": 300,
        "learning_rate": 0.05,
        "num_leaves": 31,
        "min_child_samples": 20,
        "subsample": 0.8,
        "colsample_bytree": 0.8,
        "reg_lambda": 0.1,
    },
    ModelFamily.hist_gradient_boosting: {
        "learning_rate": 0.1,
        "max_iter": 200,
        "max_leaf_nodes": 31,
        "min_samples_leaf": 20,
        "l2_regularization": 0.01,
    },
    ModelFamily.random_forest: {"n_estimators": 100, "min_samples_leaf": 1, "max_features": 0.5},
    ModelFamily.extra_trees: {"n_estimators": 100, "min_samples_leaf": 1, "max_features": 0.7},
    ModelFamily.linear: {"C": 1.0},
    ModelFamily.knn: {"n_neighbors": 10, "weights": "distance"},
    ModelFamily.naive: {"method": "seasonal"},
}


TEXT_SPACE: dict[str, Param | Choice] = {
    "word": Param(1, 3, integer=True),
    "char": Param(0, 6, integer=True),
    "min_df": Param(1, 5, integer=True),
    "max_features": Param(5_000, 300_000, log=True, integer=True),
    "svd": Param(0, 64, integer=True),
    "C": Param(0.1, 50.0, log=True),
}
"""Text settings (see `agent_k.ml.textfeatures`): n-gram lengths, min_df, vocabulary, SVD components, the text
model's C; a recipe's `text` holds the ones it moved from the defaults."""
TEXT_LINEAR_C = 4.0
"""A linear model on TF-IDF wants less regularisation than on a few scaled numbers."""


def default_recipe(
    family: ModelFamily,
    drop_columns: tuple[str, ...] = (),
    date_columns: tuple[str, ...] = (),
    *,
    text_columns: tuple[str, ...] = (),
    relative: str = "none",
) -> Recipe:
    """A family's defaults, reading the text columns, and predicting a forecast relative to its level."""
    params = dict(DEFAULTS[family])
    if text_columns and family is ModelFamily.linear:
        params["C"] = TEXT_LINEAR_C
    return Recipe(
        family=family,
        params=params,
        drop_columns=drop_columns,
        date_columns=date_columns,
        text_columns=() if family is ModelFamily.naive else text_columns,
        relative="none" if family is ModelFamily.naive else relative,
    )


def random_recipe(family: ModelFamily, rng: random.Random, base: Recipe) -> Recipe:
    """A fresh point of the family's space (an "immigrant"), keeping `base`'s column choices."""
    params = {name: spec.sample(rng) for name, spec in SPACE[family].items()}
    return base.model_copy(update={"family": family, "params": params})


def check_recipe(recipe: Recipe, columns: Collection[str] | None = None) -> Recipe:
    """`recipe` itself when it lies inside the search space: parameter names from its family's closed set (and
    the text settings' set), values of their kind within their ranges, a seed in range and, given the data's
    `columns`, only those columns named. `InvalidRecipe` with a one-line reason otherwise."""
    space = SPACE[recipe.family]
    for name, value in recipe.params.items():
        if name not in space:
            known = ", ".join(space) or "none"
            raise InvalidRecipe(f"{recipe.family.value} has no parameter {_shown(name)} (it has: {known})")
        space[name].check(name, value)
    for name, value in recipe.text.items():
        if name not in TEXT_SPACE:
            raise InvalidRecipe(f"no text setting {_shown(name)} (there are: {', '.join(TEXT_SPACE)})")
        TEXT_SPACE[name].check(f"text {name}", value)
    if recipe.seed is not None and not 0 <= recipe.seed <= MAX_SEED:
        raise InvalidRecipe(f"seed must be between 0 and {MAX_SEED}, got {recipe.seed}")
    if columns is not None:
        named = {*recipe.drop_columns, *recipe.log_columns, *recipe.frequency_columns, *recipe.date_columns}
        named |= {*recipe.target_columns, *recipe.text_columns, *(c for pair in recipe.ratio_columns for c in pair)}
        unknown = sorted(named - set(columns))
        if unknown:
            raise InvalidRecipe(f"no column {_shown(unknown[0])} in this competition's data")
    return recipe


def _shown(value: object) -> str:
    """A value as a reason may quote it: its repr, cut short (a hostile name can be very long)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
