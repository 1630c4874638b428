"""`EventEmitter`: persist an event, then hand it to in-process subscribers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime

from agent_k.events.models import Event, EventData
from agent_k.secrets import Scrubber
from agent_k.store.repository import Store

log = logging.getLogger(__name__)

Subscriber = Callable[[Event], None]


class EventEmitter:
    """One per running mission. Sequence numbers continue from the store, so a resume never reuses one.

    The write runs in a thread, so a locked database never stalls the event loop (and with it the budget's hard
    stop and the cancel watch). Emits are serialised: each event is stored before the next one gets its seq, so
    a reader following the store never sees a later seq before an earlier one.
    """

    def __init__(
        self,
        store: Store,
        mission_id: str,
        last_seq: int,
        scrub: Scrubber | None = None,
        recorded: Subscriber | None = None,
    ) -> None:
        self.store = store
        self.mission_id = mission_id
        self.scrub = scrub or Scrubber()
        """Applied to every payload before it is stored or handed on: no secret leaves in an event."""
        self._seq = last_seq
        self._subscribers: list[Subscriber] = []
        self._recorded = recorded
        """Called in the writing thread right after each event is stored: store work that must follow an event
        (a webhook delivery owed) without blocking the event loop."""
        self._lock = asyncio.Lock()
        self._unfinished: asyncio.Task[None] | None = None
        """A write whose emitter was cancelled; it goes on in its thread, and the next emit waits for it."""

    @classmethod
    async def open(
        cls, store: Store, mission_id: str, scrub: Scrubber | None = None, recorded: Subscriber | None = None
    ) -> EventEmitter:
        return cls(store, mission_id, await asyncio.to_thread(store.last_event_seq, mission_id), scrub, recorded)

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    async def emit(self, data: EventData, phase: str | None = None) -> Event:
        raw = data.model_dump_json()
        payload = self.scrub(raw)
        if payload != raw:
            data = type(data).model_validate_json(payload)
        async with self._lock:
            await self._settle()
            event = Event(
                mission_id=self.mission_id,
                seq=self._seq + 1,
                ts=datetime.now(UTC),
                type=data.type,
                phase=phase,
                data=data,
            )
            write = asyncio.create_task(asyncio.to_thread(self._write, event, payload))
            self._seq = event.seq
            try:
                await asyncio.shield(write)
            except asyncio.CancelledError:
                self._unfinished = write
                raise
            except BaseException:
                self._seq -= 1
                raise
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:  # a broken viewer must never break the mission
                log.exception("event subscriber failed")
        return event

    def _write(self, event: Event, payload: str) -> None:
        self.store.append_event(
            self.mission_id, seq=event.seq, type=event.type, phase=event.phase, payload=payload, ts=event.ts
        )
        if self._recorded is not None:
            try:
                self._recorded(event)
            except Exception:  # the event is stored: what follows it must not unmake it
                log.exception("what follows event %s failed", event.seq)

    async def _settle(self) -> None:
        """Wait for a write left running by a cancelled emit; if it failed, its seq is free again."""
        if self._unfinished is None:
            return
        unfinished, self._unfinished = self._unfinished, None
        try:
            await unfinished
        except Exception:
            self._seq -= 1
