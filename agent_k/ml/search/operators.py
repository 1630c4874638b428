"""The variation operators: mutation and crossover of recipes, within the feature operations a dataset allows."""

from __future__ import annotations

import random
from dataclasses import dataclass

from agent_k.ml.recipes import Recipe
from agent_k.ml.search.space import SPACE, TEXT_SPACE


@dataclass(frozen=True)
class FeatureOptions:
    """The feature operations that make sense for a dataset (from Research's profile)."""

    skewed: tuple[str, ...] = ()
    high_cardinality: tuple[str, ...] = ()
    ratios: tuple[tuple[str, str], ...] = ()
    dates: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    log_target: bool = False
    text: tuple[str, ...] = ()
    """Free-text columns: every recipe reads them (TF-IDF for linear models, a stacked text model for trees)."""
    forecast: bool = False
    """The test rows are a forecast of a numeric target: recipes may predict relative to the series' level."""
    positive_target: bool = False
    learn_logs: bool = False
    """The metric is RMSLE: recipes start by learning log(1 + y), which is what it scores."""


def relative_forms(options: FeatureOptions) -> tuple[str, ...]:
    """How a forecast's target may be taken relative to its series' level."""
    if not options.forecast:
        return ("none",)
    return ("none", "difference", "ratio") if options.positive_target else ("none", "difference")


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
    if options.categorical and recipe.family.spec.native_categorical and rng.random() < 0.15:
        update["native_categorical"] = not recipe.native_categorical
    if options.ratios and rng.random() < 0.15:
        update["ratio_columns"] = () if recipe.ratio_columns else options.ratios
    if recipe.text_columns and rng.random() < 0.3:
        text = dict(recipe.text)
        for name in rng.sample(sorted(TEXT_SPACE), k=rng.randint(1, 2)):
            text[name] = TEXT_SPACE[name].perturb(text.get(name, TEXT_SPACE[name].sample(rng)), rng)
        update["text"] = text
    if options.forecast and not recipe.family.spec.model_free and rng.random() < 0.15:
        update["relative"] = rng.choice(relative_forms(options))
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
            "text": rng.choice((a.text, b.text)),
            "relative": rng.choice((a.relative, b.relative)),
        }
    )
