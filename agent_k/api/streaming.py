"""A mission's events as SSE, read from the persisted log: a reconnecting client loses nothing.

Each event goes out as `id: <seq>`, `event: <type>`, `data: <envelope JSON>`. The stream replays from the
requested seq out of the store, then follows the mission's shared feed until its terminal event. FastAPI
sends a `: ping` comment whenever the stream has been idle for 15 s.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence

from fastapi.concurrency import run_in_threadpool
from fastapi.sse import ServerSentEvent

from agent_k.api.feeds import BATCH, EventFeeds
from agent_k.store.models import EventRow
from agent_k.store.repository import Store
from agent_k.store.status import TERMINAL

TERMINAL_EVENTS = frozenset({"mission.completed", "mission.failed", "mission.cancelled"})
SETTLE_S = 0.5
"""How often a stream replayed up to a terminal event looks again at a mission whose row is not ended yet."""


def _envelope(row: EventRow) -> str:
    head = json.dumps(
        {"mission_id": row.mission_id, "seq": row.seq, "ts": row.ts.isoformat(), "type": row.type, "phase": row.phase}
    )
    return f'{head[:-1]}, "data": {row.payload}}}'


class _Cursor:
    """Turns rows into SSE events exactly once each, in seq order, and notices where the log stands at an end.

    A terminal event ends the stream only while it is the last one: a mission cancelled (or failed) and then
    resumed goes on past it to its next ending."""

    def __init__(self, after: int) -> None:
        self.seq = after
        self.at_terminal = False

    def take(self, rows: Sequence[EventRow]) -> list[ServerSentEvent]:
        events = []
        for row in rows:
            if row.seq <= self.seq:
                continue
            self.seq = row.seq
            # Built without validation: the type and seq are single-line by construction, and this runs per
            # event per subscriber.
            events.append(ServerSentEvent.model_construct(raw_data=_envelope(row), event=row.type, id=str(row.seq)))
            self.at_terminal = row.type in TERMINAL_EVENTS
        return events


async def follow(feeds: EventFeeds, store: Store, mission_id: str, after: int) -> AsyncIterator[ServerSentEvent]:
    cursor = _Cursor(after)
    async with feeds.subscribe(mission_id) as subscription:  # before the replay, so no event falls between

        async def replay() -> AsyncIterator[ServerSentEvent]:
            while True:
                rows = await run_in_threadpool(store.events_after, mission_id, cursor.seq, BATCH)
                for event in cursor.take(rows):
                    yield event
                if len(rows) < BATCH:
                    return

        async for event in replay():
            yield event
        mission = await run_in_threadpool(store.get_mission, mission_id)
        if mission is None or (mission.status in TERMINAL and mission.lease_owner is None):
            # It has ended, maybe since the replay: its ending's events are written before its row, so one more
            # replay holds them all.
            async for event in replay():
                yield event
            return
        # Not ended, yet replayed up to a terminal event (`settling`): a runner is about to record that ending
        # in the row (a moment), or the mission was resumed since. The row says which, or the resumed run's
        # events come.
        settling = cursor.at_terminal
        while settling or not cursor.at_terminal:
            if subscription.lagging:
                subscription.lagging = False
                async for event in replay():
                    settling = False
                    yield event
                continue
            try:
                rows = await asyncio.wait_for(subscription.queue.get(), SETTLE_S if settling else None)
            except TimeoutError:
                mission = await run_in_threadpool(store.get_mission, mission_id)
                if mission is None or mission.status in TERMINAL:
                    async for event in replay():
                        yield event
                    return
                continue
            events = cursor.take(rows)
            settling = settling and not events
            for event in events:
                yield event
