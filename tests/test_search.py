"""Recipes, the search and the budget clock: pure logic, tested directly."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_k.competition import Competition, TaskType
from agent_k.competition.research import ColumnProfile, CVScheme, ResearchFindings, TargetProfile
from agent_k.ml.portfolio import load_portfolio
from agent_k.ml.recipes import ModelFamily, Recipe
from agent_k.ml.render import render_solution
from agent_k.ml.search import (
    SPACE,
    Choice,
    FeatureOptions,
    Scored,
    default_recipe,
    feature_options,
    improved,
    mutate,
    niche_elites,
    propose,
)

COMPETITION = Competition(id="c", title="c", task=TaskType.binary, metric="auc", target="y", classes=["0", "1"])
FINDINGS = ResearchFindings(
    n_train=100,
    n_test=50,
    columns=[],
    target=TargetProfile(task=TaskType.binary),
    id_like=["id"],
    leakage_suspects=[],
    leakage_details=[],
    drift=[],
    cv=CVScheme(kind="stratified_kfold", n_folds=5),
    model_families=["lightgbm", "linear"],
)

OPTIONS = FeatureOptions(skewed=("a",), high_cardinality=("b",), log_target=True)


def test_recipe_keys_are_stable_and_distinct() -> None:
    a, b = default_recipe(ModelFamily.lightgbm), default_recipe(ModelFamily.lightgbm)
    assert a.key == b.key
    assert a.key != default_recipe(ModelFamily.lightgbm, drop_columns=("x",)).key


def test_untried_families_come_first_then_the_learned_portfolio_then_new_mutations() -> None:
    first = propose([], FINDINGS, COMPETITION, drop_columns=(), batch=4, rng=random.Random(1))
    assert [p.recipe.family for p in first[:2]] == [ModelFamily.lightgbm, ModelFamily.linear]
    portfolio = load_portfolio()
    assert portfolio is not None
    learned = [(family, params) for family, params in portfolio.configs]
    archive = [Scored(p.recipe, 0.8 + i / 100) for i, p in enumerate(first)]
    bred = []
    for generation in range(2, 8):
        proposals = propose(archive, FINDINGS, COMPETITION, drop_columns=(), batch=4, rng=random.Random(generation))
        assert len(proposals) == 4 and not {p.recipe.key for p in proposals} & {s.recipe.key for s in archive}
        drawn = [p for p in proposals if not p.parents]
        assert all((p.recipe.family, p.recipe.params) in learned for p in drawn), "unbred: from the portfolio"
        assert not bred or not drawn, "once breeding begins the portfolio is spent"
        bred += [p for p in proposals if p.parents]
        archive += [Scored(p.recipe, 0.7) for p in proposals]
    assert bred, "then children of the elites"


def test_proposals_are_deterministic_for_a_seed() -> None:
    archive = [Scored(default_recipe(ModelFamily.lightgbm), 0.9), Scored(default_recipe(ModelFamily.linear), 0.8)]
    keys = [
        [p.recipe.key for p in propose(archive, FINDINGS, COMPETITION, drop_columns=(), batch=4, rng=random.Random(7))]
        for _ in range(2)
    ]
    assert keys[0] == keys[1]


def test_improvement_respects_the_metric_direction() -> None:
    rmse = COMPETITION.model_copy(update={"metric": "rmse", "task": TaskType.regression})
    assert improved(0.91, 0.90, COMPETITION) and not improved(0.90, 0.90, COMPETITION)
    assert improved(9.0, 10.0, rmse) and not improved(11.0, 10.0, rmse)


@settings(max_examples=200, deadline=None)
@given(family=st.sampled_from(list(ModelFamily)), seed=st.integers(0, 10_000), steps=st.integers(0, 6))
def test_any_mutated_recipe_stays_in_its_space_and_renders(family: ModelFamily, seed: int, steps: int) -> None:
    rng = random.Random(seed)
    recipe: Recipe = default_recipe(family)
    for _ in range(steps):
        recipe = mutate(recipe, rng, OPTIONS)
    assert set(recipe.params) == set(SPACE[family])
    for name, value in recipe.params.items():
        spec = SPACE[family][name]
        if isinstance(spec, Choice):
            assert value in spec.options, (name, value)
        else:
            assert spec.low <= float(value) <= spec.high, (name, value)
    source = render_solution(recipe, COMPETITION, FINDINGS.cv)
    compile(source, "solution.py", "exec")


def test_keys_ignore_default_fields_so_new_options_keep_old_identities() -> None:
    recipe = default_recipe(ModelFamily.linear)
    assert recipe.key == Recipe(family=ModelFamily.linear, params={"C": 1.0}).key
    assert recipe.key != recipe.model_copy(update={"log_columns": ("a",)}).key


def test_each_niche_keeps_its_best_and_better_niches_come_first() -> None:
    base = default_recipe(ModelFamily.lightgbm)
    logged = base.model_copy(update={"log_columns": ("a",)})
    worse = base.model_copy(update={"params": {**base.params, "num_leaves": 8}})
    linear = default_recipe(ModelFamily.linear)
    archive = [
        Scored(base, 0.80),
        Scored(worse, 0.70),
        Scored(logged, 0.85),
        Scored(linear, 0.75),
        Scored(linear, None),
    ]
    elites = niche_elites(archive, COMPETITION)
    assert [(e.recipe.niche, e.cv) for e in elites] == [
        ((ModelFamily.lightgbm, "log"), 0.85),
        ((ModelFamily.lightgbm, "base"), 0.80),
        ((ModelFamily.linear, "base"), 0.75),
    ]


def test_feature_options_come_from_the_profile() -> None:
    findings = FINDINGS.model_copy(
        update={
            "columns": [
                ColumnProfile(name="income", kind="numeric", missing_fraction=0, n_unique=90, skew=3.2),
                ColumnProfile(name="age", kind="numeric", missing_fraction=0, n_unique=60, skew=0.1),
                ColumnProfile(name="city", kind="categorical", missing_fraction=0, n_unique=40),
                ColumnProfile(name="leaky", kind="numeric", missing_fraction=0, n_unique=90, skew=5.0),
            ]
        }
    )
    options = feature_options(findings, COMPETITION, drop=("leaky",))
    assert options == FeatureOptions(
        skewed=("income",), high_cardinality=("city",), categorical=("city",), log_target=False
    )
