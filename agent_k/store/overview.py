"""What operators and the dashboard read across missions: missions by status, the queue, live workers,
candidates by status, and how long ago each running mission last said something. Read-only, one short
transaction; and the workers' sign of life, which they write.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, func, or_, update
from sqlalchemy import select as sa_select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from agent_k.store.models import CandidateRow, EventRow, MissionRow, WorkerRow, utcnow
from agent_k.store.repository import Store, as_utc
from agent_k.store.status import MissionStatus

LIVE_WORKER_S = 30.0
"""How long a worker row without an expiry of its own (written before migration 0007) counts as alive."""
DEAD_WORKER_KEPT_S = 300.0
"""How long a dead worker's row stays visible (as gone) before a live worker's heartbeat removes it."""


@dataclass(frozen=True)
class Figures:
    missions: dict[str, int]
    queued: int
    oldest_queued_age_s: float | None
    live_workers: int
    candidates: dict[str, int]
    last_event_age_s: dict[str, float]
    """Running missions only: seconds since each one's last event."""
    lease_expired_s: dict[str, float]
    """Running missions whose process died (its lease expired), waiting to be reclaimed: seconds since expiry."""


def figures(store: Store, now: datetime | None = None) -> Figures:
    now = now or utcnow()
    with Session(store.engine) as session:
        status = col(MissionRow.status)
        by_status = {str(k): int(v) for k, v in session.execute(sa_select(status, func.count()).group_by(status)).all()}
        oldest = session.execute(
            sa_select(func.min(MissionRow.created_at)).where(col(MissionRow.status) == MissionStatus.queued)
        ).scalar_one()
        legacy = and_(
            col(WorkerRow.expires_at).is_(None), col(WorkerRow.seen_at) >= now - timedelta(seconds=LIVE_WORKER_S)
        )
        workers = session.execute(
            sa_select(func.count()).select_from(WorkerRow).where(or_(col(WorkerRow.expires_at) >= now, legacy))
        ).scalar_one()
        orphans = session.execute(
            sa_select(col(MissionRow.id), col(MissionRow.lease_expires_at)).where(
                col(MissionRow.status) == MissionStatus.running, col(MissionRow.lease_expires_at) < now
            )
        ).all()
        kind = col(CandidateRow.status)
        candidates = {str(k): int(v) for k, v in session.execute(sa_select(kind, func.count()).group_by(kind)).all()}
        mission = col(EventRow.mission_id)
        last_events = session.execute(
            sa_select(mission, func.max(col(EventRow.ts)))
            .join(MissionRow, col(MissionRow.id) == mission)
            .where(col(MissionRow.status) == MissionStatus.running)
            .group_by(mission)
        ).all()
    oldest_at = as_utc(oldest)
    return Figures(
        missions=by_status,
        queued=by_status.get(MissionStatus.queued, 0),
        oldest_queued_age_s=(now - oldest_at).total_seconds() if oldest_at else None,
        live_workers=int(workers),
        candidates=candidates,
        last_event_age_s={
            str(mission): max(0.0, (now - (as_utc(ts) or now)).total_seconds()) for mission, ts in last_events
        },
        lease_expired_s={
            str(mission): max(0.0, (now - (as_utc(expired) or now)).total_seconds()) for mission, expired in orphans
        },
    )


def touch_worker(store: Store, worker_id: str, started_at: datetime, lease_ttl: float) -> None:
    """Record that the worker is alive, until `lease_ttl` from now (its row is made on the first touch), and
    forget workers gone for over DEAD_WORKER_KEPT_S (killed: they could not remove their own row)."""
    now = utcnow()
    expires = now + timedelta(seconds=lease_ttl)
    with Session(store.engine) as session:
        session.execute(
            delete(WorkerRow).where(
                col(WorkerRow.id) != worker_id,
                col(WorkerRow.seen_at) < now - timedelta(seconds=DEAD_WORKER_KEPT_S),
                or_(
                    col(WorkerRow.expires_at).is_(None),
                    col(WorkerRow.expires_at) < now - timedelta(seconds=DEAD_WORKER_KEPT_S),
                ),
            )
        )
        touched = session.execute(
            update(WorkerRow).where(col(WorkerRow.id) == worker_id).values(seen_at=now, expires_at=expires)
        )
        if touched.rowcount == 0:  # type: ignore[attr-defined]
            session.add(WorkerRow(id=worker_id, started_at=started_at, seen_at=now, expires_at=expires))
        try:
            session.commit()
        except IntegrityError:  # made meanwhile by the same worker's previous touch: it is alive either way
            session.rollback()


def forget_worker(store: Store, worker_id: str) -> None:
    with Session(store.engine) as session:
        worker = session.get(WorkerRow, worker_id)
        if worker is not None:
            session.delete(worker)
            session.commit()


def mission_overviews(store: Store, limit: int = 100) -> list[dict[str, Any]]:
    """The newest missions as the dashboard lists them: status, phase, best CV, candidates, budget used, medal."""
    rows = store.list_missions(limit=limit)
    ids = [row.id for row in rows]
    with Session(store.engine) as session:
        counted = session.execute(
            sa_select(col(CandidateRow.mission_id), func.count())
            .where(col(CandidateRow.mission_id).in_(ids))
            .group_by(col(CandidateRow.mission_id))
        ).all()
    counts = {str(k): int(v) for k, v in counted}
    overviews = []
    for row in rows:
        finished = json.loads(row.result) if row.result else None
        if finished is not None:
            state = finished.get("state") or {}
        else:
            snapshot = store.last_snapshot(row.id)
            state = json.loads(snapshot.state_json) if snapshot else {}
        result = (finished or {}).get("result") or {}
        budget = state.get("budget") or {}
        total = budget.get("total_s") or row.budget_s
        spent = sum((budget.get("spent_s") or {}).values())
        overviews.append(
            {
                "id": row.id,
                "competition": row.competition,
                "status": row.status,
                "phase": state.get("current_phase"),
                "best_cv": result.get("cv_score", (state.get("evolution_state") or {}).get("best_score")),
                "candidates": counts.get(row.id, 0),
                "budget_used": round(spent / total, 3) if total else None,
                "medal": result.get("medal"),
            }
        )
    return overviews
