"""Who holds a mission, and the heartbeat that keeps holding it while a long step runs.

The heartbeat renews the lease, raises the budget warning, and watches for a cancel request from outside
(the API or `agent-k cancel`), which it turns into a cancellation of the running step. Its store calls run in
threads: a database locked by another process delays them, never the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from collections.abc import AsyncIterator, Callable

from agent_k.events.emitter import EventEmitter
from agent_k.events.models import BudgetWarning
from agent_k.mission.budget import WARNING_FRACTION, BudgetClock
from agent_k.mission.state import MissionState
from agent_k.store.repository import Store

HEARTBEAT_S = 2.0


def process_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def owner_is_dead_here(owner: str | None) -> bool:
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


@contextlib.asynccontextmanager
async def heartbeat(
    store: Store,
    owner: str,
    lease_ttl: float,
    *,
    state: MissionState,
    clock: BudgetClock,
    emitter: EventEmitter,
    on_cancel: Callable[[], None],
) -> AsyncIterator[None]:
    """Beat until the block ends, then release the lease. `on_cancel` runs once when a cancel is requested."""
    period = HEARTBEAT_S if lease_ttl > 3 * HEARTBEAT_S else lease_ttl / 3

    async def beat() -> None:
        while True:
            if await asyncio.to_thread(store.cancel_requested, state.mission_id):
                on_cancel()
                return
            await asyncio.sleep(period)
            await asyncio.to_thread(store.renew_lease, state.mission_id, owner, lease_ttl)
            await warn_budget(state, clock, emitter)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await asyncio.to_thread(store.release_lease, state.mission_id, owner)


async def warn_budget(state: MissionState, clock: BudgetClock, emitter: EventEmitter) -> None:
    phase = state.current_phase
    if phase is None or phase in state.budget.warned:
        return
    allowance = clock.allowance(phase)
    used = clock.used_in_phase(phase)
    if allowance > 0 and used >= WARNING_FRACTION * allowance:
        state.budget.warned.append(phase)
        await emitter.emit(BudgetWarning(used_s=round(used, 3), allowed_s=round(allowance, 3)), phase.value)
