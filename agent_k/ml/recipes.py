"""Typed solution recipes and the search space they move in."""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

ParamValue = int | float | str


class ModelFamily(StrEnum):
    lightgbm = "lightgbm"
    hist_gradient_boosting = "hist_gradient_boosting"
    random_forest = "random_forest"
    extra_trees = "extra_trees"
    linear = "linear"
    knn = "knn"

    @property
    def needs_scaling(self) -> bool:
        return self in (ModelFamily.linear, ModelFamily.knn)


class Recipe(BaseModel):
    """One candidate solution: what to drop, how to model, and with which hyperparameters."""

    model_config = ConfigDict(frozen=True)

    family: ModelFamily
    params: dict[str, ParamValue] = Field(default_factory=dict)
    drop_columns: tuple[str, ...] = ()
    log_target: bool = False
    log_columns: tuple[str, ...] = ()
    """Skewed numeric columns replaced by sign(x)·log(1 + |x|)."""
    frequency_columns: tuple[str, ...] = ()
    """Categorical columns that also get a feature: how often their value occurs in train and test."""
    ratio_columns: tuple[tuple[str, str], ...] = ()
    """(numerator, denominator) pairs of positive numeric columns that become a new feature."""
    date_columns: tuple[str, ...] = ()
    """Date columns replaced by their year, month, day and weekday."""

    @property
    def key(self) -> str:
        """Stable identity: the same recipe always gets the same key, so evaluation is idempotent.
        Default fields are left out, so adding an optional field never changes existing keys."""
        canonical = json.dumps(self.model_dump(mode="json", exclude_defaults=True), sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    @property
    def feature_set(self) -> str:
        operations = (("log", self.log_columns), ("frequency", self.frequency_columns), ("ratio", self.ratio_columns))
        ops = [name for name, on in operations if on]
        return "+".join(ops) or "base"

    @property
    def niche(self) -> tuple[ModelFamily, str]:
        """The MAP-Elites cell this recipe competes in: model family by feature set."""
        return self.family, self.feature_set

    def summary(self) -> str:
        params = ", ".join(f"{k}={_short(v)}" for k, v in sorted(self.params.items()))
        extra = " log-target" if self.log_target else ""
        features = "" if self.feature_set == "base" else f" [{self.feature_set}]"
        return f"{self.family.value}({params}){extra}{features}"


def _short(value: ParamValue) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


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


@dataclass(frozen=True)
class Choice:
    options: tuple[str, ...]

    def sample(self, rng: random.Random) -> ParamValue:
        return rng.choice(self.options)

    def perturb(self, current: ParamValue, rng: random.Random, scale: float = 0.3) -> ParamValue:
        return rng.choice(self.options)


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
}


def default_recipe(
    family: ModelFamily, drop_columns: tuple[str, ...] = (), date_columns: tuple[str, ...] = ()
) -> Recipe:
    return Recipe(family=family, params=dict(DEFAULTS[family]), drop_columns=drop_columns, date_columns=date_columns)


def random_recipe(family: ModelFamily, rng: random.Random, base: Recipe) -> Recipe:
    """A fresh point of the family's space (an "immigrant"), keeping `base`'s column choices."""
    params = {name: spec.sample(rng) for name, spec in SPACE[family].items()}
    return base.model_copy(update={"family": family, "params": params})


@dataclass(frozen=True)
class FeatureOptions:
    """The feature operations that make sense for a dataset (from Research's profile)."""

    skewed: tuple[str, ...] = ()
    high_cardinality: tuple[str, ...] = ()
    ratios: tuple[tuple[str, str], ...] = ()
    dates: tuple[str, ...] = ()
    log_target: bool = False


def mutate(recipe: Recipe, rng: random.Random, options: FeatureOptions = FeatureOptions()) -> Recipe:
    """Perturb one to three hyperparameters; sometimes switch a feature operation or the target transform."""
    space = SPACE[recipe.family]
    params = dict(recipe.params)
    for name in rng.sample(sorted(space), k=min(len(space), rng.randint(1, 3))):
        params[name] = space[name].perturb(params.get(name, space[name].sample(rng)), rng)
    update: dict[str, object] = {"params": params}
    if options.log_target and rng.random() < 0.15:
        update["log_target"] = not recipe.log_target
    if options.skewed and rng.random() < 0.15:
        update["log_columns"] = () if recipe.log_columns else options.skewed
    if options.high_cardinality and rng.random() < 0.15:
        update["frequency_columns"] = () if recipe.frequency_columns else options.high_cardinality
    if options.ratios and rng.random() < 0.15:
        update["ratio_columns"] = () if recipe.ratio_columns else options.ratios
    return recipe.model_copy(update=update)


def crossover(a: Recipe, b: Recipe, rng: random.Random) -> Recipe:
    """Uniform crossover of hyperparameters and feature operations between two recipes of the same family."""
    if a.family is not b.family:
        return a
    params = {name: (a.params if rng.random() < 0.5 else b.params).get(name, a.params[name]) for name in a.params}
    return a.model_copy(
        update={
            "params": params,
            "log_target": rng.choice((a.log_target, b.log_target)),
            "log_columns": rng.choice((a.log_columns, b.log_columns)),
            "frequency_columns": rng.choice((a.frequency_columns, b.frequency_columns)),
            "ratio_columns": rng.choice((a.ratio_columns, b.ratio_columns)),
        }
    )


class Ensemble(BaseModel):
    """A weighted blend of recipes: each member trains on its own features, their predictions are averaged."""

    model_config = ConfigDict(frozen=True)

    members: tuple[Recipe, ...] = Field(min_length=2)
    weights: tuple[float, ...]

    @model_validator(mode="after")
    def _one_weight_per_member(self) -> Ensemble:
        if len(self.weights) != len(self.members) or min(self.weights) <= 0:
            raise ValueError("an ensemble needs one positive weight per member")
        return self

    @property
    def key(self) -> str:
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def summary(self) -> str:
        total = sum(self.weights)
        parts = [f"{w / total:.2f} {m.family.value}" for m, w in zip(self.members, self.weights, strict=True)]
        return "blend of " + " + ".join(parts)


class Script(BaseModel):
    """A solution script written or edited by an agent. It is never trusted to cross-validate itself: our
    harness (`agent_k.ml.harness`) runs it on each fold with the held-out labels removed."""

    model_config = ConfigDict(frozen=True)

    source: str = Field(min_length=1, max_length=200_000)
    parent: str | None = None
    """The key of the candidate it was edited from."""
    note: str = Field(default="", max_length=300)

    @property
    def key(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]

    def summary(self) -> str:
        return f"edited script{f' of {self.parent}' if self.parent else ''}: {self.note or 'no note'}"


Solution = Recipe | Ensemble | Script
"""What a candidate is: one recipe, a blend of recipes, or an agent's script."""


@cache
def _solution_adapter() -> TypeAdapter[Solution]:
    return TypeAdapter(Solution)


def load_solution(payload: str) -> Solution:
    """A solution from its archived JSON (the archive is re-read every generation: the adapter is built once)."""
    return _solution_adapter().validate_json(payload)
