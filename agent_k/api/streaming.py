"""A mission's events as SSE, read from the persisted log: a reconnecting client loses nothing.

Each event goes out as `id: <seq>`, `event: <type>`, `data: <envelope JSON>`. The stream replays from the
requested seq, then follows new events until the mission's terminal event. FastAPI sends a `: ping` comment
whenever the stream has been idle for 15 s.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from fastapi.concurrency import run_in_threadpool
from fastapi.sse import ServerSentEvent

from agent_k.store.models import EventRow
from agent_k.store.repository import TERMINAL_STATUSES, Store

TERMINAL_EVENTS = frozenset({"mission.completed", "mission.failed", "mission.cancelled"})
POLL_S = 0.05
BATCH = 500


def _envelope(row: EventRow) -> str:
    head = json.dumps(
        {"mission_id": row.mission_id, "seq": row.seq, "ts": row.ts.isoformat(), "type": row.type, "phase": row.phase}
    )
    return f'{head[:-1]}, "data": {row.payload}}}'


async def follow(store: Store, mission_id: str, after: int) -> AsyncIterator[ServerSentEvent]:
    seq = after
    while True:
        rows = await run_in_threadpool(store.events_after, mission_id, seq, BATCH)
        for row in rows:
            seq = row.seq
            yield ServerSentEvent(raw_data=_envelope(row), event=row.type, id=str(row.seq))
            if row.type in TERMINAL_EVENTS:
                return
        if len(rows) == BATCH:
            continue
        if not rows:
            mission = await run_in_threadpool(store.get_mission, mission_id)
            if mission is None or (mission.status in TERMINAL_STATUSES and mission.lease_owner is None):
                return  # ended (its terminal event, if any, was before `after`)
        await asyncio.sleep(POLL_S)
