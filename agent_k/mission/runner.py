"""`MissionRunner`: drive the graph one node at a time, checkpointing before every node.

Per step: the previous snapshot is closed as succeeded and the next one opened as running, in one
transaction, before the node runs. A crash therefore always leaves the node to re-run as the last snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
from pydantic import TypeAdapter
from pydantic_graph import EndMarker

from agent_k.config import Settings
from agent_k.events.emitter import EventEmitter
from agent_k.events.models import (
    BudgetWarning,
    Event,
    MissionCompleted,
    MissionFailed,
    MissionStarted,
    PhaseCompleted,
    PhaseFailed,
    PhaseStarted,
)
from agent_k.mission.budget import WARNING_FRACTION, BudgetClock
from agent_k.mission.context import GraphContext
from agent_k.mission.graph import MissionGraph, build_graph, node_types, successors
from agent_k.mission.nodes import PHASE_NODES, PhaseNode
from agent_k.mission.state import BudgetLedger, MissionResult, MissionState, Mode, PhaseRecord
from agent_k.ml.executors import Evaluator, LocalEvaluator
from agent_k.platforms.base import Criteria, PlatformAdapter
from agent_k.store.models import MissionRow, SnapshotRow
from agent_k.store.repository import TERMINAL_STATUSES, Store, as_utc

HEARTBEAT_S = 2.0
ROUTING_STEPS = frozenset({"resume_router", "resume_at"})


class MissionError(Exception):
    """A mission cannot be started or resumed; the message says why."""


class _StepFailed(Exception):
    def __init__(self, snapshot_id: int | None, error: Exception) -> None:
        super().__init__(str(error))
        self.snapshot_id = snapshot_id
        self.error = error


def process_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _owner_is_dead_here(owner: str | None) -> bool:
    """A lease held by a process on this host that no longer exists can be taken over at once."""
    if not owner:
        return False
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _check_resumable(row: MissionRow, snapshot: SnapshotRow | None) -> None:
    """Only unfinished missions, or ones whose node raised (possibly a transient fault), can run again."""
    if row.status == "failed":
        reason = json.loads(row.result or "{}").get("result", {}).get("error")
        if reason != "node_error" or snapshot is None:
            raise MissionError(f"mission '{row.id}' failed ({reason}); nothing to resume")
    elif row.status in TERMINAL_STATUSES:
        raise MissionError(f"mission '{row.id}' already {row.status}")
    elif snapshot is not None and snapshot.status == "succeeded":
        raise MissionError(f"mission '{row.id}' has no unfinished step to resume")


@dataclass
class MissionSpec:
    """What a caller asks for; stored with the mission so any process can resume it."""

    criteria: Criteria
    mode: Mode = Mode.workflow
    time_budget: float = 120.0
    keep_columns: tuple[str, ...] = ()
    platform: str = "local"

    def options(self) -> dict[str, Any]:
        return {
            "criteria": self.criteria.model_dump(mode="json"),
            "mode": self.mode.value,
            "keep_columns": list(self.keep_columns),
        }


class MissionRunner:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        platform: PlatformAdapter,
        *,
        phases: tuple[type[PhaseNode], ...] = PHASE_NODES,
        on_event: Callable[[Event], None] | None = None,
        evaluator: Evaluator | None = None,
        owner: str | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.platform = platform
        self.phases = phases
        self.graph: MissionGraph = build_graph(phases)
        self.node_types = node_types(phases)
        self.on_event = on_event
        self.evaluator = evaluator or LocalEvaluator(settings.parallel_evaluations)
        self.owner = owner or process_owner()

    # -- entry points ------------------------------------------------------------------------------

    def create(self, mission_id: str, spec: MissionSpec, *, queue: bool = False) -> None:
        """Record a mission: held by this runner to run now, or (`queue`) left for a worker to claim."""
        self.store.create_mission(
            mission_id,
            competition=spec.criteria.competition,
            platform=spec.platform,
            mode=spec.mode.value,
            budget_s=spec.time_budget,
            options=spec.options(),
            claimed_by=None if queue else self.owner,
            lease_ttl=self.settings.lease_ttl,
        )

    async def run(self, mission_id: str) -> MissionResult:
        """Start a created mission at its first phase, or resume it from its last unfinished snapshot."""
        row = self.store.get_mission(mission_id)
        if row is None:
            raise MissionError(f"no mission '{mission_id}'")
        snapshot = self.store.last_snapshot(mission_id)
        _check_resumable(row, snapshot)
        self._claim(mission_id)
        if snapshot is None:
            return await self._drive(self._initial_state(row), self.phases[0](), None, next_seq=1)
        state = MissionState.model_validate_json(snapshot.state_json)
        node = TypeAdapter(self.node_types[snapshot.node_kind]).validate_json(snapshot.node_json)
        if snapshot.status == "running":  # its process died: the time it spent still counts
            started, last_seen = as_utc(snapshot.started_at), as_utc(row.updated_at)
            lost = (last_seen - started).total_seconds() if started and last_seen else 0.0
            state.budget.spent_s[node.phase] = state.budget.spent_s.get(node.phase, 0.0) + max(0.0, lost)
            self.store.end_step(snapshot.id or 0, "interrupted", "the process running this step died")
        return await self._drive(state, node, snapshot.seq, next_seq=snapshot.seq + 1)

    def _claim(self, mission_id: str) -> None:
        """Take the lease: free, expired, or held by a process on this host that no longer exists."""
        ttl = self.settings.lease_ttl
        if self.store.acquire_lease(mission_id, self.owner, ttl):
            return
        row = self.store.get_mission(mission_id)
        holder = row.lease_owner if row else None
        if _owner_is_dead_here(holder) and self.store.acquire_lease(mission_id, self.owner, ttl, steal_from=holder):
            return
        expires = as_utc(row.lease_expires_at) if row else None
        raise MissionError(f"mission '{mission_id}' is running under {holder} (lease until {expires})")

    @staticmethod
    def _initial_state(row: MissionRow) -> MissionState:
        options = json.loads(row.options)
        return MissionState(
            mission_id=row.id,
            criteria=Criteria.model_validate(options["criteria"]),
            mode=Mode(options["mode"]),
            keep_columns=options.get("keep_columns", []),
            budget=BudgetLedger(total_s=row.budget_s),
        )

    # -- the loop ----------------------------------------------------------------------------------

    async def _drive(
        self, state: MissionState, start: PhaseNode, resumed_from: int | None, next_seq: int
    ) -> MissionResult:
        emitter = EventEmitter(self.store, state.mission_id)
        if self.on_event is not None:
            emitter.subscribe(self.on_event)
        mission_dir = self.settings.missions_dir / state.mission_id
        mission_dir.mkdir(parents=True, exist_ok=True)
        clock = BudgetClock(state.budget)
        emitter.emit(
            MissionStarted(
                competition=state.criteria.competition,
                mode=state.mode.value,
                budget_s=state.budget.total_s,
                resumed_from_seq=resumed_from,
            )
        )
        async with httpx.AsyncClient(timeout=30.0) as http, self._heartbeat(state, clock, emitter):
            ctx = GraphContext(
                settings=self.settings,
                store=self.store,
                events=emitter,
                platform=self.platform,
                http=http,
                budget=clock,
                evaluator=self.evaluator,
                mission_dir=mission_dir,
            )
            return await self._iterate(state, ctx, start, next_seq)

    async def _iterate(self, state: MissionState, ctx: GraphContext, start: PhaseNode, seq: int) -> MissionResult:
        clock, snapshot_id, current = ctx.budget, None, None
        try:
            async with self.graph.iter(state=state, deps=ctx, inputs=start) as run:
                while True:
                    try:
                        async with asyncio.timeout(max(0.5, clock.hard_remaining()) if current else None):
                            item = await anext(run)
                    except Exception as exc:
                        clock.end_step()
                        # Leave `graph.iter` by raising, so its task group cancels a node still running.
                        raise _StepFailed(snapshot_id, exc) from exc
                    clock.end_step()
                    if isinstance(item, EndMarker):
                        return self._finish(state, ctx, snapshot_id, item.value)
                    nodes = [
                        t.inputs for t in item if t.node_id not in ROUTING_STEPS and isinstance(t.inputs, PhaseNode)
                    ]
                    if not nodes:
                        continue
                    node = nodes[0]
                    if current is not None and node.get_node_id() not in successors(type(current)):
                        detail = f"{current.get_node_id()} returned {node.get_node_id()}, which it does not declare"
                        return self._fail(state, ctx, snapshot_id, "illegal_phase_transition", detail)
                    self._enter_phase(state, ctx, node)
                    snapshot_id = self.store.begin_step(
                        state.mission_id,
                        previous_id=snapshot_id,
                        seq=seq,
                        node_kind=node.get_node_id(),
                        node_json=TypeAdapter(type(node)).dump_json(node).decode(),
                        state_json=state.model_dump_json(),
                    )
                    seq += 1
                    clock.start_step(node.phase)
                    current = node
        except _StepFailed as failure:
            if isinstance(failure.error, TimeoutError):
                return self._fail(state, ctx, failure.snapshot_id, "budget_exceeded", "a step overran the time budget")
            if failure.snapshot_id is not None:
                self.store.end_step(failure.snapshot_id, "failed", repr(failure.error)[-2000:])
            return self._fail(state, ctx, None, "node_error", f"{type(failure.error).__name__}: {failure.error}")

    # -- phase bookkeeping -------------------------------------------------------------------------

    def _enter_phase(self, state: MissionState, ctx: GraphContext, node: PhaseNode) -> None:
        if state.current_phase == node.phase:
            return
        if state.current_phase is not None:
            self._close_phase(state, ctx, "completed")
        mode = Mode.workflow.value
        state.current_phase = node.phase
        state.phase_modes[node.phase] = mode
        state.phase_history.append(PhaseRecord(phase=node.phase, mode=mode, started=datetime.now(UTC)))
        state.budget.phase_started_at_s.setdefault(node.phase, ctx.budget.elapsed())
        ctx.events.emit(PhaseStarted(mode=mode, budget_s=round(ctx.budget.allowance(node.phase), 3)), node.phase.value)

    def _close_phase(self, state: MissionState, ctx: GraphContext, outcome: str, reason: str | None = None) -> None:
        phase = state.current_phase
        if phase is None or not state.phase_history or state.phase_history[-1].ended is not None:
            return
        record = state.phase_history[-1]
        record.ended, record.outcome, record.reason = datetime.now(UTC), outcome, reason
        if outcome == "completed":
            if phase not in state.phases_completed:
                state.phases_completed.append(phase)
            ctx.events.emit(PhaseCompleted(elapsed_s=round(state.budget.spent_s.get(phase, 0.0), 3)), phase.value)
        else:
            ctx.events.emit(PhaseFailed(reason=reason or outcome), phase.value)

    # -- endings -----------------------------------------------------------------------------------

    def _finish(
        self, state: MissionState, ctx: GraphContext, snapshot_id: int | None, result: MissionResult
    ) -> MissionResult:
        if not result.success:
            return self._fail(state, ctx, snapshot_id, result.error or "failed", result.detail)
        self._close_phase(state, ctx, "completed")
        result = MissionResult.from_state(state)
        ctx.events.emit(
            MissionCompleted(
                cv_score=result.cv_score,
                public_score=result.public_score,
                private_score=result.private_score,
                rank=result.rank,
                medal=result.medal,
                elapsed_s=result.duration_s,
            )
        )
        self.store.finish_mission(
            state.mission_id,
            last_snapshot_id=snapshot_id,
            status="succeeded",
            result=self._result_json(state, result),
        )
        return result

    def _fail(
        self, state: MissionState, ctx: GraphContext, snapshot_id: int | None, reason: str, detail: str | None
    ) -> MissionResult:
        self._close_phase(state, ctx, "failed", reason)
        result = MissionResult.from_state(state, error=reason, detail=detail)
        ctx.events.emit(MissionFailed(reason=reason, error=detail))
        self.store.finish_mission(
            state.mission_id, last_snapshot_id=snapshot_id, status="failed", result=self._result_json(state, result)
        )
        return result

    @staticmethod
    def _result_json(state: MissionState, result: MissionResult) -> str:
        """The mission row keeps the result and the final state, so `missions show` needs no snapshot."""
        return json.dumps({"result": result.model_dump(mode="json"), "state": state.model_dump(mode="json")})

    # -- liveness ----------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _heartbeat(self, state: MissionState, clock: BudgetClock, emitter: EventEmitter) -> AsyncIterator[None]:
        """Keep the lease alive and raise budget warnings while a long step runs."""

        async def beat() -> None:
            while True:
                await asyncio.sleep(
                    HEARTBEAT_S if self.settings.lease_ttl > 3 * HEARTBEAT_S else self.settings.lease_ttl / 3
                )
                self.store.renew_lease(state.mission_id, self.owner, self.settings.lease_ttl)
                self._warn_budget(state, clock, emitter)

        task = asyncio.create_task(beat())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self.store.release_lease(state.mission_id, self.owner)

    @staticmethod
    def _warn_budget(state: MissionState, clock: BudgetClock, emitter: EventEmitter) -> None:
        phase = state.current_phase
        if phase is None or phase in state.budget.warned:
            return
        allowance = clock.allowance(phase)
        used = clock.used_in_phase(phase)
        if allowance > 0 and used >= WARNING_FRACTION * allowance:
            state.budget.warned.append(phase)
            emitter.emit(BudgetWarning(used_s=round(used, 3), allowed_s=round(allowance, 3)), phase.value)
