"""The webhook outbox: deliveries owed, taken by one sender at a time, and their outcome."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import and_, insert, or_, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from agent_k.store.models import WebhookDeliveryRow, utcnow
from agent_k.store.repository import Store

PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
CLAIM_S = 60.0
"""A sender holds a delivery this long (its request's timeout and more): one that died frees it again."""


def owe(store: Store, mission_id: str, seq: int, event_type: str, url: str) -> None:
    """Record a delivery owed for event `seq` (once: a second call for the same event does nothing)."""
    row = {"mission_id": mission_id, "event_seq": seq, "event_type": event_type, "url": url, "status": PENDING}
    try:
        with store.engine.begin() as connection:
            connection.execute(insert(WebhookDeliveryRow).values(**row, attempts=0, created_at=utcnow()))
    except IntegrityError:
        pass


def take_due(store: Store, *, now: datetime | None = None, mission_id: str | None = None) -> list[WebhookDeliveryRow]:
    """Pending deliveries whose time has come, each taken by this sender alone until CLAIM_S from now."""
    now = now or utcnow()
    due = and_(
        col(WebhookDeliveryRow.status) == PENDING,
        or_(col(WebhookDeliveryRow.next_attempt_at).is_(None), col(WebhookDeliveryRow.next_attempt_at) <= now),
    )
    query = select(WebhookDeliveryRow).where(due).order_by(col(WebhookDeliveryRow.id)).limit(50)
    if mission_id is not None:
        query = query.where(WebhookDeliveryRow.mission_id == mission_id)
    with Session(store.engine) as session:
        candidates = list(session.exec(query))
    taken = []
    for row in candidates:  # a conditional update per row: two senders never both take one
        with store.engine.begin() as connection:
            claimed = connection.execute(
                update(WebhookDeliveryRow)
                .where(col(WebhookDeliveryRow.id) == row.id, due)
                .values(next_attempt_at=now + timedelta(seconds=CLAIM_S))
            ).rowcount
        if claimed == 1:
            taken.append(row)
    return taken


def settle(
    store: Store, delivery_id: int, *, status: str, attempts: int, error: str | None, retry_at: datetime | None
) -> None:
    values: dict[str, object] = {
        "status": status,
        "attempts": attempts,
        "last_error": error,
        "next_attempt_at": retry_at,
    }
    if status == DELIVERED:
        values["delivered_at"] = utcnow()
    with store.engine.begin() as connection:
        connection.execute(update(WebhookDeliveryRow).where(col(WebhookDeliveryRow.id) == delivery_id).values(**values))


def deliveries(store: Store, mission_id: str) -> list[WebhookDeliveryRow]:
    query = select(WebhookDeliveryRow).where(WebhookDeliveryRow.mission_id == mission_id)
    with Session(store.engine) as session:
        return list(session.exec(query.order_by(col(WebhookDeliveryRow.event_seq))))
