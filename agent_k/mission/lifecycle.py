"""The mission between its steps: phases begin and end, an agent phase falls back or books what it used, the
approval gate parks the mission, and the mission ends (succeeded, failed or cancelled).

This module is the one owner of `phase_history`, `phase_modes`, `phases_completed` and the budget ledger's
model usage: the runner calls it around every step, and the agents call `fall_back` and `book_usage`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from agent_k.config import BudgetClockKind
from agent_k.events.models import (
    ApprovalRequested,
    MissionCancelled,
    MissionCompleted,
    MissionFailed,
    PhaseCompleted,
    PhaseFailed,
    PhaseFallback,
    PhaseStarted,
)
from agent_k.mission.context import GraphContext
from agent_k.mission.control import result_json
from agent_k.mission.phases import Mode, Phase
from agent_k.mission.recovery import strategy_for
from agent_k.mission.state import MissionResult, MissionState, PhaseRecord
from agent_k.store.models import MissionRow, SnapshotRow
from agent_k.store.repository import as_utc
from agent_k.store.status import FailureReason, MissionStatus, StepStatus


async def enter_phase(state: MissionState, ctx: GraphContext, phase: Phase, *, agent: bool) -> None:
    """Open `phase` (closing the one before as completed); it runs its agent when `agent` is true."""
    if state.current_phase == phase:
        return
    if state.current_phase is not None:
        await close_phase(state, ctx, "completed")
    mode = Mode.agent.value if agent else Mode.workflow.value
    state.current_phase = phase
    state.phase_modes[phase] = mode
    strategy = strategy_for(state, ctx, phase).value
    state.phase_history.append(PhaseRecord(phase=phase, mode=mode, started=datetime.now(UTC), strategy=strategy))
    state.budget.phase_started_at_s.setdefault(phase, ctx.budget.elapsed())
    await ctx.events.emit(PhaseStarted(mode=mode, budget_s=round(ctx.budget.allowance(phase), 3)), phase.value)


async def close_phase(state: MissionState, ctx: GraphContext, outcome: str, reason: str | None = None) -> None:
    phase = state.current_phase
    if phase is None or not state.phase_history or state.phase_history[-1].ended is not None:
        return
    record = state.phase_history[-1]
    record.ended, record.outcome, record.reason = datetime.now(UTC), outcome, reason
    if outcome != "completed":
        await ctx.events.emit(PhaseFailed(reason=reason or outcome), phase.value)
        return
    if phase not in state.phases_completed:
        state.phases_completed.append(phase)
    completed = PhaseCompleted(
        elapsed_s=round(state.budget.spent_s.get(phase, 0.0), 3),
        llm_requests=state.budget.llm_requests.get(phase, 0),
        llm_tokens=state.budget.llm_tokens.get(phase, 0),
        mission_cost_usd=round(state.budget.cost_usd, 6),
    )
    await ctx.events.emit(completed, phase.value)


async def fall_back(state: MissionState, ctx: GraphContext, phase: Phase, reason: str) -> None:
    """The phase runs its workflow path from here on, and says why."""
    state.phase_modes[phase] = Mode.workflow.value
    if state.phase_history and state.phase_history[-1].phase == phase:
        state.phase_history[-1].mode, state.phase_history[-1].fallback = Mode.workflow.value, reason
    await ctx.events.emit(PhaseFallback(reason=reason), phase.value)


def book_usage(state: MissionState, phase: Phase, *, tokens: int, requests: int, cost_usd: float) -> None:
    budget = state.budget
    budget.llm_tokens[phase] = budget.llm_tokens.get(phase, 0) + tokens
    budget.llm_requests[phase] = budget.llm_requests.get(phase, 0) + requests
    budget.cost_usd = round(budget.cost_usd + cost_usd, 8)


def charge_lost_time(
    state: MissionState, phase: Phase, row: MissionRow, snapshot: SnapshotRow, *, clock: BudgetClockKind = "running"
) -> None:
    """A step that stopped without finishing (its process died, or it was cancelled) still spent its time: up
    to its process's last heartbeat, since the budget measures the mission's own running time. The time between
    a death and the resume is the fleet's, not the mission's; under the `wall` clock it is charged too."""
    if snapshot.status not in (StepStatus.running, StepStatus.cancelled):
        return
    started = as_utc(snapshot.started_at)
    if snapshot.status == StepStatus.cancelled:
        stopped = as_utc(snapshot.finished_at)
    elif clock == "wall":
        stopped = datetime.now(UTC)
    else:
        stopped = as_utc(row.heartbeat_at or row.updated_at)
    lost = (stopped - started).total_seconds() if started and stopped else 0.0
    state.budget.spent_s[phase] = state.budget.spent_s.get(phase, 0.0) + max(0.0, lost)


# -- the approval gate -------------------------------------------------------------------------------------


async def needs_approval(state: MissionState, ctx: GraphContext, phase: Phase) -> bool:
    if not state.options.require_approval or phase != Phase.submission:
        return False
    row = await asyncio.to_thread(ctx.store.get_mission, state.mission_id)
    return row is None or row.approval != "approved"


async def park_for_approval(
    state: MissionState, ctx: GraphContext, checkpoint: Callable[[], Awaitable[int]]
) -> MissionResult:
    """Close the phase, checkpoint the Submission step (`checkpoint` returns its snapshot id) as waiting, and
    park the mission there until `approve` re-queues it."""
    await close_phase(state, ctx, "completed")
    store = ctx.store
    waiting = await checkpoint()
    await asyncio.to_thread(store.end_step, waiting, StepStatus.waiting, "awaiting approval")
    await asyncio.to_thread(
        store.update_mission, state.mission_id, status=MissionStatus.awaiting_approval, approval="pending"
    )
    await ctx.events.emit(ApprovalRequested(cv_score=state.evolution_state.best_score))
    return MissionResult.from_state(state, status=MissionStatus.awaiting_approval)


# -- endings -----------------------------------------------------------------------------------------------


async def succeed(state: MissionState, ctx: GraphContext, snapshot_id: int | None) -> MissionResult:
    await close_phase(state, ctx, "completed")
    result = MissionResult.from_state(state)
    await ctx.events.emit(MissionCompleted(**result.scores.model_dump(), elapsed_s=result.duration_s))
    await _finish(state, ctx, snapshot_id, MissionStatus.succeeded, result)
    return result


async def fail(
    state: MissionState, ctx: GraphContext, snapshot_id: int | None, reason: FailureReason, detail: str | None
) -> MissionResult:
    detail = ctx.scrub(detail) if detail else detail
    await close_phase(state, ctx, "failed", reason)
    result = MissionResult.from_state(state, error=reason, detail=detail)
    await ctx.events.emit(MissionFailed(reason=reason, error=detail))
    await _finish(state, ctx, snapshot_id, MissionStatus.failed, result)
    return result


async def cancelled(state: MissionState, ctx: GraphContext, snapshot_id: int | None) -> MissionResult:
    """Stopped by a cancel request: its step (and the sandboxed processes under it) is already gone."""
    if snapshot_id is not None:
        await asyncio.to_thread(ctx.store.end_step, snapshot_id, StepStatus.cancelled, "cancel requested")
    await close_phase(state, ctx, "cancelled", "cancel requested")
    result = MissionResult.from_state(state, error=FailureReason.cancelled, status=MissionStatus.cancelled)
    await ctx.events.emit(MissionCancelled(reason="cancel requested"))
    await _finish(state, ctx, None, MissionStatus.cancelled, result)
    return result


async def _finish(
    state: MissionState, ctx: GraphContext, snapshot_id: int | None, status: MissionStatus, result: MissionResult
) -> None:
    await asyncio.to_thread(
        ctx.store.finish_mission,
        state.mission_id,
        last_snapshot_id=snapshot_id,
        status=status,
        result=result_json(state, result),
    )
