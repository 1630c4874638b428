"""Progressive disclosure (docs/architecture.md, "Modes and phase contracts"): what agents read first is a summary,
bounded however long the search runs; details come one item at a time. (The prompt tokens per Evolver call in a real
mission, generation 1 against 30, are `benchmarks/agent_prompts.py`'s, in docs/benchmarks.md.)"""

from __future__ import annotations

import json
from pathlib import Path

from agent_k.competition import Competition, TaskType
from agent_k.competition.research import ColumnProfile
from agent_k.mission.agents.disclosure import MAX_ROWS, candidate_table, column_line
from agent_k.mission.candidates import ArchivedCandidate
from agent_k.ml.recipes import ModelFamily, Recipe
from agent_k.store.status import CandidateStatus

COMPETITION = Competition(
    id="c", title="c", task=TaskType.binary, metric="auc", target="y", id_column="id", n_train=1, n_test=1
)
FAMILIES = [ModelFamily.linear, ModelFamily.lightgbm, ModelFamily.random_forest, ModelFamily.extra_trees]


def _archive(generations: int) -> list[ArchivedCandidate]:
    """Four candidates a generation, one of which fails, with scores that keep rising a little."""
    out = []
    for g in range(1, generations + 1):
        for i, family in enumerate(FAMILIES):
            failed = i == 3
            out.append(
                ArchivedCandidate(
                    key=f"g{g}c{i}",
                    recipe=Recipe(family=family, params={"C": g + i / 10}),
                    generation=g,
                    status=CandidateStatus.failed if failed else CandidateStatus.succeeded,
                    cv=None if failed else 0.8 + g / 1000 + i / 10_000,
                    fold_scores=[],
                    runtime_s=1.0,
                    error="exit code 1: MemoryError" if failed else None,
                    folder=Path("/nonexistent"),
                )
            )
    return out


def test_the_candidate_table_stays_bounded_as_generations_pile_up() -> None:
    first, thirtieth = candidate_table(_archive(1), COMPETITION, 10), candidate_table(_archive(30), COMPETITION, 10)
    assert first["older"] is None and len(first["candidates"]) == 4
    assert len(thirtieth["candidates"]) <= MAX_ROWS + 2
    assert thirtieth["candidates"][0]["key"] == "g30c2", "the best first"
    older = thirtieth["older"]
    assert older["generations"] == "1-28" and older["candidates"] + len(thirtieth["candidates"]) == 120
    assert older["per_family"]["extra_trees"]["best_cv"] is None, "a family that only failed has no best"
    # A full table plus a fixed-size summary: from the tenth generation on, the size no longer grows.
    sizes = [len(json.dumps(candidate_table(_archive(g), COMPETITION, 10))) for g in (10, 30, 300)]
    assert max(sizes) <= 1.1 * min(sizes), sizes  # what varies is the width of the numbers


def test_a_column_is_one_line_until_its_details_are_asked_for() -> None:
    column = ColumnProfile(name="fare", kind="numeric", missing_fraction=0.02, n_unique=248, single_column_score=0.61)
    assert column_line(column) == "fare: numeric, 2% missing, 248 distinct, alone 0.61"
