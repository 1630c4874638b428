"""`MissionRunner`: drive the graph one node at a time, checkpointing before every node.

Per step: the previous snapshot is closed as succeeded and the next one opened as running, in one
transaction, before the node runs. A crash therefore always leaves the node to re-run as the last snapshot.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import TypeAdapter
from pydantic_graph import EndMarker

from agent_k.config import Settings
from agent_k.events.emitter import EventEmitter
from agent_k.events.models import (
    ApprovalRequested,
    Event,
    MissionCancelled,
    MissionCompleted,
    MissionFailed,
    MissionStarted,
    PhaseCompleted,
    PhaseFailed,
    PhaseStarted,
)
from agent_k.mission.budget import BudgetClock
from agent_k.mission.context import GraphContext
from agent_k.mission.control import MissionError, MissionNotFound, check_resumable, result_json
from agent_k.mission.graph import MissionGraph, build_graph, node_types, successors
from agent_k.mission.liveness import heartbeat, owner_is_dead_here, process_owner
from agent_k.mission.nodes import PHASE_NODES, PhaseNode
from agent_k.mission.state import BudgetLedger, MissionResult, MissionState, Mode, Phase, PhaseRecord
from agent_k.ml.executors import Evaluator, LocalEvaluator
from agent_k.platforms.base import Criteria, PlatformAdapter, PlatformError
from agent_k.platforms.factory import check_platform, open_platform
from agent_k.store.models import MissionRow
from agent_k.store.repository import Store, as_utc

if TYPE_CHECKING:
    from pydantic_ai.models import Model

ROUTING_STEPS = frozenset({"resume_router", "resume_at"})


class _StepFailed(Exception):
    def __init__(self, snapshot_id: int | None, error: Exception) -> None:
        super().__init__(str(error))
        self.snapshot_id = snapshot_id
        self.error = error


@dataclass
class MissionSpec:
    """What a caller asks for; stored with the mission so any process can resume it."""

    criteria: Criteria
    mode: Mode = Mode.workflow
    time_budget: float = 120.0
    keep_columns: tuple[str, ...] = ()
    platform: str = "local"
    require_approval: bool = False
    model: str | None = None
    max_cost_usd: float | None = None

    def options(self) -> dict[str, Any]:
        return {
            "criteria": self.criteria.model_dump(mode="json"),
            "mode": self.mode.value,
            "keep_columns": list(self.keep_columns),
            "require_approval": self.require_approval,
            "model": self.model,
            "max_cost_usd": self.max_cost_usd,
        }


class MissionRunner:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        platform: PlatformAdapter | None = None,
        *,
        phases: tuple[type[PhaseNode], ...] = PHASE_NODES,
        on_event: Callable[[Event], None] | None = None,
        evaluator: Evaluator | None = None,
        owner: str | None = None,
        model: Model | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.platform = platform
        """A ready platform (tests); otherwise built per mission from its `platform` column."""
        self.phases = phases
        self.graph: MissionGraph = build_graph(phases)
        self.node_types = node_types(phases)
        self.on_event = on_event
        self.evaluator = evaluator or LocalEvaluator(settings.parallel_evaluations)
        self.owner = owner or process_owner()
        self.model = model
        """A ready model (tests pass a FunctionModel); otherwise built from the mission's model string."""
        self._cancel_requested = False

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
            raise MissionNotFound(f"no mission '{mission_id}'")
        snapshot = self.store.last_snapshot(mission_id)
        check_resumable(row, snapshot)
        if self.platform is None:
            try:
                check_platform(row.platform, self.settings)
            except PlatformError as exc:  # e.g. this worker has no Kaggle credentials: another one may
                raise MissionError(f"mission '{mission_id}' cannot run here: {exc}") from None
        self._claim(mission_id)
        if snapshot is None:
            start = self.phases[0]()
            return await self._drive(self._initial_state(row), start, None, next_seq=1, platform=row.platform)
        state = MissionState.model_validate_json(snapshot.state_json)
        node = TypeAdapter(self.node_types[snapshot.node_kind]).validate_json(snapshot.node_json)
        if snapshot.status in ("running", "cancelled"):  # the time its step spent before it stopped still counts
            started = as_utc(snapshot.started_at)
            stopped = as_utc(snapshot.finished_at if snapshot.status == "cancelled" else row.updated_at)
            lost = (stopped - started).total_seconds() if started and stopped else 0.0
            state.budget.spent_s[node.phase] = state.budget.spent_s.get(node.phase, 0.0) + max(0.0, lost)
        if snapshot.status == "running":
            self.store.end_step(snapshot.id or 0, "interrupted", "the process running this step died")
        return await self._drive(state, node, snapshot.seq, next_seq=snapshot.seq + 1, platform=row.platform)

    def _claim(self, mission_id: str) -> None:
        """Take the lease: free, expired, or held by a process on this host that no longer exists."""
        ttl = self.settings.lease_ttl
        if self.store.acquire_lease(mission_id, self.owner, ttl):
            return
        row = self.store.get_mission(mission_id)
        holder = row.lease_owner if row else None
        if owner_is_dead_here(holder) and self.store.acquire_lease(mission_id, self.owner, ttl, steal_from=holder):
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
            require_approval=options.get("require_approval", False),
            model=options.get("model"),
            max_cost_usd=options.get("max_cost_usd"),
            budget=BudgetLedger(total_s=row.budget_s),
        )

    # -- the loop ----------------------------------------------------------------------------------

    async def _drive(
        self, state: MissionState, start: PhaseNode, resumed_from: int | None, next_seq: int, *, platform: str
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
        main, self._cancel_requested = asyncio.current_task(), False

        def cancel() -> None:
            self._cancel_requested = True
            if main is not None:
                main.cancel()

        beating = heartbeat(
            self.store,
            self.owner,
            self.settings.lease_ttl,
            state=state,
            clock=clock,
            emitter=emitter,
            on_cancel=cancel,
        )
        model, model_error = self._language_model(state)
        async with httpx.AsyncClient(timeout=30.0) as http, beating:
            ctx = GraphContext(
                settings=self.settings,
                store=self.store,
                events=emitter,
                platform=self.platform or open_platform(platform, self.settings, http),
                http=http,
                budget=clock,
                evaluator=self.evaluator,
                mission_dir=mission_dir,
                model=model,
                model_error=model_error,
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
                    if self._needs_approval(state, node):
                        return self._await_approval(state, ctx, snapshot_id, node, seq)
                    self._enter_phase(state, ctx, node)
                    snapshot_id = self._checkpoint(state, node, snapshot_id, seq)
                    seq += 1
                    clock.start_step(node.phase)
                    current = node
        except asyncio.CancelledError:
            if not self._cancel_requested:
                raise
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
            return self._cancelled(state, ctx, snapshot_id)
        except _StepFailed as failure:
            if isinstance(failure.error, TimeoutError):
                return self._fail(state, ctx, failure.snapshot_id, "budget_exceeded", "a step overran the time budget")
            if failure.snapshot_id is not None:
                self.store.end_step(failure.snapshot_id, "failed", repr(failure.error)[-2000:])
            return self._fail(state, ctx, None, "node_error", f"{type(failure.error).__name__}: {failure.error}")

    def _checkpoint(self, state: MissionState, node: PhaseNode, previous_id: int | None, seq: int) -> int:
        """Close the previous step and record `node` with the state it will start from; the snapshot's id."""
        return self.store.begin_step(
            state.mission_id,
            previous_id=previous_id,
            seq=seq,
            node_kind=node.get_node_id(),
            node_json=TypeAdapter(type(node)).dump_json(node).decode(),
            state_json=state.model_dump_json(),
        )

    # -- phase bookkeeping -------------------------------------------------------------------------

    def _language_model(self, state: MissionState) -> tuple[Model | None, str | None]:
        """The model of agent mode, or why there is none (each agent phase then falls back, saying why)."""
        from agent_k.agents.models import ModelUnavailable, build_model

        if state.mode is Mode.workflow or (state.model is None and self.model is None):
            return None, None
        if self.model is not None:
            return self.model, None
        try:
            return build_model(state.model or ""), None
        except ModelUnavailable as exc:
            return None, str(exc)

    def _enter_phase(self, state: MissionState, ctx: GraphContext, node: PhaseNode) -> None:
        if state.current_phase == node.phase:
            return
        if state.current_phase is not None:
            self._close_phase(state, ctx, "completed")
        agents_on = state.mode is not Mode.workflow and (state.model is not None or self.model is not None)
        mode = Mode.agent.value if agents_on and node.wants_agent(state) else Mode.workflow.value
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
            completed = PhaseCompleted(
                elapsed_s=round(state.budget.spent_s.get(phase, 0.0), 3),
                llm_requests=state.budget.llm_requests.get(phase, 0),
                llm_tokens=state.budget.llm_tokens.get(phase, 0),
            )
            ctx.events.emit(completed, phase.value)
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
            result=result_json(state, result),
        )
        return result

    def _fail(
        self, state: MissionState, ctx: GraphContext, snapshot_id: int | None, reason: str, detail: str | None
    ) -> MissionResult:
        self._close_phase(state, ctx, "failed", reason)
        result = MissionResult.from_state(state, error=reason, detail=detail)
        ctx.events.emit(MissionFailed(reason=reason, error=detail))
        self.store.finish_mission(
            state.mission_id, last_snapshot_id=snapshot_id, status="failed", result=result_json(state, result)
        )
        return result

    def _cancelled(self, state: MissionState, ctx: GraphContext, snapshot_id: int | None) -> MissionResult:
        """Stopped by a cancel request: its step (and the sandboxed processes under it) is already gone."""
        if snapshot_id is not None:
            self.store.end_step(snapshot_id, "cancelled", "cancel requested")
        self._close_phase(state, ctx, "cancelled", "cancel requested")
        result = MissionResult.from_state(state, error="cancelled", status="cancelled")
        ctx.events.emit(MissionCancelled(reason="cancel requested"))
        self.store.finish_mission(
            state.mission_id, last_snapshot_id=None, status="cancelled", result=result_json(state, result)
        )
        return result

    # -- the approval gate -------------------------------------------------------------------------

    def _needs_approval(self, state: MissionState, node: PhaseNode) -> bool:
        if not state.require_approval or node.phase != Phase.submission:
            return False
        row = self.store.get_mission(state.mission_id)
        return row is None or row.approval != "approved"

    def _await_approval(
        self, state: MissionState, ctx: GraphContext, snapshot_id: int | None, node: PhaseNode, seq: int
    ) -> MissionResult:
        """Checkpoint the Submission node as `waiting` and park the mission until `approve` re-queues it."""
        self._close_phase(state, ctx, "completed")
        waiting = self._checkpoint(state, node, snapshot_id, seq)
        self.store.end_step(waiting, "waiting", "awaiting approval")
        self.store.update_mission(state.mission_id, status="awaiting_approval", approval="pending")
        ctx.events.emit(ApprovalRequested(cv_score=state.evolution_state.best_score))
        return MissionResult.from_state(state, status="awaiting_approval")
