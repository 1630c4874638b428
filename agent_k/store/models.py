"""SQLModel tables. The schema itself comes from the Alembic migrations beside this module."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Column, DateTime, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


def _timestamp(nullable: bool = False, index: bool = False) -> Column:  # type: ignore[type-arg]
    return Column(DateTime(timezone=True), nullable=nullable, index=index)


class MissionRow(SQLModel, table=True):
    __tablename__ = "missions"

    id: str = Field(primary_key=True, max_length=64)
    competition: str | None = Field(default=None, max_length=128)
    platform: str = Field(max_length=32)
    status: str = Field(index=True, max_length=32)
    mode: str = Field(max_length=16)
    budget_s: float
    options: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(sa_column=_timestamp(index=True))
    updated_at: datetime = Field(sa_column=_timestamp())
    lease_owner: str | None = Field(default=None, max_length=128)
    lease_expires_at: datetime | None = Field(default=None, sa_column=_timestamp(nullable=True))
    heartbeat_at: datetime | None = Field(default=None, sa_column=_timestamp(nullable=True))
    """The last time the process running the mission said it was alive (its lease renewals; not a claim)."""
    result: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    approval: str | None = Field(default=None, max_length=16)
    """None, or the gate before Submission: `pending`, `approved` or `rejected`."""
    cancel_requested_at: datetime | None = Field(default=None, sa_column=_timestamp(nullable=True))
    """Set by a cancel while a worker holds the mission; its heartbeat sees it and stops the run."""
    tool_filter: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    """A JSON list of the agent tools an operator removed from this mission (never more than the contract has)."""
    parent_id: str | None = Field(default=None, index=True, max_length=64)
    """The mission this one was forked from (`agent-k fork`), if it was."""
    forked_from_seq: int | None = None
    """The parent's snapshot (its seq) this fork started from."""
    code_version: str | None = Field(default=None, max_length=64)
    """The agent-k version that last ran it."""
    graph_fingerprint: str | None = Field(default=None, max_length=64)
    """A digest of the graph's nodes and edges it last ran under: a resume under another graph checks it."""
    collected_at: datetime | None = Field(default=None, sa_column=_timestamp(nullable=True))
    """When retention last removed files of this mission (`agent-k gc`)."""


class SnapshotRow(SQLModel, table=True):
    __tablename__ = "snapshots"
    __table_args__ = (UniqueConstraint("mission_id", "seq"),)

    id: int | None = Field(default=None, primary_key=True)
    mission_id: str = Field(foreign_key="missions.id", index=True, max_length=64)
    seq: int
    node_kind: str = Field(max_length=64)
    node_json: str = Field(sa_column=Column(Text, nullable=False))
    state_json: str = Field(sa_column=Column(Text, nullable=False))
    status: str = Field(max_length=16)
    started_at: datetime = Field(sa_column=_timestamp())
    finished_at: datetime | None = Field(default=None, sa_column=_timestamp(nullable=True))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class EventRow(SQLModel, table=True):
    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("mission_id", "seq"),)

    id: int | None = Field(default=None, primary_key=True)
    mission_id: str = Field(foreign_key="missions.id", index=True, max_length=64)
    seq: int
    type: str = Field(max_length=64)
    phase: str | None = Field(default=None, max_length=32)
    payload: str = Field(sa_column=Column(Text, nullable=False))
    ts: datetime = Field(sa_column=_timestamp())


class CandidateRow(SQLModel, table=True):
    __tablename__ = "candidates"
    __table_args__ = (UniqueConstraint("mission_id", "key"),)

    id: int | None = Field(default=None, primary_key=True)
    mission_id: str = Field(foreign_key="missions.id", index=True, max_length=64)
    key: str = Field(max_length=64)
    generation: int
    recipe: str = Field(sa_column=Column(Text, nullable=False))
    script_path: str | None = None
    cv_mean: float | None = None
    fold_scores: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    runtime_s: float | None = None
    parents: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    status: str = Field(max_length=16)
    error_tail: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    fidelity: float = 1.0
    """The share of training rows its CV was computed on: 1.0, or less for a candidate screened out on a sample."""
    log_loss: float | None = None
    """A classifier's out-of-fold log loss: which of two equal CV scores is better."""
    resplit_cv: float | None = None
    """Its CV on the final pick's second, differently seeded split of the same rows (the top few and the blend)."""
    created_at: datetime = Field(sa_column=_timestamp())


class SubmissionRow(SQLModel, table=True):
    __tablename__ = "submissions"
    __table_args__ = (UniqueConstraint("mission_id", "idempotency_key"),)

    id: int | None = Field(default=None, primary_key=True)
    mission_id: str = Field(foreign_key="missions.id", index=True, max_length=64)
    competition: str = Field(max_length=128)
    platform: str = Field(max_length=32)
    idempotency_key: str = Field(max_length=128)
    platform_submission_id: str | None = Field(default=None, max_length=128)
    status: str = Field(max_length=16)
    public_score: float | None = None
    private_score: float | None = None
    created_at: datetime = Field(sa_column=_timestamp())
    updated_at: datetime = Field(sa_column=_timestamp())


class WorkerRow(SQLModel, table=True):
    """A worker's last sign of life: it touches its row every few seconds while it runs, and removes it when it
    stops; a row not touched for a while is a worker that died."""

    __tablename__ = "workers"

    id: str = Field(primary_key=True, max_length=128)
    started_at: datetime = Field(sa_column=_timestamp())
    seen_at: datetime = Field(sa_column=_timestamp())
    expires_at: datetime | None = Field(default=None, sa_column=_timestamp(nullable=True))
    """Its last sign of life plus its lease: past this, the worker counts as gone."""


class WebhookDeliveryRow(SQLModel, table=True):
    """One terminal or approval event owed to a mission's webhook: pending until its receiver answers 2xx
    (delivered), or until it has been tried too often (failed). Written with the event's seq, so a runner that
    dies before sending leaves it for a worker."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (UniqueConstraint("mission_id", "event_seq"),)

    id: int | None = Field(default=None, primary_key=True)
    mission_id: str = Field(foreign_key="missions.id", index=True, max_length=64)
    event_seq: int
    event_type: str = Field(max_length=64)
    url: str = Field(sa_column=Column(Text, nullable=False))
    status: str = Field(index=True, max_length=16)
    attempts: int = 0
    last_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(sa_column=_timestamp())
    next_attempt_at: datetime | None = Field(default=None, sa_column=_timestamp(nullable=True))
    delivered_at: datetime | None = Field(default=None, sa_column=_timestamp(nullable=True))
