"""Fork, replay and versions (docs/architecture.md, "Fork and replay", "Versions"): real missions on real
SQLite and PostgreSQL, forked at Evolution, stepped through, and resumed under an upgraded graph."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlmodel import Session, col, select

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.control import MissionError
from agent_k.mission.fork import ForkChanges, fork_mission
from agent_k.mission.launch import MissionSpec
from agent_k.mission.nodes import PHASE_NODES, DiscoveryNode
from agent_k.mission.phases import Phase
from agent_k.mission.replay import replay_steps, state_at
from agent_k.mission.runner import MissionRunner
from agent_k.mission.versions import IncompatibleVersion
from agent_k.platforms.local import LocalPlatform
from agent_k.store.models import SnapshotRow, SubmissionRow
from agent_k.store.repository import Store
from tests.support.finished import FinishedMission


def _runner(settings: Settings, store: Store, phases: tuple[type, ...] = PHASE_NODES) -> MissionRunner:
    return MissionRunner(settings, store, LocalPlatform(settings.competitions_dir), phases=phases)


@pytest.fixture
def finished(finished_mission: FinishedMission, settings: Settings, store: Store) -> Callable[[str], None]:
    """Copy the run's shared finished mission (a real penguins one) into this test's store as the given id."""
    return lambda mission_id: finished_mission.copy_into(store, settings.missions_dir, mission_id)


def _submissions(store: Store, mission_id: str) -> list[SubmissionRow]:
    with Session(store.engine) as session:
        return list(session.exec(select(SubmissionRow).where(SubmissionRow.mission_id == mission_id)))


def test_a_fork_at_evolution_reuses_the_archive_and_submits_once(
    settings: Settings, store: Store, finished: Callable[[str], None]
) -> None:
    finished("parent")
    parent_events = [(e.seq, e.type) for e in store.events_after("parent")]
    parent_steps = [(s.seq, s.status) for s in store.snapshots("parent")]
    parent_keys = {c.key for c in store.candidates("parent")}

    spec = fork_mission(store, settings, "parent", Phase.evolution, time_budget=20, mission_id="child")
    assert spec.time_budget == 20 and spec.criteria.competition == "penguins"
    result = asyncio.run(_runner(settings, store).run("child"))

    assert result.success, result.detail
    events = store.events_after("child")
    types = [e.type for e in events]
    forked = json.loads(events[0].payload)
    assert types[0] == "mission.forked" and forked["parent_id"] == "parent" and forked["phase"] == "evolution"
    assert forked["candidates_reused"] == len(parent_keys), "the parent's whole archive carries over"
    first_phase = next(e for e in events if e.type.startswith("phase."))
    assert (first_phase.type, first_phase.phase) == ("phase.started", "evolution")
    assert json.loads(events[1].payload)["budget_s"] == 20
    evaluated = [json.loads(e.payload)["candidate_key"] for e in events if e.type == "candidate.evaluated"]
    assert not set(evaluated) & parent_keys, "no candidate the parent evaluated runs again"
    assert parent_keys <= {c.key for c in store.candidates("child")}

    submissions = _submissions(store, "child")
    assert len(submissions) == 1 and len(_submissions(store, "parent")) == 1
    child_dir = settings.missions_dir / "child"
    assert Path(result.submission_path or "").parent == child_dir and (child_dir / "solution.py").is_file()
    state = json.loads(store.get_mission("child").result or "{}")["state"]  # type: ignore[union-attr]
    assert state["data_dir"] == str(child_dir / "data"), "the fork reads its own copy of the data"
    assert [r["phase"] for r in state["phase_history"]] == [p.value for p in Phase]

    assert [(e.seq, e.type) for e in store.events_after("parent")] == parent_events, "the parent is untouched"
    assert [(s.seq, s.status) for s in store.snapshots("parent")] == parent_steps
    row = store.get_mission("child")
    assert row is not None and row.parent_id == "parent" and row.forked_from_seq is not None
    assert store.snapshots("child")[0].status == "forked"


def test_a_fork_refuses_what_it_cannot_start_from(
    settings: Settings, store: Store, finished: Callable[[str], None]
) -> None:
    finished("done")
    with pytest.raises(MissionError, match="no mission 'missing'"):
        fork_mission(store, settings, "missing", Phase.evolution)
    with pytest.raises(MissionError, match="cannot change budget"):
        ForkChanges.parse(["budget=3"])
    with pytest.raises(MissionError, match="KEY=VALUE"):
        ForkChanges.parse(["stop_early"])
    with pytest.raises(MissionError, match="needs a model"):
        fork_mission(store, settings, "done", Phase.evolution, changes=ForkChanges.parse(["mode=agent"]))
    with pytest.raises(MissionError, match="time_budget"):
        fork_mission(store, settings, "done", Phase.evolution, time_budget=0.1)
    fork_mission(store, settings, "done", Phase.research, mission_id="again")
    with pytest.raises(MissionError, match="already exists"):
        fork_mission(store, settings, "done", Phase.research, mission_id="again")
    with pytest.raises(MissionError, match="queued: fork it once it has stopped"):
        fork_mission(store, settings, "again", Phase.research)
    data = settings.missions_dir / "done" / "data"
    data.chmod(0o755)  # read-only, as Discovery leaves it
    planted = data / "plant\ned"  # what someone with write access to the folder could leave, named to break lines
    planted.symlink_to("/etc/passwd")
    with pytest.raises(MissionError, match=r"^cannot fork: 'data/plant\\ned' in the parent's folder is a link$"):
        fork_mission(store, settings, "done", Phase.evolution, mission_id="linked")
    planted.unlink()
    os.mkfifo(data / "pipe")  # copied, it would block the fork for ever
    with pytest.raises(MissionError, match="'data/pipe' in the parent's folder is not a regular file"):
        fork_mission(store, settings, "done", Phase.research, mission_id="piped")
    assert not any((settings.missions_dir / name).exists() for name in ("missing", "linked", "piped"))
    assert [m.id for m in store.list_missions()] == ["again", "done"], "a refused fork leaves nothing behind"
    (data / "pipe").unlink()
    if os.geteuid() == 0:  # a planted hard link to another user's file: copied, never shared
        outside = settings.home.parent / "outside.txt"
        outside.write_text("someone else's")
        os.chown(outside, 65534, 65534)
        os.link(outside, data / "hard")
        fork_mission(store, settings, "done", Phase.research, mission_id="hard-linked")
        forked = settings.missions_dir / "hard-linked" / "data" / "hard"
        assert forked.read_text() == "someone else's" and forked.stat().st_ino != outside.stat().st_ino
        assert (forked.stat().st_uid, outside.stat().st_nlink) == (0, 2), "a copy of ours; the original untouched"
        own = next(p for p in data.iterdir() if p.is_file() and p.name != "hard")
        assert (settings.missions_dir / "hard-linked" / "data" / own.name).stat().st_ino == own.stat().st_ino


def test_replay_steps_through_every_snapshot_with_its_events(
    settings: Settings, store: Store, finished: Callable[[str], None]
) -> None:
    finished("replayed")
    steps = replay_steps(store, "replayed")
    snapshots = store.snapshots("replayed")
    assert [s.seq for s in steps] == [s.seq for s in snapshots]
    assert [s.node for s in steps][:3] == ["DiscoveryNode", "ResearchNode", "PrototypeNode"]
    assert sum(sum(s.event_types.values()) for s in steps) == len(store.events_after("replayed"))
    assert steps[0].candidates == 0 and steps[-1].candidates == len(store.candidates("replayed"))
    evolution = [s for s in steps if s.node == "EvolutionNode"]
    assert evolution[0].best_score is not None, "Prototype's baseline is the best when Evolution begins"
    assert [s.elapsed_s for s in steps] == sorted(s.elapsed_s for s in steps)
    first = state_at(store, "replayed", evolution[0].seq)
    assert first["state"]["current_phase"] == "evolution" and first["state"]["evolution_state"]["generation"] == 0
    with pytest.raises(MissionError, match="has no step 999"):
        state_at(store, "replayed", 999)


@dataclass
class DiscoveryV2(DiscoveryNode):
    """An upgrade that changed a step the paused mission has passed: another graph, still compatible with it."""


def _edit_last_snapshot(store: Store, mission_id: str, **values: str) -> dict[str, str]:
    """Rewrite the last snapshot as another version of the code would have written it; the old values."""
    with Session(store.engine) as session:
        last = session.exec(
            select(SnapshotRow).where(SnapshotRow.mission_id == mission_id).order_by(col(SnapshotRow.seq).desc())
        ).first()
        assert last is not None
        old = {key: getattr(last, key) for key in values}
        session.execute(update(SnapshotRow).where(col(SnapshotRow.id) == last.id).values(**values))
        session.commit()
    return old


def test_an_upgraded_graph_continues_a_paused_mission_or_says_why_not(settings: Settings, store: Store) -> None:
    from agent_k.mission.control import approve, resume

    spec = MissionSpec(mission_id="paused", criteria=Criteria(competition="penguins"), time_budget=10, stop_early=True)
    runner = _runner(settings, store)
    runner.create(spec.model_copy(update={"require_approval": True}))
    assert asyncio.run(runner.run("paused")).status == "awaiting_approval"
    written = store.get_mission("paused")
    assert written is not None and written.code_version and written.graph_fingerprint == runner.fingerprint
    approve(store, "paused")
    store.update_mission("paused", graph_fingerprint="0123456789abcdef")  # as if an older graph had run it

    old = _edit_last_snapshot(store, "paused", node_kind="UploadNode")  # a step this code no longer has
    with pytest.raises(IncompatibleVersion) as refused:
        asyncio.run(_runner(settings, store).run("paused"))
    message = str(refused.value)
    assert "\n" not in message and "UploadNode" in message
    assert "0123456789abcdef" in message and runner.fingerprint in message, "it names both versions"
    row = store.get_mission("paused")
    assert row is not None and row.status == "failed" and row.lease_owner is None
    assert json.loads(row.result or "{}")["result"]["error"] == "incompatible_version"
    assert store.events_after("paused")[-1].type == "mission.failed"
    assert store.snapshots("paused")[-1].status == "waiting", "no step of it ran, none was opened"
    _edit_last_snapshot(store, "paused", **old)

    resume(store, "paused")
    old = _edit_last_snapshot(store, "paused", state_json='{"budget": "spent"}')
    with pytest.raises(IncompatibleVersion, match="does not validate"):
        asyncio.run(_runner(settings, store).run("paused"))
    _edit_last_snapshot(store, "paused", **old)

    resume(store, "paused")
    store.update_mission("paused", graph_fingerprint=runner.fingerprint)
    upgraded = _runner(settings, store, (DiscoveryV2, *PHASE_NODES[1:]))
    assert upgraded.fingerprint != runner.fingerprint
    result = asyncio.run(upgraded.run("paused"))
    assert result.success, result.detail
    logs = [json.loads(e.payload)["message"] for e in store.events_after("paused") if e.type == "log"]
    assert any(runner.fingerprint in line and upgraded.fingerprint in line for line in logs), logs
    assert store.get_mission("paused").graph_fingerprint == upgraded.fingerprint  # type: ignore[union-attr]
