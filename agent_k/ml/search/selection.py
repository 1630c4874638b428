"""Selection: untried families first, then MAP-Elites over model family by feature set.

Each niche keeps its best recipe. Parents are drawn across niches (the better niches more often), so one
strong family cannot crowd out the others; children come from mutation, or crossover within a family.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from agent_k.competition import Competition, TaskType
from agent_k.competition.research import ResearchFindings
from agent_k.ml.families import RETRIEVAL_CLASSES, early_stopping_rows
from agent_k.ml.params import ParamValue
from agent_k.ml.portfolio import family_starts, start_portfolio, table_shape
from agent_k.ml.recipes import ModelFamily, Recipe, Solution
from agent_k.ml.search.operators import FeatureOptions, crossover, mutate
from agent_k.ml.search.space import default_recipe, random_recipe

PORTFOLIO_SIZE = 8
"""Configurations of the learned start portfolio a search tries before breeding from its elites."""
CROSSOVER_RATE = 0.3
MIN_IMPROVEMENT = 1e-4
EXPLORE = 0.25
"""Share of a stagnating generation given to fresh random points of an elite's family."""
WIDE_EXPLORE = 0.5
"""The same share once a converged search is widened to spend the rest of the budget."""
MAX_SEEDS = 4
"""Seeds of the best recipe tried once the search is widened (they blend well)."""
HIGH_CARDINALITY = 10
RATIO_COLUMNS = 4
"""Ratios are formed between pairs of the most informative positive numeric columns (at most 6 pairs)."""
SKEWED = 1.0


@dataclass(frozen=True)
class Scored:
    recipe: Recipe
    cv: float | None


@dataclass(frozen=True)
class Proposal:
    recipe: Solution
    """A recipe from the search; in agent mode also the Evolver's recipes and scripts."""
    parents: tuple[str, ...]


def ranked(archive: list[Scored], competition: Competition) -> list[Scored]:
    """Scored candidates, best first."""
    scored = [s for s in archive if s.cv is not None]
    return competition.scored_by.ranked(scored, lambda s: s.cv)


def niche_elites(archive: list[Scored], competition: Competition) -> list[Scored]:
    """The best candidate of each niche (model family by feature set), best niche first."""
    best: dict[tuple[ModelFamily, str], Scored] = {}
    for candidate in ranked(archive, competition):
        best.setdefault(candidate.recipe.niche, candidate)
    return list(best.values())


def improved(new: float, old: float | None, competition: Competition) -> bool:
    if old is None:
        return True
    margin = MIN_IMPROVEMENT * max(abs(old), 1e-9)
    return competition.better(new, old + (margin if competition.maximize else -margin))


def feature_options(findings: ResearchFindings, competition: Competition, drop: tuple[str, ...]) -> FeatureOptions:
    forecast = findings.cv.kind == "forward" and competition.task is TaskType.regression
    log_scale = competition.scored_by.log_scale
    # A forecast's time columns become calendar features and leave the table: no operation may name them.
    timed = set(findings.cv.time.columns) if findings.cv.kind == "forward" and findings.cv.time else set()
    gone = {*drop, *findings.id_like, *timed}
    usable = [c for c in findings.columns if c.name not in gone]
    informative = sorted(
        (c for c in usable if c.positive and c.single_column_score is not None),
        key=lambda c: c.single_column_score or 0.0,
        reverse=True,
    )[:RATIO_COLUMNS]
    return FeatureOptions(
        skewed=tuple(c.name for c in usable if c.kind == "numeric" and abs(c.skew or 0.0) > SKEWED),
        high_cardinality=tuple(
            c.name for c in usable if (c.kind == "categorical" and c.n_unique > HIGH_CARDINALITY) or c.code
        ),
        ratios=tuple(combinations([c.name for c in informative], 2)),
        dates=tuple(c.name for c in usable if c.kind == "datetime"),
        categorical=tuple(c.name for c in usable if c.kind == "categorical"),
        log_target=competition.task is TaskType.regression and ((findings.target.skew or 0.0) > 0.5 or log_scale),
        text=tuple(c for c in findings.text_columns if c not in drop),
        forecast=forecast,
        learn_logs=log_scale,
        positive_target=findings.target.positive,
    )


