"""Workers: claim queued missions from the store and run them, one at a time, until told to stop.

Any number of workers can share a PostgreSQL store (claims use `FOR UPDATE SKIP LOCKED`); SQLite allows one.
A mission whose worker died (its lease expired) is claimed again and resumes from its last snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

from sqlalchemy.exc import SQLAlchemyError

from agent_k.config import Settings
from agent_k.mission.control import MissionError
from agent_k.mission.liveness import process_owner
from agent_k.mission.runner import MissionRunner
from agent_k.ml.executors import make_evaluator
from agent_k.store.models import utcnow
from agent_k.store.overview import forget_worker, touch_worker
from agent_k.store.repository import Store

log = logging.getLogger("agent_k.worker")

HEARTBEAT_S = 5.0
"""At most; a third of the lease when that is shorter, so a live worker never looks gone."""


@dataclass
class Worker:
    settings: Settings
    store: Store
    poll_s: float = 1.0
    owner: str = field(default_factory=process_owner)
    _unrunnable: set[str] = field(default_factory=set)

    async def run_one(self) -> str | None:
        """Claim and run the next mission; its id, or None when there is nothing to run."""
        mission_id = await asyncio.to_thread(
            self.store.claim_next, self.owner, self.settings.lease_ttl, skip=self._unrunnable
        )
        if mission_id is None:
            return None
        evaluator = make_evaluator(self.settings.executor, self.settings.parallel_evaluations)
        runner = MissionRunner(self.settings, self.store, evaluator=evaluator, owner=self.owner)
        log.info("running mission %s", mission_id)
        try:
            result = await runner.run(mission_id)
            log.info("mission %s ended: %s", mission_id, result.error or result.status)
        except MissionError as exc:  # e.g. not resumable: leave it to a person (`agent-k resume`)
            log.warning("mission %s: %s", mission_id, exc)
            self._unrunnable.add(mission_id)
            await asyncio.to_thread(self.store.release_lease, mission_id, self.owner)
        finally:
            evaluator.close()
        return mission_id

    async def run_forever(self, stop: asyncio.Event) -> None:
        heartbeat = asyncio.create_task(self._heartbeat(stop))
        try:
            while not stop.is_set():
                if await self.run_one() is None:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), self.poll_s)
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
            await asyncio.to_thread(forget_worker, self.store, self.owner)

    async def _heartbeat(self, stop: asyncio.Event) -> None:
        """Its sign of life for `/metrics`, also while a mission runs."""
        started, ttl = utcnow(), self.settings.lease_ttl
        while not stop.is_set():
            try:
                await asyncio.to_thread(touch_worker, self.store, self.owner, started, ttl)
            except SQLAlchemyError as exc:  # the metrics may miss it for a while; the missions go on
                log.warning("cannot record the worker's sign of life: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), min(HEARTBEAT_S, ttl / 3))
