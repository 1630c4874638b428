"""`MissionRunner`: the durable loop. It drives the graph one node at a time and checkpoints before every node.

Per step: the previous snapshot is closed as succeeded and the next one opened as running, in one transaction,
before the node runs. A crash therefore always leaves the node to re-run as the last snapshot. What happens to
the mission between steps (phases, the approval gate, endings) is `agent_k.mission.lifecycle`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
from pydantic import TypeAdapter
from pydantic_graph import EndMarker

from agent_k import tracing
from agent_k.config import Settings
from agent_k.events.emitter import EventEmitter
from agent_k.events.models import Event, Log, MissionStarted
from agent_k.mission import fallback, lifecycle, versions, webhooks
from agent_k.mission.budget import BudgetClock, deadlines
from agent_k.mission.context import GraphContext
from agent_k.mission.contract import MISSION_CONTRACT, PhaseContract, analyse
from agent_k.mission.control import MissionError, MissionNotFound, check_resumable
from agent_k.mission.graph import MissionGraph, build_graph, graph_fingerprint, node_types
from agent_k.mission.launch import MissionSpec
from agent_k.mission.liveness import heartbeat, owner_is_dead_here, process_owner
from agent_k.mission.nodes import PHASE_NODES, PhaseNode
from agent_k.mission.phases import Mode, Phase
from agent_k.mission.state import MissionResult, MissionState
from agent_k.ml.executors import Evaluator, LocalEvaluator
from agent_k.platforms.base import PlatformAdapter, PlatformError
from agent_k.platforms.factory import open_platform
from agent_k.sandbox import SandboxChoice, SandboxUnavailable, choose, gpu_devices
from agent_k.secrets import collect
from agent_k.store.models import MissionRow
from agent_k.store.repository import Store, as_utc
from agent_k.store.status import FailureReason, StepStatus

if TYPE_CHECKING:
    from pydantic_ai.models import Model

ROUTING_STEPS = frozenset({"resume_router", "resume_at"})
WEBHOOK_WAIT_S = 15.0
"""How long a stopping mission waits for its webhook's receiver before leaving the delivery to the workers."""


class _StepFailed(Exception):
    def __init__(self, snapshot_id: int | None, error: Exception, *, stopped: PhaseNode | None = None) -> None:
        super().__init__(str(error))
        self.snapshot_id = snapshot_id
        self.error = error
        self.stopped = stopped
        """The step the hard budget limit stopped (None: the step failed by itself)."""


@dataclass(frozen=True)
class _Setup:
    """What `run` prepares before the loop: the platform, its HTTP client, the candidates' sandbox."""

    platform: PlatformAdapter
    http: httpx.AsyncClient
    sandbox: SandboxChoice


