"""The final step of Evolution: the blend made from its members' predictions (never skipped for time), and the
final pick over a second, differently seeded split, in a real mission and in its rules."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from agent_k.competition import Competition, TaskType
from agent_k.competition.research import CVScheme, ResearchFindings, TimeStructure
from agent_k.config import Settings
from agent_k.mission.candidates import ArchivedCandidate
from agent_k.mission.final_pick import (
    END_MARGIN_S,
    TIED_ROWS,
    choose,
    contenders,
    one_row,
    pick_reserve_s,
    plan,
    rescoring_groups,
    second_split,
    without_second_split,
)
from agent_k.mission.state import BudgetLedger, MissionState
from agent_k.ml.portfolio import load_portfolio
from agent_k.ml.recipes import ModelFamily, Prior
from agent_k.ml.search import default_recipe
from agent_k.store.repository import Store
from agent_k.store.status import CandidateStatus
from tests.support.finished import FinishedMission

ACCURACY = Competition(id="c", title="c", task=TaskType.binary, metric="accuracy", target="y", classes=["a", "b"])


def _candidate(key: str, cv: float, runtime_s: float = 1.0, log_loss: float | None = None) -> ArchivedCandidate:
    recipe = default_recipe(ModelFamily.linear).model_copy(update={"params": {"C": 1.0 + len(key) / 100}})
    return ArchivedCandidate(
        key, recipe, 1, CandidateStatus.succeeded, cv, [cv], runtime_s, None, Path(key), log_loss=log_loss
    )


def test_the_second_split_reseeds_the_folds_and_a_forecast_has_none() -> None:
    cv = CVScheme(kind="stratified_kfold", n_folds=5, seed=42)
    second = second_split(cv)
    assert second is not None and second.seed != cv.seed and second.kind == cv.kind and second.n_folds == 5
    time = TimeStructure(columns=["t"], format="number", forecast=True, horizon=3)
    assert second_split(CVScheme(kind="forward", n_folds=3, time=time)) is None


def test_a_candidate_lucky_on_one_split_loses_to_a_steadier_one() -> None:
    lucky, steady, third = _candidate("lucky", 0.90), _candidate("steady", 0.89), _candidate("third", 0.80)
    scores = {"lucky": 0.84, "steady": 0.885, "third": 0.90}
    chosen, why = choose(lucky, [lucky, steady, third], [], scores, ACCURACY)
    assert chosen is steady and "better mean" in why  # (0.89 + 0.885) / 2 > (0.90 + 0.84) / 2 > (0.80 + 0.90) / 2
    chosen, _ = choose(lucky, [lucky, steady], [], {"lucky": 0.89, "steady": 0.885}, ACCURACY)
    assert chosen is lucky


def test_the_blends_meet_the_best_single_on_the_second_split_alone() -> None:
    """Their members and weights were chosen on the first split, as the singles were: the second is where none was
    chosen. A stack's first score is nested (honest) and lower than a lucky single's: that must not count."""
    single, other = _candidate("single", 0.99), _candidate("other", 0.97)
    stack, weighted = _candidate("stack", 0.975), _candidate("weighted", 0.995)
    better = {"single": 0.970, "other": 0.960, "stack": 0.978, "weighted": 0.975}
    chosen, why = choose(stack, [single, other], [weighted, stack], better, ACCURACY)
    assert chosen is stack and "blend beats" in why, "the better blend on the second split"
    worse = {"single": 0.980, "other": 0.960, "stack": 0.975, "weighted": 0.972}
    chosen, why = choose(stack, [single, other], [weighted, stack], worse, ACCURACY)
    assert chosen is single and "single candidate beats the blends" in why
    chosen, _ = choose(single, [single, other], [stack], better, ACCURACY)
    assert chosen is stack, "a blend that was not the best still wins on the second split"
    assert choose(stack, [single, other], [stack], {"stack": 0.9}, ACCURACY)[0] is stack, "no single to meet"


def test_a_few_rows_apart_on_accuracy_are_no_evidence() -> None:
    """Wine's 133 rows in five folds of 26-27: one row moves a CV accuracy by at most 1/130, and four rows apart
    are a gap no paired test can call. A mission's best extra trees (134/135 on both splits, log loss 0.104) met its
    stack two rows behind on the second split: the stack, right on every private row where the extra trees missed
    one, is the pick, whatever its log loss. Five rows behind it is not, and neither a metric that is not a share of
    rows nor folds of unknown sizes get the allowance. Among singles level over both splits, the lower log loss
    decides."""
    wine = Competition(id="w", title="w", task=TaskType.multiclass, metric="accuracy", target="y", classes=list("abc"))
    folds = CVScheme(kind="stratified_kfold", n_folds=5)
    row = one_row(wine, folds, 133)
    assert row == pytest.approx(1 / 130)
    assert one_row(wine, CVScheme(kind="group_kfold", n_folds=5, group_column="g"), 133) == 0.0
    auc = Competition(id="b", title="b", task=TaskType.binary, metric="auc", target="y", classes=["a", "b"])
    assert one_row(auc, folds, 133) == 0.0
    tie = TIED_ROWS * row

    trees, linear = _candidate("trees", 0.9925926, log_loss=0.104), _candidate("linear", 0.9849, log_loss=0.22)
    stack = _candidate("stack", 0.9700854, log_loss=0.138)
    two_behind = {"trees": 0.9925926, "linear": 0.9849, "stack": 0.977493}
    chosen, why = choose(trees, [trees, linear], [stack], two_behind, wine, tie=tie)
    assert chosen is stack and "level with the best single" in why
    assert choose(trees, [trees, linear], [stack], two_behind, wine)[0] is trees, "without the allowance: the score"
    five_behind = {**two_behind, "stack": 0.9925926 - 5 / 130}
    assert choose(trees, [trees, linear], [stack], five_behind, wine, tie=tie)[0] is trees

    sure = _candidate("sure", 0.9849, log_loss=0.05)  # three rows behind over both splits' rows
    level = {"trees": 0.9925926, "sure": 0.9925926 + 0.9925926 - 0.9849 - 3 / 130}
    chosen, why = choose(trees, [trees, sure], [], level, wine, tie=tie)
    assert chosen is sure and "lower log loss" in why
    assert choose(trees, [trees, sure], [], {**level, "sure": level["sure"] - 2 / 130}, wine, tie=tie)[0] is trees


def _of(family: ModelFamily, key: str, cv: float, seed: int | None = None, **params: float) -> ArchivedCandidate:
    recipe = default_recipe(family).model_copy(update={"seed": seed, "params": params})
    return ArchivedCandidate(key, recipe, 1, CandidateStatus.succeeded, cv, [cv], 1.0, None, Path(key))


def test_the_second_look_goes_to_other_families_not_to_copies_of_the_best() -> None:
    """Titanic's search ended on seeds of one boosting recipe tied at the top (one model: they shared their split's
    luck), a random forest and LightGBM a hair behind: those are what a second split can tell apart."""
    boosting = ModelFamily.hist_gradient_boosting
    copies = [_of(boosting, f"hgb{seed}", 0.8389, seed, max_leaf_nodes=6) for seed in range(3)]
    nudged = _of(boosting, "nudged", 0.8388, max_leaf_nodes=7)
    forest = _of(ModelFamily.random_forest, "forest", 0.8386)
    boosted = _of(ModelFamily.lightgbm, "lightgbm", 0.8385)
    linear = _of(ModelFamily.linear, "linear", 0.82)
    prior = ArchivedCandidate("prior", Prior(), 0, CandidateStatus.succeeded, 0.5, [0.5], 0.2, None, Path("prior"))
    archive = [linear, boosted, *copies, nudged, forest, prior]
    assert [c.key for c in contenders(archive, ACCURACY)] == ["hgb0", "forest", "lightgbm"]
    one_family = [*copies, nudged, _of(boosting, "third", 0.83, max_leaf_nodes=9)]
    assert [c.key for c in contenders(one_family, ACCURACY)] == ["hgb0", "nudged", "third"], "seeds are one model"
    assert [c.key for c in contenders([*copies, prior], ACCURACY)] == ["hgb0"], "the prior fits no model"


def test_the_pick_keeps_the_best_when_it_cannot_be_compared() -> None:
    best, other = _candidate("best", 0.9), _candidate("other", 0.8)
    assert choose(best, [best, other], [], {"other": 0.95}, ACCURACY)[0] is best, "the best has no second score"
    assert choose(best, [best, other], [], {"best": 0.7}, ACCURACY)[0] is best, "nothing to compare it with"
    sure, unsure = _candidate("sure", 0.9, log_loss=0.1), _candidate("unsure", 0.9, log_loss=0.3)
    tied = {"sure": 0.9, "unsure": 0.9}
    assert choose(unsure, [unsure, sure], [], tied, ACCURACY)[0] is sure, "log loss breaks ties"
    lower = Competition(id="c", title="c", task=TaskType.regression, metric="rmse", target="y")
    small, large = _candidate("small", 10.0), _candidate("large", 9.0)
    assert choose(large, [large, small], [], {"small": 10.0, "large": 12.0}, lower)[0] is small, "lower is better"


def test_without_a_second_split_a_blend_that_improves_on_the_best_s_first_score_is_picked() -> None:
    """Where no second split fits (large data), the first split decides: a stack's nested, honest CV that beats
    the kept weighted blend's, chosen on the same rows, is the pick (a 300 s movielens mission: CV 0.87099 against
    0.87343, privately 0.86036 against 0.86427); a blend within the improvement margin, or worse, is not."""
    rmse = Competition(id="c", title="c", task=TaskType.regression, metric="rmse", target="y")
    weighted, stack = _candidate("weighted", 0.87343), _candidate("stack", 0.87099)
    chosen, why = without_second_split(weighted, [weighted, stack], rmse)
    assert chosen is stack and "blend's CV beats the best's" in why
    assert without_second_split(stack, [weighted, stack], rmse) == (stack, "")
    level = _candidate("level", 0.87099 * (1 + 5e-5))  # the stack improves on it by less than the margin
    assert without_second_split(level, [stack], rmse) == (level, "")
    assert without_second_split(weighted, [], rmse) == (weighted, "")
    higher = _candidate("higher", 0.99)
    assert without_second_split(_candidate("best", 0.98), [higher], ACCURACY)[0] is higher, "higher is better"


def test_the_best_s_runs_come_first_and_nothing_runs_when_they_do_not_fit() -> None:
    best, second, third = _candidate("best", 0.9, 4.0), _candidate("second", 0.8, 2.0), _candidate("third", 0.7, 9.0)
    members = [_candidate("m1", 0.85, 3.0), _candidate("m2", 0.84, 3.0)]
    blend = _candidate("blend", 0.95, 0.1)
    groups = rescoring_groups(blend, [best, second, third], {"blend": members})
    assert groups == [members, [best], [second], [third]], "a blend is re-scored through its members"
    assert rescoring_groups(best, [best, second], {}) == [[best], [second]]
    assert rescoring_groups(best, [best, second], {"blend": members}) == [[best], members, [second]]
    # slack 1.2, two in parallel: the members 3.6 s, best 2.4 s, second 1.2 s, third 5.4 s (over 8 s in all)
    assert plan(groups, 8.0, parallel=2) == [*members, best, second]
    assert plan(groups, 3.0, parallel=2) == [], "the best's own group does not fit: nothing is re-scored"


def test_a_mission_blends_from_predictions_and_picks_over_a_second_split(
    finished_mission: FinishedMission, settings: Settings, store: Store
) -> None:
    """The first generations draw from the learned portfolio; the blend is tried however short the time left (it
    fits no model), and the top candidates get a second score on other folds, archived beside the first; the pick
    is what the mission submits. Read from the run's shared mission, copied into each database."""
    finished_mission.copy_into(store, settings.missions_dir, "pick")

    portfolio = load_portfolio()
    assert portfolio is not None
    learned = [(family.value, params) for family, params in portfolio.configs]
    early = [json.loads(c.recipe) for c in store.candidates("pick") if c.generation <= 1]
    recipes = [r for r in early if "family" in r]
    assert len(recipes) >= 3 and all((r["family"], r["params"]) in learned for r in recipes)

    events = {e.type: json.loads(e.payload) for e in store.events_after("pick")}
    blends = [json.loads(e.payload) for e in store.events_after("pick") if e.type == "evolution.ensemble"]
    assert {b["method"] for b in blends} == {"weighted", "stacked"}, blends
    assert all(len(b["members"]) >= 2 or b["reason"] == "no blend beats its best member" for b in blends)
    assert not [b for b in blends if "time" in b["reason"]], "a blend fits no model: time never stops it"
    pick = events["evolution.pick"]
    rescored = [c for c in pick["candidates"] if c["resplit_score"] is not None]
    assert len(rescored) >= 2, pick
    archived = {c.key: c.resplit_cv for c in store.candidates("pick")}
    assert all(archived[c["candidate_key"]] == pytest.approx(c["resplit_score"]) for c in rescored)
    row = store.get_mission("pick")
    assert row is not None
    state = json.loads(row.result or "{}")["state"]
    assert state["evolution_state"]["best_candidate_key"] == pick["chosen"]
    submitted = Path(state["submission_path"]).read_bytes()
    chosen = settings.missions_dir / "pick" / "candidates" / pick["chosen"] / "submission.csv"
    assert submitted == chosen.read_bytes()


