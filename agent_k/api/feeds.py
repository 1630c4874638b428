"""`EventFeeds`: one watcher per followed mission in this process, shared by all of its subscribers.

The watcher reads each new event from the store once and hands it to every subscriber's queue, so twenty
subscribers cost one query, not twenty. It wakes on PostgreSQL `NOTIFY` (sent in the transaction that
appends the event), or, on SQLite or while the listener reconnects, by polling: every 10 ms while events
flow, slowing to 100 ms after a quiet second.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from fastapi.concurrency import run_in_threadpool
from sqlalchemy.engine import make_url

from agent_k.store.models import EventRow
from agent_k.store.repository import EVENTS_CHANNEL, Store

log = logging.getLogger(__name__)

BATCH = 500
FAST_POLL_S = 0.01
SLOW_POLL_S = 0.1
QUIET_S = 1.0
NOTIFIED_POLL_S = 1.0
"""With LISTEN working, polling is only a safety net."""
MAX_PENDING = 256
"""Batches queued for one subscriber before it is marked lagging and re-reads from the store instead."""


@dataclass(eq=False)
class Subscription:
    """One subscriber's inbox. A subscriber that falls too far behind is told to re-read from the store."""

    queue: asyncio.Queue[list[EventRow]] = field(default_factory=lambda: asyncio.Queue(MAX_PENDING))
    lagging: bool = False

    def offer(self, rows: list[EventRow]) -> None:
        if self.lagging:
            return
        try:
            self.queue.put_nowait(rows)
        except asyncio.QueueFull:
            self.lagging = True


@dataclass(eq=False)
class _Feed:
    mission_id: str
    seq: int
    subscribers: set[Subscription] = field(default_factory=set)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


class EventFeeds:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._feeds: dict[str, _Feed] = {}
        self._listener: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()

    @property
    def subscribers(self) -> int:
        """Streams being served by this process."""
        return sum(len(feed.subscribers) for feed in self._feeds.values())

    async def start(self) -> None:
        if self.store.engine.dialect.name == "postgresql":
            self._listener = asyncio.create_task(self._listen())

    async def close(self) -> None:
        tasks = [feed.task for feed in self._feeds.values() if feed.task] + [self._listener] * bool(self._listener)
        for task in tasks:
            if task is not None:
                task.cancel()
        await asyncio.gather(*(t for t in tasks if t is not None), return_exceptions=True)
        self._feeds.clear()

    @contextlib.asynccontextmanager
    async def subscribe(self, mission_id: str) -> AsyncIterator[Subscription]:
        """Receive every event of `mission_id` appended from now on (earlier ones are in the store)."""
        feed = self._feeds.get(mission_id)
        if feed is None:
            last = await run_in_threadpool(self.store.last_event_seq, mission_id)
            feed = self._feeds.get(mission_id)  # another subscriber may have started it meanwhile
            if feed is None:
                feed = self._feeds[mission_id] = _Feed(mission_id, last)
                feed.task = asyncio.create_task(self._watch(feed))
        subscription = Subscription()
        feed.subscribers.add(subscription)
        try:
            yield subscription
        finally:
            feed.subscribers.discard(subscription)
            if not feed.subscribers and self._feeds.get(mission_id) is feed:
                del self._feeds[mission_id]
                if feed.task is not None:
                    feed.task.cancel()

    async def _watch(self, feed: _Feed) -> None:
        last_event = time.monotonic()
        while True:
            rows = await run_in_threadpool(self.store.events_after, feed.mission_id, feed.seq, BATCH)
            if rows:
                feed.seq = rows[-1].seq
                rows = list(rows)
                for subscription in list(feed.subscribers):
                    subscription.offer(rows)
                last_event = time.monotonic()
                if len(rows) == BATCH:
                    continue
            if self._listening.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(feed.wake.wait(), NOTIFIED_POLL_S)
                feed.wake.clear()
            else:
                quiet = time.monotonic() - last_event > QUIET_S
                await asyncio.sleep(SLOW_POLL_S if quiet else FAST_POLL_S)

    async def _listen(self) -> None:
        """LISTEN on the events channel, reconnecting after a failure; polling covers the gap."""
        import psycopg

        url = make_url(self.store.engine.url).set(drivername="postgresql").render_as_string(hide_password=False)
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
                    await connection.execute(f"LISTEN {EVENTS_CHANNEL}")
                    self._listening.set()
                    for feed in self._feeds.values():  # catch up on anything sent while not listening
                        feed.wake.set()
                    async for notice in connection.notifies():
                        if (notified := self._feeds.get(notice.payload)) is not None:
                            notified.wake.set()
            except (psycopg.Error, OSError) as exc:
                log.warning("event notifications unavailable, polling instead: %s", exc)
            finally:
                self._listening.clear()
            await asyncio.sleep(1.0)
