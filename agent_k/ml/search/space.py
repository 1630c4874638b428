"""The search space: each model family's hyperparameters and defaults (declared with the family, in
`agent_k.ml.families`), the text settings, and how a recipe starts and moves within them.

It is also the closed set a recipe is checked against before it is rendered (`check_recipe`): a model may only
move the parameters declared here, within their ranges, and name the data's own columns.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping

from agent_k.ml.families import FAMILIES
from agent_k.ml.params import Choice as Choice
from agent_k.ml.params import InvalidRecipe as InvalidRecipe
from agent_k.ml.params import Param as Param
from agent_k.ml.params import ParamValue, shown
from agent_k.ml.recipes import ModelFamily, Recipe

MAX_SEED = 2**31 - 1

SPACE: dict[ModelFamily, Mapping[str, Param | Choice]] = {family: spec.space for family, spec in FAMILIES.items()}
DEFAULTS: dict[ModelFamily, Mapping[str, ParamValue]] = {f: spec.defaults for f, spec in FAMILIES.items()}


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


def default_recipe(
    family: ModelFamily,
    drop_columns: tuple[str, ...] = (),
    date_columns: tuple[str, ...] = (),
    *,
    text_columns: tuple[str, ...] = (),
    relative: str = "none",
) -> Recipe:
    """A family's defaults, reading the text columns, and predicting a forecast relative to its level."""
    params = {**family.spec.defaults, **(family.spec.text_defaults if text_columns else {})}
    return Recipe(
        family=family,
        params=params,
        drop_columns=drop_columns,
        date_columns=date_columns,
        text_columns=() if family.spec.model_free else text_columns,
        relative="none" if family.spec.model_free else relative,
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
            raise InvalidRecipe(f"{recipe.family.value} has no parameter {shown(name)} (it has: {known})")
        space[name].check(name, value)
    for name, value in recipe.text.items():
        if name not in TEXT_SPACE:
            raise InvalidRecipe(f"no text setting {shown(name)} (there are: {', '.join(TEXT_SPACE)})")
        TEXT_SPACE[name].check(f"text {name}", value)
    if recipe.seed is not None and not 0 <= recipe.seed <= MAX_SEED:
        raise InvalidRecipe(f"seed must be between 0 and {MAX_SEED}, got {recipe.seed}")
    if columns is not None:
        named = {*recipe.drop_columns, *recipe.log_columns, *recipe.frequency_columns, *recipe.date_columns}
        named |= {*recipe.target_columns, *recipe.text_columns, *(c for pair in recipe.ratio_columns for c in pair)}
        unknown = sorted(named - set(columns))
        if unknown:
            raise InvalidRecipe(f"no column {shown(unknown[0])} in this competition's data")
    return recipe