def test_the_pick_keeps_time_only_where_what_it_must_compare_fits_in_its_share() -> None:
    cv = CVScheme(kind="stratified_kfold", n_folds=5)
    state = MissionState(
        mission_id="m",
        selected_competition=ACCURACY,
        research_findings=ResearchFindings.model_construct(cv=cv),
        budget=BudgetLedger(total_s=120),
    )

    def ran(runtimes: list[float], families: list[ModelFamily] | None = None) -> list[ArchivedCandidate]:
        """Candidates keyed by their recipes, as archived: one niche (linear models), or one per family."""
        made = []
        for i, (runtime, family) in enumerate(zip(runtimes, families or [ModelFamily.linear] * 4, strict=True)):
            recipe = default_recipe(family)
            recipe = recipe.model_copy(update={"params": {"C": 1.0 + i}}) if family is ModelFamily.linear else recipe
            made.append(replace(_candidate("c", 0.9 - i / 100, runtime), key=recipe.key, recipe=recipe))
        return made

    quick = ran([1.0] * 4)
    assert pick_reserve_s(quick, state, parallel=2) == pytest.approx(1.2 * 3 / 2 + END_MARGIN_S), "the top three"
    families = [ModelFamily.linear, ModelFamily.lightgbm, ModelFamily.hist_gradient_boosting, ModelFamily.extra_trees]
    blend_of_four = pick_reserve_s(ran([1.0] * 4, families), state, parallel=2)
    assert blend_of_four == pytest.approx(1.2 * 4 / 2 + END_MARGIN_S), "the top three and a blend's fourth member"
    assert pick_reserve_s(ran([20.0] * 4), state, parallel=2) == 0.0, "the best two need 24 s of the 18 s share"
    one_quick = [1.0, 20.0, 20.0, 20.0]
    assert pick_reserve_s(ran(one_quick), state, parallel=2) > 0.0, "13 s for the best two; one niche: no blend"
    assert pick_reserve_s(ran([1.0, 1.0, 1.0, 40.0], families), state, parallel=2) == 0.0, "a blend of 4: 26 s"
    state.research_findings = ResearchFindings.model_construct(cv=cv.model_copy(update={"kind": "forward"}))
    assert pick_reserve_s(quick, state, parallel=2) == 0.0, "a forecast has no second split"
