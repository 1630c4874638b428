"""Retention in the store: which finished missions are old enough to collect, and dropping their intermediate
snapshots (what is kept is `agent_k.mission.retention`'s decision)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import delete, or_, update
from sqlmodel import Session, col, select

from agent_k.store.models import MissionRow, SnapshotRow, utcnow
from agent_k.store.repository import Store
from agent_k.store.status import TERMINAL


def finished_before(store: Store, cutoff: datetime) -> list[MissionRow]:
    """Missions that ended (and that no process holds) before `cutoff` and were not collected since, oldest
    first."""
    query = (
        select(MissionRow)
        .where(
            col(MissionRow.status).in_(tuple(TERMINAL)),
            col(MissionRow.lease_owner).is_(None),
            col(MissionRow.updated_at) < cutoff,
            or_(col(MissionRow.collected_at).is_(None), col(MissionRow.collected_at) < col(MissionRow.updated_at)),
        )
        .order_by(col(MissionRow.updated_at))
    )
    with Session(store.engine) as session:
        return list(session.exec(query))


def drop_snapshots(store: Store, mission_id: str, keep_seqs: Collection[int]) -> int | None:
    """Delete the mission's snapshots but `keep_seqs` and mark it collected, while it is still ended and unheld:
    how many went, or None when it was resumed meanwhile (nothing changed)."""
    with store.engine.begin() as connection:
        still_ended = connection.execute(
            update(MissionRow)
            .where(
                col(MissionRow.id) == mission_id,
                col(MissionRow.status).in_(tuple(TERMINAL)),
                col(MissionRow.lease_owner).is_(None),
            )
            .values(collected_at=utcnow())
        ).rowcount
        if not still_ended:
            return None
        removed = connection.execute(
            delete(SnapshotRow).where(
                col(SnapshotRow.mission_id) == mission_id, col(SnapshotRow.seq).not_in(tuple(keep_seqs))
            )
        ).rowcount
    return int(removed)