def starting_recipe(
    family: ModelFamily,
    options: FeatureOptions,
    drop_columns: tuple[str, ...],
    params: dict[str, ParamValue] | None = None,
) -> Recipe:
    """A family's first recipe for this data: its defaults (or `params`, learned ones), the text columns, a forecast
    relative to its level (a ratio for a positive target) so that trees can follow a trend past the last training
    date, and splits on categories themselves where the family can (LightGBM's and AutoGluon's default: on the
    built-ins it was never behind ordinal codes and often ahead, and a large table has time for few candidates)."""
    relative = "none"
    if options.forecast and not family.spec.model_free:
        relative = family.spec.forecast_form if options.positive_target else "difference"
    recipe = default_recipe(family, drop_columns, options.dates, text_columns=options.text, relative=relative)
    if params is not None:
        recipe = recipe.model_copy(update={"params": dict(params)})
    if options.learn_logs and not family.spec.model_free:
        recipe = recipe.model_copy(update={"log_target": True})
    if options.categorical and family.spec.native_categorical:
        recipe = recipe.model_copy(update={"native_categorical": True})
    return recipe


def first_recipes(
    families: Sequence[ModelFamily], findings: ResearchFindings, competition: Competition, drop: tuple[str, ...]
) -> list[Recipe]:
    """Each family's starting recipe, from its start learned on tables of this shape where the portfolio has one
    (`agent_k.ml.portfolio`), else from its defaults."""
    options = feature_options(findings, competition, drop)
    shape = table_shape(findings, competition, drop)
    learned = family_starts(shape, families) if shape else {}
    if _fits_stop_early(findings, competition):
        for family in families:
            if family not in learned and family.spec.stopping_defaults:
                learned[family] = {**family.spec.defaults, **family.spec.stopping_defaults}
    if ModelFamily.knn in families and (few := _rows_a_class(findings, competition)):  # over a learned start too
        learned[ModelFamily.knn] = {**learned.get(ModelFamily.knn, ModelFamily.knn.spec.defaults), "n_neighbors": few}
    return [starting_recipe(family, options, drop, learned.get(family)) for family in families]


def _rows_a_class(findings: ResearchFindings, competition: Competition) -> int | None:
    """Past RETRIEVAL_CLASSES, where classes have fewer fit rows each than k-NN's default neighbours, as many
    neighbours as a class has fit rows: more would outvote a row's own class with others'."""
    classes = len(competition.classes or [])
    if classes <= RETRIEVAL_CLASSES:
        return None
    folds = findings.cv.n_folds
    each = int(findings.n_train * (folds - 1) / folds / classes)
    default = int(ModelFamily.knn.spec.defaults["n_neighbors"])
    return max(1, each) if each < default else None


def _fits_stop_early(findings: ResearchFindings, competition: Competition) -> bool:
    """Whether a fold's fit rows are past `early_stopping_rows`, where boosting's held-out rows find its rounds."""
    folds = findings.cv.n_folds
    regression = competition.task.is_regression
    return findings.n_train * (folds - 1) / folds > early_stopping_rows(regression)


def portfolio_recipes(
    families: Sequence[ModelFamily], findings: ResearchFindings, competition: Competition, drop: tuple[str, ...]
) -> list[Recipe]:
    """The learned start portfolio for this table, as starting recipes (none where the table is not plain)."""
    options = feature_options(findings, competition, drop)
    shape = table_shape(findings, competition, drop)
    configs = start_portfolio(shape, families, PORTFOLIO_SIZE) if shape else []
    return [starting_recipe(family, options, drop, params) for family, params in configs]