def sandbox_warnings(sandbox: SandboxChoice, state: MissionState) -> list[str]:
    """What a mission says at its start when its candidates are less contained than they should be."""
    warnings = []
    if sandbox.kind == "basic":
        code = (
            "model-written code runs there too (--allow-unsandboxed-code)"
            if state.options.allow_unsandboxed_code
            else "model-written code will not run"
        )
        warnings.append(f"candidates run in the basic sandbox, without bubblewrap ({sandbox.reason}); {code}")
    if not sandbox.memory_capped:
        warnings.append("no memory cgroup can be made here: each candidate process is capped on its own (RLIMIT_AS)")
        if gpu_devices():
            warnings.append("this host's GPU goes unused: CUDA does not start under that address-space cap")
    return warnings


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
        contract: PhaseContract = MISSION_CONTRACT,
    ) -> None:
        self.settings = settings
        settings.private_home()
        self.store = store
        self.platform = platform
        """A ready platform (tests); otherwise built per mission from its `platform` column."""
        self.phases = phases
        self.contract = contract
        """The phase contract the graph is checked against and every transition is held to."""
        self.graph: MissionGraph = build_graph(phases, contract)
        self.node_types = node_types(phases)
        self.fingerprint = graph_fingerprint(phases)
        self.on_event = on_event
        self.evaluator = evaluator or LocalEvaluator(settings.parallel_evaluations)
        self.owner = owner or process_owner()
        self.model = model
        """A ready model (tests pass a FunctionModel); otherwise built from the mission's model string."""
        self._cancel_requested = False

    # -- entry points ------------------------------------------------------------------------------

    def create(self, spec: MissionSpec, *, queue: bool = False) -> None:
        """Record a mission: held by this runner to run now, or (`queue`) left for a worker to claim."""
        self.store.create_mission(
            spec.mission_id,
            competition=spec.criteria.competition,
            platform=spec.platform,
            mode=spec.mode.value,
            budget_s=spec.time_budget,
            options=spec.row_options(),
            claimed_by=None if queue else self.owner,
            lease_ttl=self.settings.lease_ttl,
        )

    async def run(self, mission_id: str) -> MissionResult:
        """Start a created mission at its first phase, or resume it from its last unfinished snapshot."""
        row = await asyncio.to_thread(self.store.get_mission, mission_id)
        if row is None:
            raise MissionNotFound(f"no mission '{mission_id}'")
        snapshot = await asyncio.to_thread(self.store.last_snapshot, mission_id)
        check_resumable(row, snapshot)
        sandbox = self._sandbox(mission_id)
        async with httpx.AsyncClient(timeout=30.0) as http:
            platform = self._open_platform(row, http)
            await self._claim(mission_id)
            setup = _Setup(platform, http, sandbox)
            if snapshot is None:
                await self._record_version(mission_id)
                state = MissionSpec.from_row(row).initial_state()
                return await self._drive(state, self.phases[0](), None, 1, setup)
            try:
                restored = versions.restore(row, snapshot, self.node_types, self.fingerprint)
            except versions.IncompatibleVersion as exc:
                await asyncio.to_thread(versions.stop_incompatible, self.store, row, str(exc))
                raise
            await self._record_version(mission_id)
            state, node = restored.state, restored.node
            if snapshot.status == StepStatus.forked:  # a fork's first step: nothing of it ran yet
                return await self._drive(state, node, None, snapshot.seq + 1, setup)
            lifecycle.charge_lost_time(state, node.phase, row, snapshot, clock=self.settings.budget_clock)
            if snapshot.status == StepStatus.running:
                await asyncio.to_thread(
                    self.store.end_step, snapshot.id or 0, StepStatus.interrupted, "the process running this step died"
                )
            notes = [restored.note] if restored.note else []
            return await self._drive(state, node, snapshot.seq, snapshot.seq + 1, setup, notes)

    async def _record_version(self, mission_id: str) -> None:
        await asyncio.to_thread(
            self.store.update_mission,
            mission_id,
            code_version=versions.code_version(),
            graph_fingerprint=self.fingerprint,
        )

    def _sandbox(self, mission_id: str) -> SandboxChoice:
        try:
            return choose(self.settings.sandbox, self.settings.sandbox_user)
        except SandboxUnavailable as exc:
            raise MissionError(f"mission '{mission_id}' cannot run here: {exc}") from None

    def _open_platform(self, row: MissionRow, http: httpx.AsyncClient) -> PlatformAdapter:
        if self.platform is not None:
            return self.platform
        try:
            return open_platform(row.platform, self.settings, http)
        except PlatformError as exc:  # e.g. this worker has no Kaggle credentials: another one may
            raise MissionError(f"mission '{row.id}' cannot run here: {exc}") from None

    async def _claim(self, mission_id: str) -> None:
        """Take the lease: free, expired, or held by a process on this host that no longer exists."""
        store, ttl = self.store, self.settings.lease_ttl
        if await asyncio.to_thread(store.acquire_lease, mission_id, self.owner, ttl):
            return
        row = await asyncio.to_thread(store.get_mission, mission_id)
        holder = row.lease_owner if row else None
        if owner_is_dead_here(holder) and await asyncio.to_thread(
            store.acquire_lease, mission_id, self.owner, ttl, steal_from=holder
        ):
            return
        expires = as_utc(row.lease_expires_at) if row else None
        raise MissionError(f"mission '{mission_id}' is running under {holder} (lease until {expires})")

    # -- the loop ----------------------------------------------------------------------------------

    async def _drive(
        self,
        state: MissionState,
        start: PhaseNode,
        resumed_from: int | None,
        next_seq: int,
        setup: _Setup,
        notes: list[str] | None = None,
    ) -> MissionResult:
        scrub = collect(self.settings)

        def owe(event: Event) -> None:  # in the thread that stored the event: the delivery owed follows it there
            webhooks.owe_for(self.store, event.mission_id, event.seq, event.type)

        emitter = await EventEmitter.open(self.store, state.mission_id, scrub, recorded=owe)
        if self.on_event is not None:
            emitter.subscribe(self.on_event)
        mission_dir = self.settings.missions_dir / state.mission_id
        mission_dir.mkdir(parents=True, exist_ok=True)
        clock = BudgetClock(state.budget, deadlines(self.contract))
        started = MissionStarted(
            competition=state.criteria.competition,
            mode=state.options.mode.value,
            budget_s=state.budget.total_s,
            resumed_from_seq=resumed_from,
        )
        await emitter.emit(started)
        for warning in [
            *(notes or []),
            *sandbox_warnings(setup.sandbox, state),
            *analyse(self.contract).suppressed_lines(),
        ]:
            await emitter.emit(Log(level="warning", message=warning))
        main, self._cancel_requested = asyncio.current_task(), False

        def cancel() -> None:
            self._cancel_requested = True
            if main is not None:
                main.cancel()

        model, model_error = self._language_model(state)
        ctx = GraphContext(
            settings=self.settings,
            store=self.store,
            events=emitter,
            platform=setup.platform,
            http=setup.http,
            budget=clock,
            evaluator=self.evaluator,
            mission_dir=mission_dir,
            sandbox=setup.sandbox,
            scrub=scrub,
            model=model,
            model_error=model_error,
        )
        owner, ttl = self.owner, self.settings.lease_ttl
        ctx.mission_span = tracing.start("mission", mission=state.mission_id, mode=state.options.mode.value)
        try:
            async with heartbeat(self.store, owner, ttl, state=state, clock=clock, emitter=emitter, on_cancel=cancel):
                result = await self._iterate(state, ctx, start, next_seq)
            ctx.mission_span.set_attribute("status", result.status)
            await self._send_webhooks(state.mission_id, setup.http)
            return result
        finally:
            tracing.finish(ctx.phase_span)
            tracing.finish(ctx.mission_span)

    async def _iterate(self, state: MissionState, ctx: GraphContext, start: PhaseNode, seq: int) -> MissionResult:
        clock, snapshot_id, current = ctx.budget, None, None
        try:
            async with self.graph.iter(state=state, deps=ctx, inputs=start) as run:
                while True:
                    limit = asyncio.timeout(max(0.5, clock.hard_remaining(current.phase)) if current else None)
                    try:
                        async with limit:
                            item = await anext(run)
                    except Exception as exc:
                        clock.end_step()
                        # Leave `graph.iter` by raising, so its task group cancels a node still running.
                        raise _StepFailed(snapshot_id, exc, stopped=current if limit.expired() else None) from exc
                    clock.end_step()
                    if isinstance(item, EndMarker):
                        result: MissionResult = item.value
                        if not result.success:
                            return await lifecycle.fail(
                                state,
                                ctx,
                                snapshot_id,
                                FailureReason(result.error or FailureReason.node_error),
                                result.detail,
                            )
                        return await lifecycle.succeed(state, ctx, snapshot_id)
                    nodes = [
                        t.inputs for t in item if t.node_id not in ROUTING_STEPS and isinstance(t.inputs, PhaseNode)
                    ]
                    if not nodes:
                        continue
                    node = nodes[0]
                    if current is not None and not self.contract.allows(current.phase.value, node.phase.value):
                        detail = f"{current.get_node_id()} returned {node.get_node_id()}, which the contract forbids"
                        return await lifecycle.fail(
                            state, ctx, snapshot_id, FailureReason.illegal_phase_transition, detail
                        )
                    if await lifecycle.needs_approval(state, ctx, node.phase):
                        waiting = functools.partial(self._checkpoint, state, node, snapshot_id, seq)
                        return await lifecycle.park_for_approval(state, ctx, waiting)
                    await lifecycle.enter_phase(state, ctx, node.phase, agent=self._agents_on(state, node))
                    snapshot_id = await self._checkpoint(state, node, snapshot_id, seq)
                    seq += 1
                    clock.start_step(node.phase)
                    tracing.finish(ctx.phase_span)
                    ctx.phase_span = tracing.start(f"phase {node.phase.value}", ctx.mission_span, step=seq - 1)
                    current = node
        except asyncio.CancelledError:
            if not self._cancel_requested:
                raise
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
            return await lifecycle.cancelled(state, ctx, snapshot_id)
        except _StepFailed as failure:
            if failure.stopped is not None:
                return await self._stopped_at_the_limit(state, ctx, failure.snapshot_id, seq, failure.stopped)
            if failure.snapshot_id is not None:
                error = repr(failure.error)[-2000:]
                await asyncio.to_thread(self.store.end_step, failure.snapshot_id, StepStatus.failed, error)
            detail = f"{type(failure.error).__name__}: {failure.error}"
            return await lifecycle.fail(state, ctx, None, FailureReason.node_error, detail)

    async def _send_webhooks(self, mission_id: str, http: httpx.AsyncClient) -> None:
        """What the mission owes its webhook now that it stopped; a receiver that fails is left to the workers."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                webhooks.deliver_due(self.store, self.settings, mission_id=mission_id, http=http), WEBHOOK_WAIT_S
            )

    async def _stopped_at_the_limit(
        self, state: MissionState, ctx: GraphContext, snapshot_id: int | None, seq: int, stopped: PhaseNode
    ) -> MissionResult:
        """The budget is spent and `stopped` was still running: it is gone (cancelled with its candidates); the
        mission submits the best valid candidate it has, or the training prior, and fails only without either."""
        why = f"{stopped.phase.value} (still running when the budget was spent)"
        submission = next((node for node in self.phases if node.phase is Phase.submission), None)
        if stopped.phase is Phase.submission or submission is None:
            return await lifecycle.fail(
                state, ctx, snapshot_id, FailureReason.budget_exceeded, f"the hard budget limit stopped {why}"
            )
        if snapshot_id is not None:
            await asyncio.to_thread(self.store.end_step, snapshot_id, StepStatus.failed, f"stopped: {why}")
        if not await fallback.settle_at_limit(ctx, state, why):
            detail = f"the hard budget limit stopped {why}, and there is nothing valid to submit"
            return await lifecycle.fail(state, ctx, None, FailureReason.budget_exceeded, detail)
        await lifecycle.close_phase(state, ctx, "stopped", FailureReason.budget_exceeded)
        return await self._iterate(state, ctx, submission(), seq)

    async def _checkpoint(self, state: MissionState, node: PhaseNode, previous_id: int | None, seq: int) -> int:
        """Close the previous step and record `node` with the state it will start from; the snapshot's id."""
        return await asyncio.to_thread(
            self.store.begin_step,
            state.mission_id,
            previous_id=previous_id,
            seq=seq,
            node_kind=node.get_node_id(),
            node_json=TypeAdapter(type(node)).dump_json(node).decode(),
            state_json=state.model_dump_json(),
        )

    # -- agent mode ----------------------------------------------------------------------------------

    def _agents_on(self, state: MissionState, node: PhaseNode) -> bool:
        configured = state.options.model is not None or self.model is not None
        agent_first = state.options.mode in (Mode.auto, Mode.agent)  # amphiflow runs the workflow first, then repairs
        return agent_first and configured and node.wants_agent(state)

    def _language_model(self, state: MissionState) -> tuple[Model | None, str | None]:
        """The model of agent mode, or why there is none (each agent phase then falls back, saying why)."""
        from agent_k.llm import ModelUnavailable, build_model

        if state.options.mode is Mode.workflow or (state.options.model is None and self.model is None):
            return None, None
        if self.model is not None:
            return self.model, None
        try:
            return build_model(state.options.model or ""), None
        except ModelUnavailable as exc:
            return None, str(exc)
