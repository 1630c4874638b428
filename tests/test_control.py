"""Cancel, resume, approve and reject (agent_k.mission.control and the runner's side of them), on real SQLite
and PostgreSQL. Phases here are small stand-ins, so each test takes seconds; the API and worker tests drive
the same operations on real missions."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from dataclasses import dataclass

import pytest
from pydantic_graph import End

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission import control
from agent_k.mission.launch import MissionSpec
from agent_k.mission.nodes import PhaseNode
from agent_k.mission.nodes.base import PhaseContext
from agent_k.mission.phases import Phase
from agent_k.mission.runner import MissionRunner
from agent_k.mission.state import MissionResult
from agent_k.platforms.local import LocalPlatform
from agent_k.sandbox import Job, Limits, run_sandboxed
from agent_k.store.repository import Store
from tests.conftest import contract_for, processes_with, run_cli, wait_until_gone

SLEEPER_TOKEN = f"sleeper-{uuid.uuid4().hex}"


@dataclass
class SleepyEvolution(PhaseNode):
    """Runs a sandboxed child that sleeps for a minute, unless the `fast` marker file exists."""

    phase = Phase.evolution

    async def run(self, ctx: PhaseContext) -> StandInSubmission:
        if not (ctx.deps.settings.home / "fast").exists():
            sleeper = ctx.deps.mission_dir / "sleeper.py"
            sleeper.write_text("import time; time.sleep(60)\n")
            job = Job(script=sleeper, data=ctx.deps.mission_dir, args=(SLEEPER_TOKEN,))
            await run_sandboxed(job, workdir=ctx.deps.mission_dir / "sleeper", limits=Limits(timeout_s=90))
        ctx.state.evolution_state.best_score = 0.9
        return StandInSubmission()


@dataclass
class StandInSubmission(PhaseNode):
    """Leaves a file behind instead of submitting, so a test can tell whether Submission ran."""

    phase = Phase.submission

    async def run(self, ctx: PhaseContext) -> End[MissionResult]:
        (ctx.deps.mission_dir / "submitted").write_text("yes")
        return End(MissionResult.from_state(ctx.state))


PHASES = (SleepyEvolution, StandInSubmission)


def _runner(settings: Settings, store: Store) -> MissionRunner:
    return MissionRunner(
        settings, store, LocalPlatform(settings.competitions_dir), phases=PHASES, contract=contract_for(*PHASES)
    )


def _create(
    settings: Settings, store: Store, mission_id: str, *, approval: bool = False, queue: bool = False
) -> MissionRunner:
    """Record a mission; unless queued, the returned runner holds its lease, as `agent-k run` does."""
    runner = _runner(settings, store)
    runner.create(
        MissionSpec(mission_id=mission_id, criteria=Criteria(), time_budget=300, require_approval=approval), queue=queue
    )
    return runner


def _types(store: Store, mission_id: str) -> list[str]:
    return [e.type for e in store.events_after(mission_id)]


def test_cancel_stops_the_running_step_and_kills_its_sandboxed_children(settings: Settings, store: Store) -> None:
    runner = _create(settings, store, "busy")
    mission_dir = settings.missions_dir / "busy"
    outcome: list[MissionResult] = []
    thread = threading.Thread(target=lambda: outcome.append(asyncio.run(runner.run("busy"))))
    thread.start()
    deadline = time.monotonic() + 30
    while not processes_with(SLEEPER_TOKEN):
        assert time.monotonic() < deadline and thread.is_alive(), "the sandboxed child never started"
        time.sleep(0.05)

    assert control.cancel(store, "busy") == "cancelling"
    thread.join(timeout=15)
    assert not thread.is_alive(), "the runner did not stop"
    [result] = outcome
    assert result.status == "cancelled" and not result.success
    assert wait_until_gone(SLEEPER_TOKEN) == [], "sandboxed children outlived the cancel"

    row = store.get_mission("busy")
    assert row is not None and row.status == "cancelled" and row.lease_owner is None
    assert row.cancel_requested_at is None
    assert [(s.node_kind, s.status) for s in store.snapshots("busy")] == [("SleepyEvolution", "cancelled")]
    types = _types(store, "busy")
    assert types[-2:] == ["phase.failed", "mission.cancelled"]
    assert json.loads(row.result or "{}")["result"]["error"] == "cancelled"
    with pytest.raises(control.MissionError, match="already cancelled"):
        control.cancel(store, "busy")

    (settings.home / "fast").touch()  # resume continues from the cancelled step, now quick
    assert control.resume(store, "busy") == "queued"
    resumed = asyncio.run(_runner(settings, store).run("busy"))
    assert resumed.success and (mission_dir / "submitted").exists()
    assert _types(store, "busy")[-1] == "mission.completed"


def test_cancel_of_a_queued_mission_is_immediate(settings: Settings, store: Store) -> None:
    _create(settings, store, "waiting", queue=True)
    assert control.cancel(store, "waiting") == "cancelled"
    row = store.get_mission("waiting")
    assert row is not None and row.status == "cancelled"
    assert [(e.seq, e.type) for e in store.events_after("waiting")] == [(1, "mission.cancelled")]
    assert store.claim_next("a-worker", 30) is None, "a cancelled mission is never claimed"
    with pytest.raises(control.MissionNotFound):
        control.cancel(store, "nope")


def test_the_gate_holds_submission_until_approved_across_a_restart(settings: Settings, store: Store) -> None:
    runner = _create(settings, store, "gated", approval=True)
    (settings.home / "fast").touch()
    waiting = asyncio.run(runner.run("gated"))
    mission_dir = settings.missions_dir / "gated"
    assert waiting.status == "awaiting_approval" and not (mission_dir / "submitted").exists()
    row = store.get_mission("gated")
    assert row is not None and (row.status, row.approval, row.lease_owner) == ("awaiting_approval", "pending", None)
    assert _types(store, "gated")[-2:] == ["phase.completed", "approval.requested"]
    assert store.claim_next("a-worker", 30) is None, "a worker never takes a mission waiting for approval"
    with pytest.raises(control.MissionError, match="awaiting approval"):
        asyncio.run(_runner(settings, store).run("gated"))

    restarted = Store.open(settings.resolved_database_url)  # a new process: only the database remembers
    assert control.approve(restarted, "gated") == "queued"
    with pytest.raises(control.MissionError, match="queued, not awaiting approval"):
        control.approve(restarted, "gated")
    assert restarted.claim_next("a-worker", 30) == "gated"
    restarted.release_lease("gated", "a-worker")
    result = asyncio.run(_runner(settings, restarted).run("gated"))
    assert result.success and (mission_dir / "submitted").read_text() == "yes"
    assert [(s.node_kind, s.status) for s in restarted.snapshots("gated")] == [
        ("SleepyEvolution", "succeeded"),
        ("StandInSubmission", "waiting"),
        ("StandInSubmission", "succeeded"),
    ]
    types = _types(restarted, "gated")
    assert types[types.index("approval.requested") + 1 :][:2] == ["approval.granted", "mission.started"]
    assert [e.seq for e in restarted.events_after("gated")] == list(range(1, len(types) + 1))
    restarted.close()


def test_reject_ends_the_mission_without_submitting(settings: Settings, store: Store) -> None:
    runner = _create(settings, store, "unwanted", approval=True)
    (settings.home / "fast").touch()
    asyncio.run(runner.run("unwanted"))

    result = run_cli("reject", "unwanted")  # the CLI, on the same database
    assert result.returncode == 0 and "nothing was submitted" in result.stdout
    row = store.get_mission("unwanted")
    assert row is not None and (row.status, row.approval) == ("cancelled", "rejected")
    assert _types(store, "unwanted")[-3:] == ["approval.requested", "approval.rejected", "mission.cancelled"]
    assert json.loads(row.result or "{}")["result"]["error"] == "rejected"
    assert not (settings.missions_dir / "unwanted" / "submitted").exists()

    again = run_cli("approve", "unwanted")
    assert again.returncode == 2 and "cancelled, not awaiting approval" in again.stderr
    with pytest.raises(control.MissionError, match="rejected at the approval gate"):
        control.resume(store, "unwanted")
    assert run_cli("approve", "ghost").returncode == 2