def propose(
    archive: list[Scored],
    findings: ResearchFindings,
    competition: Competition,
    *,
    drop_columns: tuple[str, ...],
    batch: int,
    rng: random.Random,
    explore: float = 0.0,
    seeds: int = 0,
    avoid: frozenset[ModelFamily] = frozenset(),
) -> list[Proposal]:
    """New recipes for one generation, none already in `archive`. Deterministic for a given rng seed.

    Untried families come first, then feature operations the data calls for that no recipe has tried yet;
    `seeds` new seeds of the best recipe (while it has fewer than MAX_SEEDS); then children of the elites.
    `explore` is the share of the batch drawn at random from an elite's family rather than bred from elites.
    Families in `avoid` (they ran out of memory on this data) are not proposed.
    """
    seen = {s.recipe.key for s in archive}
    proposals: list[Proposal] = []

    def add(recipe: Recipe, parents: tuple[str, ...]) -> None:
        if recipe.key not in seen and recipe.family not in avoid:
            seen.add(recipe.key)
            proposals.append(Proposal(recipe, parents))

    options = feature_options(findings, competition, drop_columns)
    tried = {s.recipe.family for s in archive}
    families = [ModelFamily(f) for f in findings.model_families]
    for recipe in first_recipes([f for f in families if f not in tried], findings, competition, drop_columns):
        if len(proposals) < batch:
            add(recipe, ())
    if options.text and ModelFamily.linear in families and ModelFamily.linear not in avoid:
        (linear,) = first_recipes([ModelFamily.linear], findings, competition, drop_columns)
        for recipe in text_starters(linear):
            if len(proposals) < batch:
                add(recipe, (linear.key,))

    elites = niche_elites(archive, competition)
    if elites:
        best = elites[0].recipe
        taken = {s.recipe.seed for s in archive if s.recipe.without_seed() == best.without_seed()}
        fresh = [n for n in range(1, MAX_SEEDS + 1) if n not in taken][:seeds] if best.family.spec.seeded else []
        seeded = [best.without_seed().model_copy(update={"seed": n}) for n in fresh]
        starters = feature_starters(best, archive, options)
        learned = portfolio_recipes([f for f in families if f not in avoid], findings, competition, drop_columns)
        for recipe, parents in [*((r, (best.key,)) for r in starters), *((r, ()) for r in learned)]:
            if len(proposals) < batch:
                add(recipe, parents)
        for recipe in seeded:
            if len(proposals) < batch:
                add(recipe, (best.key,))
    weights = [1.0 / (rank + 1) for rank in range(len(elites))]
    immigrants = round(batch * explore)
    attempts = 0
    while elites and len(proposals) < batch and attempts < 50 * batch:
        attempts += 1
        if immigrants > 0:  # from any niche alike: exploring is what they are for
            immigrants -= 1
            parent = rng.choice(elites)
            add(random_recipe(parent.recipe.family, rng, base=parent.recipe), (parent.recipe.key,))
            continue
        parent = rng.choices(elites, weights=weights)[0]
        mates = [e for e in elites if e.recipe.family is parent.recipe.family and e is not parent]
        if mates and rng.random() < CROSSOVER_RATE:
            mate = rng.choice(mates)
            add(mutate(crossover(parent.recipe, mate.recipe, rng), rng, options), (parent.recipe.key, mate.recipe.key))
        else:
            add(mutate(parent.recipe, rng, options), (parent.recipe.key,))
    return proposals


def text_starters(linear: Recipe) -> list[Recipe]:
    """The TF-IDF linear model tuned first, as a practitioner tunes it: its regularisation a few times weaker and
    stronger, word trigrams, rare words kept. Cheap, and where text carries the signal the strongest single model."""
    c = float(linear.params.get("C", 1.0))
    settings: list[tuple[dict[str, ParamValue], dict[str, ParamValue]]] = [
        ({"C": min(c * 4, 100.0)}, {}),
        ({"C": max(c / 4, 1e-3)}, {}),
        ({}, {"word": 3}),
        ({}, {"min_df": 1}),
    ]
    return [
        linear.model_copy(update={"params": {**linear.params, **params}, "text": {**linear.text, **text}})
        for params, text in settings
    ]


def feature_starters(best: Recipe, archive: list[Scored], options: FeatureOptions) -> list[Recipe]:
    """The best recipe with each feature operation the data calls for and no candidate has tried yet, so that a
    grandmaster's usual first features (target and count encoding of high-cardinality columns, a skewed target's
    logarithm, LightGBM's categorical splits against ordinal codes, whichever it has not tried) are tried early
    rather than left to a 15% mutation."""
    tried = {name for s in archive for name in ("target", "frequency") if name in s.recipe.feature_set}
    splits = {s.recipe.native_categorical for s in archive if s.recipe.family.spec.native_categorical}
    starters = []
    if options.log_target and not any(s.recipe.log_target for s in archive):
        starters.append(best.model_copy(update={"log_target": True}))
    if options.categorical and best.family.spec.native_categorical and len(splits) < 2:
        starters.append(best.model_copy(update={"native_categorical": not best.native_categorical}))
    if options.high_cardinality and "target" not in tried:
        starters.append(best.model_copy(update={"target_columns": options.high_cardinality}))
    if options.high_cardinality and "frequency" not in tried:
        starters.append(best.model_copy(update={"frequency_columns": options.high_cardinality}))
    return starters
