"""The evolutionary recipe search: its space, its variation operators, and selection across niches."""

from agent_k.ml.search.operators import FeatureOptions, crossover, mutate
from agent_k.ml.search.selection import (
    EXPLORE,
    WIDE_EXPLORE,
    Proposal,
    Scored,
    feature_options,
    first_recipes,
    improved,
    niche_elites,
    propose,
    ranked,
    starting_recipe,
)
from agent_k.ml.search.space import (
    DEFAULTS,
    SPACE,
    Choice,
    InvalidRecipe,
    Param,
    check_recipe,
    default_recipe,
    random_recipe,
)

__all__ = [
    "DEFAULTS",
    "EXPLORE",
    "SPACE",
    "WIDE_EXPLORE",
    "Choice",
    "FeatureOptions",
    "InvalidRecipe",
    "Param",
    "Proposal",
    "Scored",
    "check_recipe",
    "crossover",
    "default_recipe",
    "feature_options",
    "first_recipes",
    "improved",
    "mutate",
    "niche_elites",
    "propose",
    "random_recipe",
    "ranked",
    "starting_recipe",
]
