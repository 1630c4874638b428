"""`Store`: every read and write the missions make. One short transaction per call."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Engine, and_, func, insert, or_, text, update
from sqlalchemy import select as sa_select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from agent_k.store.engine import ensure_schema, make_engine
from agent_k.store.models import CandidateRow, EventRow, MissionRow, SnapshotRow, SubmissionRow, utcnow
from agent_k.store.status import CLAIMABLE, MissionStatus, StepStatus

EVENTS_CHANNEL = "agent_k_events"
"""PostgreSQL NOTIFY channel: every appended event sends its mission id, so streams wake at once."""


class MissionExists(Exception):
    pass


def as_utc(value: datetime | None) -> datetime | None:
    """SQLite returns naive datetimes; everything we store is UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


class Store:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str) -> Store:
        engine = make_engine(url)
        ensure_schema(engine)
        return cls(engine)

    def close(self) -> None:
        self.engine.dispose()

    def _session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    # -- missions ----------------------------------------------------------------------------------

    def create_mission(
        self,
        mission_id: str,
        *,
        competition: str | None,
        platform: str,
        mode: str,
        budget_s: float,
        options: str,
        status: MissionStatus = MissionStatus.queued,
        claimed_by: str | None = None,
        lease_ttl: float = 30.0,
    ) -> MissionRow:
        """Insert a mission. `claimed_by` holds its lease from the start, so no worker takes it first."""
        now = utcnow()
        row = MissionRow(
            id=mission_id,
            competition=competition,
            platform=platform,
            status=status,
            mode=mode,
            budget_s=budget_s,
            options=options,
            created_at=now,
            updated_at=now,
            lease_owner=claimed_by,
            lease_expires_at=now + timedelta(seconds=lease_ttl) if claimed_by else None,
        )
        try:
            with self._session() as session:
                session.add(row)
                session.commit()
        except IntegrityError as exc:
            raise MissionExists(f"mission '{mission_id}' already exists") from exc
        return row

    def get_mission(self, mission_id: str) -> MissionRow | None:
        with self._session() as session:
            return session.get(MissionRow, mission_id)

    def swap_tool_filter(self, mission_id: str, old: str | None, new: str) -> bool:
        """Replace the mission's tool filter only if it is still `old` (two operators racing: one retries)."""
        current = col(MissionRow.tool_filter)
        statement = (
            update(MissionRow)
            .where(col(MissionRow.id) == mission_id, current.is_(None) if old is None else current == old)
            .values(tool_filter=new, updated_at=utcnow())
        )
        with self.engine.begin() as connection:
            return connection.execute(statement).rowcount == 1

    def list_missions(self, *, status: str | None = None, limit: int = 50, offset: int = 0) -> list[MissionRow]:
        query = select(MissionRow).order_by(col(MissionRow.created_at).desc()).offset(offset).limit(limit)
        if status:
            query = query.where(MissionRow.status == status)
        with self._session() as session:
            return list(session.exec(query))

    def update_mission(
        self, mission_id: str, *, statuses: Collection[str] | None = None, unleased: bool = False, **values: Any
    ) -> bool:
        """Change a mission atomically, only while its status is one of `statuses` and (with `unleased`) no live
        process holds its lease. False when the condition no longer held."""
        now = utcnow()
        conditions = [col(MissionRow.id) == mission_id]
        if statuses is not None:
            conditions.append(col(MissionRow.status).in_(tuple(statuses)))
        if unleased:
            conditions.append(or_(col(MissionRow.lease_owner).is_(None), col(MissionRow.lease_expires_at) < now))
        statement = update(MissionRow).where(*conditions).values(updated_at=now, **values)
        with self.engine.begin() as connection:
            return connection.execute(statement).rowcount == 1

    def cancel_requested(self, mission_id: str) -> bool:
        query = sa_select(col(MissionRow.cancel_requested_at)).where(col(MissionRow.id) == mission_id)
        with self.engine.connect() as connection:
            return connection.execute(query).scalar() is not None

    # -- leases ------------------------------------------------------------------------------------

    def acquire_lease(self, mission_id: str, owner: str, ttl: float, *, steal_from: str | None = None) -> bool:
        """Take the mission's lease if it is free, expired, ours, or held by `steal_from` (a dead process)."""
        now = utcnow()
        free = or_(
            col(MissionRow.lease_owner).is_(None),
            col(MissionRow.lease_owner) == owner,
            col(MissionRow.lease_expires_at) < now,
        )
        if steal_from is not None:
            free = or_(free, col(MissionRow.lease_owner) == steal_from)
        statement = (
            update(MissionRow)
            .where(col(MissionRow.id) == mission_id, free)
            .values(lease_owner=owner, lease_expires_at=now + timedelta(seconds=ttl), updated_at=now)
        )
        with self.engine.begin() as connection:
            return connection.execute(statement).rowcount == 1

    def claim_next(self, owner: str, ttl: float, *, skip: Collection[str] = ()) -> str | None:
        """Take the lease of the oldest mission a worker should run: queued, or running under an expired lease
        (its process died), and not in `skip`. On PostgreSQL, `FOR UPDATE SKIP LOCKED` lets workers claim side
        by side."""
        now = utcnow()
        claimable = and_(
            col(MissionRow.status).in_(tuple(CLAIMABLE)),
            or_(col(MissionRow.lease_owner).is_(None), col(MissionRow.lease_expires_at) < now),
            col(MissionRow.id).not_in(tuple(skip)),
        )
        pick = sa_select(col(MissionRow.id)).where(claimable).order_by(col(MissionRow.created_at)).limit(1)
        if self.engine.dialect.name == "postgresql":
            pick = pick.with_for_update(skip_locked=True)
        with self.engine.begin() as connection:
            mission_id = connection.execute(pick).scalar()
            if mission_id is None:
                return None
            taken = connection.execute(
                update(MissionRow)
                .where(col(MissionRow.id) == mission_id, claimable)
                .values(lease_owner=owner, lease_expires_at=now + timedelta(seconds=ttl), updated_at=now)
            ).rowcount
        return str(mission_id) if taken == 1 else None

    def renew_lease(self, mission_id: str, owner: str, ttl: float) -> bool:
        """The running process's heartbeat: extends its lease and records that it was alive now."""
        now = utcnow()
        statement = (
            update(MissionRow)
            .where(col(MissionRow.id) == mission_id, col(MissionRow.lease_owner) == owner)
            .values(lease_expires_at=now + timedelta(seconds=ttl), updated_at=now, heartbeat_at=now)
        )
        with self.engine.begin() as connection:
            return connection.execute(statement).rowcount == 1

    def release_lease(self, mission_id: str, owner: str) -> None:
        statement = (
            update(MissionRow)
            .where(col(MissionRow.id) == mission_id, col(MissionRow.lease_owner) == owner)
            .values(lease_owner=None, lease_expires_at=None)
        )
        with self.engine.begin() as connection:
            connection.execute(statement)

    # -- snapshots ---------------------------------------------------------------------------------

    def begin_step(
        self, mission_id: str, *, previous_id: int | None, seq: int, node_kind: str, node_json: str, state_json: str
    ) -> int:
        """Close the previous step as succeeded and open this one as running, atomically."""
        now = utcnow()
        with self.engine.begin() as connection:
            if previous_id is not None:
                connection.execute(
                    update(SnapshotRow)
                    .where(col(SnapshotRow.id) == previous_id)
                    .values(status=StepStatus.succeeded, finished_at=now)
                )
            result = connection.execute(
                insert(SnapshotRow).values(
                    mission_id=mission_id,
                    seq=seq,
                    node_kind=node_kind,
                    node_json=node_json,
                    state_json=state_json,
                    status=StepStatus.running,
                    started_at=now,
                )
            )
            connection.execute(
                update(MissionRow)
                .where(col(MissionRow.id) == mission_id)
                .values(status=MissionStatus.running, updated_at=now)
            )
            return int(result.inserted_primary_key[0])  # type: ignore[index]

    def end_step(self, snapshot_id: int, status: StepStatus, error: str | None = None) -> None:
        with self.engine.begin() as connection:
            connection.execute(
                update(SnapshotRow)
                .where(col(SnapshotRow.id) == snapshot_id)
                .values(status=status, finished_at=utcnow(), error=error)
            )

    def finish_mission(
        self, mission_id: str, *, last_snapshot_id: int | None, status: MissionStatus, result: str
    ) -> None:
        now = utcnow()
        with self.engine.begin() as connection:
            if last_snapshot_id is not None:
                connection.execute(
                    update(SnapshotRow)
                    .where(col(SnapshotRow.id) == last_snapshot_id, col(SnapshotRow.status) == StepStatus.running)
                    .values(status=status, finished_at=now)
                )
            connection.execute(
                update(MissionRow)
                .where(col(MissionRow.id) == mission_id)
                .values(
                    status=status,
                    result=result,
                    updated_at=now,
                    lease_owner=None,
                    lease_expires_at=None,
                    cancel_requested_at=None,
                )
            )

    def last_snapshot(self, mission_id: str) -> SnapshotRow | None:
        query = select(SnapshotRow).where(SnapshotRow.mission_id == mission_id).order_by(col(SnapshotRow.seq).desc())
        with self._session() as session:
            return session.exec(query.limit(1)).first()

    def snapshots(self, mission_id: str) -> list[SnapshotRow]:
        query = select(SnapshotRow).where(SnapshotRow.mission_id == mission_id).order_by(col(SnapshotRow.seq))
        with self._session() as session:
            return list(session.exec(query))

    # -- events ------------------------------------------------------------------------------------

    def append_event(
        self, mission_id: str, *, seq: int, type: str, phase: str | None, payload: str, ts: datetime
    ) -> None:
        with self.engine.begin() as connection:
            connection.execute(
                insert(EventRow).values(mission_id=mission_id, seq=seq, type=type, phase=phase, payload=payload, ts=ts)
            )
            self._notify(connection, mission_id)

    def append_next_event(self, mission_id: str, *, type: str, phase: str | None, payload: str, ts: datetime) -> int:
        """Append with the next free seq: for events written while no runner holds the mission (a cancel of a
        queued mission, an approval). Two writers racing for one seq: the loser retries."""
        for _ in range(5):
            try:
                with self.engine.begin() as connection:
                    last = connection.execute(
                        sa_select(func.max(col(EventRow.seq))).where(col(EventRow.mission_id) == mission_id)
                    ).scalar()
                    seq = int(last or 0) + 1
                    connection.execute(
                        insert(EventRow).values(
                            mission_id=mission_id, seq=seq, type=type, phase=phase, payload=payload, ts=ts
                        )
                    )
                    self._notify(connection, mission_id)
                    return seq
            except IntegrityError:
                continue
        raise RuntimeError(f"could not append an event to mission '{mission_id}': its seq is contended")

    def _notify(self, connection: Connection, mission_id: str) -> None:
        if self.engine.dialect.name == "postgresql":  # delivered on commit, so a listener always finds the row
            connection.execute(
                text("SELECT pg_notify(:channel, :mission)"), {"channel": EVENTS_CHANNEL, "mission": mission_id}
            )

    def events_after(self, mission_id: str, after_seq: int = 0, limit: int | None = None) -> Sequence[EventRow]:
        query = (
            select(EventRow)
            .where(EventRow.mission_id == mission_id, col(EventRow.seq) > after_seq)
            .order_by(col(EventRow.seq))
        )
        if limit is not None:
            query = query.limit(limit)
        with self._session() as session:
            return list(session.exec(query))

    def last_event_seq(self, mission_id: str) -> int:
        query = select(func.max(EventRow.seq)).where(EventRow.mission_id == mission_id)
        with self._session() as session:
            return int(session.exec(query).one() or 0)

    # -- candidates --------------------------------------------------------------------------------

    def candidates(self, mission_id: str) -> list[CandidateRow]:
        query = select(CandidateRow).where(CandidateRow.mission_id == mission_id).order_by(col(CandidateRow.id))
        with self._session() as session:
            return list(session.exec(query))

    def save_candidate(self, row: CandidateRow) -> None:
        """Insert once; a re-run of the same recipe after a crash finds it already there."""
        try:
            with self._session() as session:
                session.add(row)
                session.commit()
        except IntegrityError:
            pass

    def set_resplit_cv(self, mission_id: str, key: str, score: float) -> None:
        """Record a candidate's CV on the final pick's second split."""
        query = select(CandidateRow).where(CandidateRow.mission_id == mission_id, CandidateRow.key == key)
        with self._session() as session:
            row = session.exec(query).one()
            row.resplit_cv = score
            session.add(row)
            session.commit()

    # -- submissions -------------------------------------------------------------------------------

    def submission_record(self, mission_id: str, key: str) -> SubmissionRow | None:
        query = select(SubmissionRow).where(
            SubmissionRow.mission_id == mission_id, SubmissionRow.idempotency_key == key
        )
        with self._session() as session:
            return session.exec(query).first()

    def record_submission_intent(self, mission_id: str, *, competition: str, platform: str, key: str) -> SubmissionRow:
        existing = self.submission_record(mission_id, key)
        if existing is not None:
            return existing
        now = utcnow()
        row = SubmissionRow(
            mission_id=mission_id,
            competition=competition,
            platform=platform,
            idempotency_key=key,
            status="intent",
            created_at=now,
            updated_at=now,
        )
        with self._session() as session:
            session.add(row)
            session.commit()
        return row

    def update_submission(self, mission_id: str, key: str, **values: Any) -> None:
        with self.engine.begin() as connection:
            connection.execute(
                update(SubmissionRow)
                .where(col(SubmissionRow.mission_id) == mission_id, col(SubmissionRow.idempotency_key) == key)
                .values(updated_at=utcnow(), **values)
            )
