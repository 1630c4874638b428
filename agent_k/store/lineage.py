"""Forks in the store: a fork is created in one transaction (its row, its first snapshot, the parent's candidates
it takes over, its first event), so it exists whole or not at all."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from agent_k.store.models import CandidateRow, EventRow, MissionRow, SnapshotRow, utcnow
from agent_k.store.repository import MissionExists, Store
from agent_k.store.status import StepStatus


def create_fork(
    store: Store,
    mission: MissionRow,
    *,
    snapshot: SnapshotRow,
    candidates: Sequence[CandidateRow],
    event_type: str,
    event_payload: str,
    claimed_by: str | None,
    lease_ttl: float,
) -> None:
    """Insert `mission` with its first snapshot (seq 0, status `forked`), `candidates` (rows of the parent,
    re-keyed to the fork) and the `mission.forked` event (seq 1)."""
    now = utcnow()
    mission.created_at = mission.updated_at = now
    mission.lease_owner = claimed_by
    mission.lease_expires_at = now + timedelta(seconds=lease_ttl) if claimed_by else None
    try:
        with store.engine.begin() as connection:
            connection.execute(insert(MissionRow).values(**mission.model_dump()))
            connection.execute(
                insert(SnapshotRow).values(
                    mission_id=mission.id,
                    seq=0,
                    node_kind=snapshot.node_kind,
                    node_json=snapshot.node_json,
                    state_json=snapshot.state_json,
                    status=StepStatus.forked,
                    started_at=now,
                    finished_at=now,
                )
            )
            for row in candidates:
                values = row.model_dump(exclude={"id"})
                connection.execute(insert(CandidateRow).values(**{**values, "mission_id": mission.id}))
            connection.execute(
                insert(EventRow).values(
                    mission_id=mission.id, seq=1, type=event_type, phase=None, payload=event_payload, ts=now
                )
            )
    except IntegrityError as exc:
        raise MissionExists(f"mission '{mission.id}' already exists") from exc


def children(store: Store, mission_id: str) -> list[MissionRow]:
    """The missions forked from `mission_id`, oldest first."""
    query = select(MissionRow).where(MissionRow.parent_id == mission_id).order_by(col(MissionRow.created_at))
    with Session(store.engine) as session:
        return list(session.exec(query))
