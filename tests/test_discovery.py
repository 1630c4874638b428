"""Discovery's workflow path: which competitions fit the criteria, and in which order."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_k.competition import Criteria, TaskType
from agent_k.mission.nodes.discovery import rank_competitions
from agent_k.platforms.local import LocalPlatform


def test_discovery_ranks_the_catalogue_by_criteria(home: Path) -> None:
    platform = LocalPlatform(home / "competitions")
    catalogue = asyncio.run(platform.list_competitions())
    small_regression = rank_competitions(catalogue, Criteria(task=TaskType.regression, max_rows=1000))
    assert [c.id for c in small_regression] == ["diabetes"]
    by_keyword = rank_competitions(catalogue, Criteria(keywords=["digit"]))
    assert by_keyword[0].id == "digits"
    auc = rank_competitions(catalogue, Criteria(metric="auc"))
    assert {c.id for c in auc} == {"titanic", "breast-cancer", "mpls-stops", "tweets"} and auc[0].id == "breast-cancer"
