"""The time budget: warnings at 80% of a phase, phases that end with what they have, and ≤ +10% overall."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic_graph import End

from agent_k.config import Settings
from agent_k.events.emitter import EventEmitter
from agent_k.mission.budget import BudgetClock
from agent_k.mission.liveness import warn_budget
from agent_k.mission.nodes import PhaseNode
from agent_k.mission.nodes.base import PhaseContext
from agent_k.mission.nodes.discovery import rank_competitions
from agent_k.mission.runner import MissionRunner, MissionSpec
from agent_k.mission.state import BudgetLedger, MissionResult, MissionState, Phase
from agent_k.platforms.base import Criteria, TaskType
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store


def test_a_budget_warning_fires_once_at_80_percent_of_a_phase(store: Store) -> None:
    store.create_mission("warn", competition=None, platform="local", mode="workflow", budget_s=100, options={})
    state = MissionState(mission_id="warn", current_phase=Phase.research, budget=BudgetLedger(total_s=100))
    state.budget.phase_started_at_s[Phase.research] = 5.0  # research may run until 15 s: a 10 s allowance
    clock, emitter = BudgetClock(state.budget), EventEmitter(store, "warn")

    state.budget.spent_s[Phase.discovery], state.budget.spent_s[Phase.research] = 5.0, 7.9
    warn_budget(state, clock, emitter)
    assert store.events_after("warn") == []

    state.budget.spent_s[Phase.research] = 8.0
    warn_budget(state, clock, emitter)
    warn_budget(state, clock, emitter)
    [warning] = store.events_after("warn")
    assert warning.type == "budget.warning" and warning.phase == "research"
    assert json.loads(warning.payload) == {"type": "budget.warning", "used_s": 8.0, "allowed_s": 10.0}


@pytest.mark.slow
def test_a_tight_budget_still_submits_and_never_overruns(home: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tight.db'}"
    settings = Settings(home=home, database_url=url, workers=2)
    store = Store.open(url)
    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir))
    runner.create("tight", MissionSpec(criteria=Criteria(competition="digits"), time_budget=12))
    result = asyncio.run(runner.run("tight"))
    assert result.success, result.detail
    assert result.duration_s <= 12 * 1.1
    state = json.loads(store.get_mission("tight").result or "{}")["state"]  # type: ignore[union-attr]
    assert state["evolution_state"]["stop_reason"] == "budget"
    store.close()


@dataclass
class SlowEntry(PhaseNode):
    """Runs far past any budget; what follows the sleep must never happen."""

    phase = Phase.discovery

    async def run(self, ctx: PhaseContext) -> End[MissionResult]:
        await asyncio.sleep(60)
        (ctx.deps.settings.home / "ran-past-the-budget").touch()
        return End(MissionResult.from_state(ctx.state))


def test_a_step_that_overruns_the_budget_is_stopped(settings: Settings, store: Store) -> None:
    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir), phases=(SlowEntry,))
    runner.create("slow", MissionSpec(criteria=Criteria(), time_budget=2))
    started = time.monotonic()
    result = asyncio.run(runner.run("slow"))
    assert result.error == "budget_exceeded"
    assert time.monotonic() - started < 2 * 1.1 + 1
    time.sleep(0.2)
    assert not (settings.home / "ran-past-the-budget").exists()
    [step] = store.snapshots("slow")
    assert step.status == "failed"


def test_discovery_ranks_the_catalogue_by_criteria(home: Path) -> None:
    platform = LocalPlatform(home / "competitions")
    catalogue = asyncio.run(platform.list_competitions())
    small_regression = rank_competitions(catalogue, Criteria(task=TaskType.regression, max_rows=1000))
    assert [c.id for c in small_regression] == ["diabetes"]
    by_keyword = rank_competitions(catalogue, Criteria(keywords=["digit"]))
    assert by_keyword[0].id == "digits"
    auc = rank_competitions(catalogue, Criteria(metric="auc"))
    assert {c.id for c in auc} == {"titanic", "breast-cancer"} and auc[0].id == "breast-cancer"
