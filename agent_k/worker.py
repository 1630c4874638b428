"""Workers: claim queued missions from the store and run them, one at a time, until told to stop.

Any number of workers can share a PostgreSQL store (claims use `FOR UPDATE SKIP LOCKED`); SQLite allows one.
A mission whose worker died (its lease expired) is claimed again and resumes from its last snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from agent_k.config import Settings
from agent_k.dashboard.report import report_path, write_report
from agent_k.mission import webhooks
from agent_k.mission.control import MissionError
from agent_k.mission.liveness import process_owner
from agent_k.mission.retention import collect
from agent_k.mission.runner import MissionRunner
from agent_k.ml.executors import make_evaluator
from agent_k.store.models import utcnow
from agent_k.store.overview import forget_worker, touch_worker
from agent_k.store.repository import Store

log = logging.getLogger("agent_k.worker")

HEARTBEAT_S = 5.0
"""At most; a third of the lease when that is shorter, so a live worker never looks gone."""
COLLECT_EVERY_S = 600.0
"""With AGENT_K_RETENTION set, an idle worker collects finished missions this often (and when it starts)."""


@dataclass
class Worker:
    settings: Settings
    store: Store
    poll_s: float = 1.0
    owner: str = field(default_factory=process_owner)
    _unrunnable: set[str] = field(default_factory=set)
    _collected_at: float | None = None

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
            await self._report(mission_id)
        except MissionError as exc:  # e.g. not resumable: leave it to a person (`agent-k resume`)
            log.warning("mission %s: %s", mission_id, exc)
            self._unrunnable.add(mission_id)
            await asyncio.to_thread(self.store.release_lease, mission_id, self.owner)
        finally:
            evaluator.close()
        return mission_id

    async def run_forever(self, stop: asyncio.Event) -> None:
        database = make_url(self.settings.resolved_database_url).render_as_string(hide_password=True)
        log.info(
            "worker %s on %s (home %s): waiting for queued missions, looking every %.2g s",
            self.owner,
            database,
            self.settings.home,
            self.poll_s,
        )
        heartbeat = asyncio.create_task(self._heartbeat(stop))
        deliveries: asyncio.Task[None] | None = None
        try:
            while not stop.is_set():
                if await self.run_one() is None:
                    await self._collect()
                    # Off the claiming loop: a slow receiver delays its own delivery, never the next mission.
                    if deliveries is None or deliveries.done():
                        deliveries = asyncio.create_task(self._send_webhooks())
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), self.poll_s)
        finally:
            for task in (heartbeat, deliveries):  # a delivery cut short stays owed: its claim runs out, then a retry
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            await asyncio.to_thread(forget_worker, self.store, self.owner)

    async def _report(self, mission_id: str) -> None:
        """The offline report beside the mission's files, as `agent-k run` writes it."""
        target = report_path(self.settings.missions_dir, mission_id)
        try:
            await asyncio.to_thread(write_report, self.store, mission_id, target)
        except (OSError, SQLAlchemyError) as exc:  # the mission's outcome stands without its report
            log.warning("mission %s: the report could not be written: %s", mission_id, exc)

    async def _send_webhooks(self) -> None:
        """Deliveries still owed (a cancel made from outside, a receiver that failed before), in a task beside the
        claiming loop, started when the worker is idle."""
        try:
            await webhooks.deliver_due(self.store, self.settings)
        except Exception as exc:  # a task of its own: what fails here is logged, the deliveries stay owed
            log.warning("webhooks could not be sent: %s", exc)

    async def _collect(self) -> None:
        """Retention, between missions: never while this worker runs one."""
        policy = self.settings.retention
        now = time.monotonic()
        if policy is None or (self._collected_at is not None and now - self._collected_at < COLLECT_EVERY_S):
            return
        self._collected_at = now
        try:
            collected = await asyncio.to_thread(collect, self.store, self.settings, policy)
        except (SQLAlchemyError, OSError) as exc:
            log.warning("retention could not collect finished missions: %s", exc)
            return
        if collected:
            freed = sum(c.bytes_freed for c in collected)
            log.info("retention collected %d finished missions, freed %.1f MB", len(collected), freed / 2**20)

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
