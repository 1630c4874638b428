"""The variation operators: mutation and crossover of recipes, within the feature operations a dataset allows."""

from __future__ import annotations

import random
from dataclasses import dataclass

from agent_k.ml.recipes import ModelFamily, Recipe
from agent_k.ml.search.space import SPACE


@dataclass(frozen=True)
class FeatureOptions:
    """The feature operations that make sense for a dataset (from Research's profile)."""

    skewed: tuple[str, ...] = ()
    high_cardinality: tuple[str, ...] = ()
    ratios: tuple[tuple[str, str], ...] = ()
    dates: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
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
    if options.high_cardinality and rng.random() < 0.15:
        update["target_columns"] = () if recipe.target_columns else options.high_cardinality
    if options.categorical and recipe.family is ModelFamily.lightgbm and rng.random() < 0.15:
        update["native_categorical"] = not recipe.native_categorical
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
            "target_columns": rng.choice((a.target_columns, b.target_columns)),
            "native_categorical": rng.choice((a.native_categorical, b.native_categorical)),
            "ratio_columns": rng.choice((a.ratio_columns, b.ratio_columns)),
        }
    )
