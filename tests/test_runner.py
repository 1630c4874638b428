"""The durable runner (docs/architecture.md, "Durable runner"): checkpoints, events, the illegal-transition guard,
failure and resume. Each test runs on real SQLite and on real PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic_graph import End

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.control import MissionError
from agent_k.mission.launch import MissionSpec
from agent_k.mission.nodes import EvolutionNode, PhaseNode, PrototypeNode, ResearchNode, SubmissionNode
from agent_k.mission.nodes.base import PhaseContext
from agent_k.mission.options import MissionOptions
from agent_k.mission.phases import Mode, Phase
from agent_k.mission.runner import MissionRunner
from agent_k.mission.state import MissionResult, MissionState
from agent_k.ml.evaluate import Evaluation, EvaluationRequest
from agent_k.ml.executors import LocalEvaluator
from agent_k.ml.recipes import ModelFamily, Recipe
from agent_k.platforms.local import LocalPlatform
from agent_k.platforms.local.user_files import from_files
from agent_k.sandbox import Limits
from agent_k.store.repository import Store
from tests.conftest import contract_for

FIXTURES = Path(__file__).parent / "fixtures"


def _runner(settings: Settings, store: Store, **kwargs: object) -> MissionRunner:
    return MissionRunner(settings, store, LocalPlatform(settings.competitions_dir), **kwargs)  # type: ignore[arg-type]


def test_a_full_mission_checkpoints_every_step(settings: Settings, store: Store) -> None:
    runner = _runner(settings, store)
    runner.create(
        MissionSpec(mission_id="wine-1", criteria=Criteria(competition="wine"), time_budget=20, stop_early=True)
    )
    result = asyncio.run(runner.run("wine-1"))

    assert result.success, result.detail
    assert result.cv_score is not None and result.cv_score > 0.85
    assert result.private_score is not None and result.public_score is not None
    assert result.rank is not None and result.teams == 15 and result.percentile is not None  # 14 references and us
    assert Path(result.submission_path or "").exists() and Path(result.solution_path or "").exists()
    assert result.duration_s <= 22

    steps = store.snapshots("wine-1")
    kinds = [s.node_kind for s in steps]
    assert kinds[:3] == ["DiscoveryNode", "ResearchNode", "PrototypeNode"]
    assert kinds[-1] == "SubmissionNode" and set(kinds[3:-1]) == {"EvolutionNode"}
    assert all(s.status == "succeeded" for s in steps)
    assert [s.seq for s in steps] == list(range(1, len(steps) + 1))
    assert all(len(s.state_json) < 64_000 for s in steps), "snapshots must stay small"

    events = store.events_after("wine-1")
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    types = [e.type for e in events]
    assert types[0] == "mission.started" and types[-1] == "mission.completed"
    assert types.count("phase.started") == 5 and types.count("phase.completed") == 5
    assert "candidate.evaluated" in types and "evolution.generation" in types and "submission.scored" in types

    row = store.get_mission("wine-1")
    assert row is not None and row.status == "succeeded" and row.lease_owner is None
    state = json.loads(row.result or "{}")["state"]
    assert [r["phase"] for r in state["phase_history"]] == [p.value for p in Phase]
    assert all(r["outcome"] == "completed" and r["mode"] == "workflow" for r in state["phase_history"])
    assert state["evolution_state"]["stop_reason"] in {"converged", "budget"}
    steps_of_evolution = len([k for k in kinds if k == "EvolutionNode"])
    assert state["evolution_state"]["generation"] == steps_of_evolution - 1, "one step per generation, one to blend"
    blends = [json.loads(e.payload) for e in events if e.type == "evolution.ensemble"]
    assert [b["method"] for b in blends] == ["weighted", "stacked"], "the final step's weighted blend, then its stack"
    stack = blends[1]
    # Busy cores can leave the 20 s mission too little for a stack: then it says so instead of overrunning.
    assert len(stack["members"]) >= 2 or stack["reason"].startswith("no time for a stack"), stack
    assert types.count("evolution.pick") == 1

    with pytest.raises(MissionError, match="already succeeded"):
        asyncio.run(runner.run("wine-1"))


def test_a_state_stored_before_the_options_moved_resumes_with_them(settings: Settings, store: Store) -> None:
    """A snapshot written before `MissionState.options` (its options flat beside the rest, as in the fixture, taken
    from a real mission at the start of Prototype) resumes: the options are folded in and the mission succeeds."""
    runner = _runner(settings, store)
    runner.create(
        MissionSpec(mission_id="old-1", criteria=Criteria(competition="wine"), time_budget=20, stop_early=True)
    )
    mission_dir = settings.missions_dir / "old-1"
    asyncio.run(LocalPlatform(settings.competitions_dir).download_data("wine", mission_dir / "data"))
    stored = (FIXTURES / "state_with_flat_options.json").read_text().replace("{MISSION_DIR}", str(mission_dir))
    assert json.loads(stored)["keep_columns"] == ["alcohol"] and "options" not in json.loads(stored)
    store.begin_step("old-1", previous_id=None, seq=1, node_kind="PrototypeNode", node_json="{}", state_json=stored)

    result = asyncio.run(runner.run("old-1"))

    assert result.success, result.detail
    last = store.snapshots("old-1")[-1].state_json
    assert not set(MissionOptions.model_fields) & json.loads(last).keys(), "stored once, in the options"
    state = MissionState.model_validate_json(last)
    assert state.options == MissionOptions(mode=Mode.auto, keep_columns=("alcohol",), stop_early=True)
    assert [r.phase for r in state.phase_history] == list(Phase)


@dataclass
class RogueDiscovery(PhaseNode):
    """Declares Research as its successor but jumps straight to Submission."""

    phase = Phase.discovery

    async def run(self, ctx: PhaseContext) -> ResearchNode | End[MissionResult]:
        return SubmissionNode()  # type: ignore[return-value]


def test_an_undeclared_successor_ends_the_mission_and_never_runs(settings: Settings, store: Store) -> None:
    phases = (RogueDiscovery, ResearchNode, PrototypeNode, EvolutionNode, SubmissionNode)
    runner = _runner(settings, store, phases=phases)
    runner.create(MissionSpec(mission_id="rogue", criteria=Criteria(competition="penguins"), time_budget=20))
    result = asyncio.run(runner.run("rogue"))

    assert not result.success and result.error == "illegal_phase_transition"
    assert "RogueDiscovery returned SubmissionNode" in (result.detail or "")
    assert [s.node_kind for s in store.snapshots("rogue")] == ["RogueDiscovery"]
    assert asyncio.run(LocalPlatform(settings.competitions_dir).list_submissions("penguins")) == []
    row = store.get_mission("rogue")
    assert row is not None and row.status == "failed"
    failed = [e for e in store.events_after("rogue") if e.type == "phase.failed"]
    assert json.loads(failed[0].payload)["reason"] == "illegal_phase_transition"
    with pytest.raises(MissionError, match=r"failed \(illegal_phase_transition\); nothing to resume"):
        asyncio.run(_runner(settings, store, phases=phases).run("rogue"))


@dataclass
class FlakyEntry(PhaseNode):
    """Raises until a marker file exists, as a node hitting a transient fault would."""

    phase = Phase.discovery
    marker: str = ""

    async def run(self, ctx: PhaseContext) -> End[MissionResult]:
        marker = ctx.deps.settings.home / "healthy"
        if not marker.exists():
            raise RuntimeError("disk hiccup")
        return End(MissionResult.from_state(ctx.state))


def test_a_node_that_raises_fails_the_step_and_resume_reruns_it(settings: Settings, store: Store) -> None:
    runner = _runner(settings, store, phases=(FlakyEntry,), contract=contract_for(FlakyEntry))
    runner.create(MissionSpec(mission_id="flaky", criteria=Criteria(), time_budget=10))
    first = asyncio.run(runner.run("flaky"))
    assert not first.success and first.error == "node_error" and "disk hiccup" in (first.detail or "")
    [step] = store.snapshots("flaky")
    assert step.status == "failed" and "disk hiccup" in (step.error or "")

    (settings.home / "healthy").touch()
    second = asyncio.run(_runner(settings, store, phases=(FlakyEntry,), contract=contract_for(FlakyEntry)).run("flaky"))
    assert second.success
    assert [(s.node_kind, s.status) for s in store.snapshots("flaky")] == [
        ("FlakyEntry", "failed"),
        ("FlakyEntry", "succeeded"),
    ]
    started = [json.loads(e.payload) for e in store.events_after("flaky") if e.type == "mission.started"]
    assert started[1]["resumed_from_seq"] == 1


def test_a_live_lease_blocks_a_second_runner(settings: Settings, store: Store) -> None:
    runner = _runner(settings, store, phases=(FlakyEntry,), contract=contract_for(FlakyEntry))
    runner.create(MissionSpec(mission_id="leased", criteria=Criteria(), time_budget=10), queue=True)
    assert store.acquire_lease("leased", "otherhost:1:abc", ttl=60)
    with pytest.raises(MissionError, match="is running under otherhost:1:abc"):
        asyncio.run(runner.run("leased"))
    assert store.snapshots("leased") == []


def test_an_unknown_competition_in_criteria_fails_discovery(settings: Settings, store: Store) -> None:
    runner = _runner(settings, store)
    runner.create(MissionSpec(mission_id="none", criteria=Criteria(task="regression", max_rows=10), time_budget=10))
    result = asyncio.run(runner.run("none"))
    assert result.error == "no_matching_competition"
    assert [s.node_kind for s in store.snapshots("none")] == ["DiscoveryNode"]


@dataclass
class HostileEvaluator(LocalEvaluator):
    """Real evaluation, except that two families are sabotaged so their candidates really fail: linear models get
    a parameter outside the search space (refused before rendering), extra-trees run past a 0.3-second limit in
    the sandbox."""

    async def evaluate(self, request: EvaluationRequest) -> Evaluation:
        solution = request.solution
        if isinstance(solution, Recipe) and solution.family is ModelFamily.linear:
            request = replace(request, solution=solution.model_copy(update={"params": {"C": -1.0}}))
        if isinstance(solution, Recipe) and solution.family is ModelFamily.extra_trees:
            sabotaged = solution.model_copy(update={"params": {**solution.params, "n_estimators": 500}})
            request = replace(request, solution=sabotaged, limits=Limits(timeout_s=0.3))
        return await super().evaluate(request)


def test_a_mission_succeeds_when_some_candidates_fail(home: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hostile.db'}"  # about candidates, not storage: one database is enough
    settings = Settings(home=home, database_url=url, workers=2)
    store = Store.open(url)
    runner = _runner(settings, store, evaluator=HostileEvaluator(parallelism=2))
    runner.create(
        MissionSpec(mission_id="hostile", criteria=Criteria(competition="wine"), time_budget=20, stop_early=True)
    )
    result = asyncio.run(runner.run("hostile"))
    assert result.success, result.detail

    candidates = {c.key: c for c in store.candidates("hostile")}
    failed = [c for c in candidates.values() if c.status == "failed"]
    reasons = " ".join(c.error_tail or "" for c in failed)
    assert "not rendered: C must be between 0.001 and 100, got -1.0" in reasons, reasons
    assert "timed out" in reasons, reasons
    row = store.get_mission("hostile")
    assert row is not None and row.result is not None
    state = json.loads(row.result)["state"]
    assert state["evolution_state"]["failed"] >= 2
    best = candidates[state["evolution_state"]["best_candidate_key"]]
    assert best.status == "succeeded" and "linear" not in best.recipe and "extra_trees" not in best.recipe
    store.close()


def test_a_perfect_cv_ends_a_search_that_stops_early(home: Path, tmp_path: Path) -> None:
    """A target a threshold on one column decides: the prototype's CV is already the best AUC there is, so no
    generation is bred after it."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.uniform(size=600), "noise": rng.normal(size=600)})
    frame["y"] = (frame["x"] > 0.5).astype(int)
    frame.to_csv(tmp_path / "threshold.csv", index=False)
    tables = from_files(tmp_path / "threshold.csv", ["y"], id_column=None, test=None, solution=None)
    LocalPlatform(home / "competitions").add("threshold", tables, metric="auc")
    url = f"sqlite:///{tmp_path / 'perfect.db'}"  # about the search, not storage: one database is enough
    store = Store.open(url)
    runner = _runner(Settings(home=home, database_url=url), store)
    spec = MissionSpec(
        mission_id="perfect", criteria=Criteria(competition="threshold"), time_budget=60, stop_early=True
    )
    runner.create(spec)
    result = asyncio.run(runner.run("perfect"))
    assert result.success, result.detail
    row = store.get_mission("perfect")
    assert row is not None and row.result is not None
    evolution = json.loads(row.result)["state"]["evolution_state"]
    assert evolution["best_score"] == 1.0 and evolution["stop_reason"] == "converged"
    assert evolution["generation"] == 0, "nothing was bred once the CV could not improve"
    logs = [e.payload for e in store.events_after("perfect") if e.type == "log"]
    assert any("is the best auc there is" in str(payload) for payload in logs), logs
    store.close()
