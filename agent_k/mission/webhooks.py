"""Webhooks: a mission's endings and approval requests, POSTed to its webhook URL and signed with an HMAC.

Each such event first becomes a delivery owed in the store (the outbox), so none is lost to a crash. The runner
sends its own as the mission stops; workers send whatever is still owed between missions (cancels and
rejections made from outside, deliveries that failed). A failed attempt is tried again after 2, 4, 8… seconds
(AGENT_K_WEBHOOK_BACKOFF), up to AGENT_K_WEBHOOK_ATTEMPTS times; each outcome is recorded on the delivery.

The receiver checks `X-Agent-K-Signature: sha256=HEX`, the HMAC-SHA256 of `TIMESTAMP.BODY` under
AGENT_K_WEBHOOK_SECRET, with TIMESTAMP from `X-Agent-K-Timestamp` (docs/api.md, "Webhooks").
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta

import httpx

from agent_k.config import Settings
from agent_k.mission.webhook_address import REFUSED, AddressRefused, resolve
from agent_k.store.models import EventRow, WebhookDeliveryRow, utcnow
from agent_k.store.repository import Store
from agent_k.store.webhooks import DELIVERED, FAILED, PENDING, owe, settle, take_due

WEBHOOK_EVENTS = frozenset({"mission.completed", "mission.failed", "mission.cancelled", "approval.requested"})
MAX_BACKOFF_S = 600.0
TIMEOUT_S = 10.0
"""An attempt's whole deadline, however slowly the receiver answers."""
UNREACHABLE = "the receiver could not be reached or gave no HTTP answer"


def owe_for(store: Store, mission_id: str, seq: int, event_type: str) -> None:
    """Record the delivery event `seq` is owed, if its type is one webhooks carry and the mission has a URL."""
    if event_type not in WEBHOOK_EVENTS:
        return
    row = store.get_mission(mission_id)
    url = json.loads(row.options).get("webhook_url") if row is not None else None
    if url:
        owe(store, mission_id, seq, event_type, url)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


async def deliver_due(
    store: Store,
    settings: Settings,
    *,
    mission_id: str | None = None,
    now: datetime | None = None,
    http: httpx.AsyncClient | None = None,
) -> int:
    """Send every delivery that is due (of one mission, or all); how many were sent successfully."""
    now = now or utcnow()
    due = await asyncio.to_thread(take_due, store, now=now, mission_id=mission_id)
    if not due:
        return 0
    async with _client(http) as client:
        # All at once: the round then ends within one attempt's deadline, well inside the claim on each delivery
        # (`CLAIM_S`); one after another, a few slow receivers would outlast it and another sender would send
        # the rest again.
        sent = await asyncio.gather(*(_attempt(store, settings, client, delivery, now) for delivery in due))
    return sum(sent)


async def _attempt(
    store: Store, settings: Settings, client: httpx.AsyncClient, delivery: WebhookDeliveryRow, now: datetime
) -> bool:
    """Send one delivery and record how it went; whether the receiver took it."""
    event = await asyncio.to_thread(_event, store, delivery.mission_id, delivery.event_seq)
    error = await _post(client, settings, delivery.url, event) if event is not None else "the event is gone"
    attempts = delivery.attempts + 1
    if error is None:
        status, retry_at = DELIVERED, None
    elif attempts >= settings.webhook_attempts or event is None or error == REFUSED:  # never allowed
        status, retry_at = FAILED, None
    else:
        delay = min(MAX_BACKOFF_S, settings.webhook_backoff * 2 ** (attempts - 1))
        status, retry_at = PENDING, now + timedelta(seconds=delay)
    await asyncio.to_thread(
        settle, store, delivery.id or 0, status=status, attempts=attempts, error=error, retry_at=retry_at
    )
    return error is None


async def _post(client: httpx.AsyncClient, settings: Settings, url: str, event: EventRow) -> str | None:
    """One attempt; None when the receiver took it (2xx), else why not, in one line that never says what else
    answered (no port scanner's oracle)."""
    if settings.webhook_secret is None:
        return "AGENT_K_WEBHOOK_SECRET is not set where this was sent from: nothing is sent unsigned"
    body = json.dumps(_envelope(event), separators=(",", ":")).encode()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "agent-k-webhook",
        "X-Agent-K-Event": event.type,
        "X-Agent-K-Delivery": f"{event.mission_id}:{event.seq}",
        "X-Agent-K-Timestamp": timestamp,
        "X-Agent-K-Signature": signature(settings.webhook_secret.get_secret_value(), timestamp, body),
    }
    try:
        # httpx's timeout bounds each read, not the request: a receiver answering a byte every few seconds would
        # hold the sender for ever. This is the attempt's whole deadline: resolving, connect, headers and body.
        async with asyncio.timeout(TIMEOUT_S):
            to = await resolve(url, settings.webhook_allow)
            response = await client.post(
                to.url, content=body, headers=headers | to.headers, extensions=to.extensions, timeout=TIMEOUT_S
            )
    except AddressRefused as exc:
        return str(exc)
    except TimeoutError:
        return f"no complete answer within {TIMEOUT_S:g} s"
    except (httpx.HTTPError, httpx.InvalidURL, OSError):
        return UNREACHABLE
    return None if response.is_success else f"HTTP {response.status_code}"


def _envelope(event: EventRow) -> dict[str, object]:
    return {
        "mission_id": event.mission_id,
        "seq": event.seq,
        "ts": event.ts.isoformat(),
        "type": event.type,
        "phase": event.phase,
        "data": json.loads(event.payload),
    }


def _event(store: Store, mission_id: str, seq: int) -> EventRow | None:
    rows = store.events_after(mission_id, seq - 1, 1)
    return rows[0] if rows and rows[0].seq == seq else None


@contextlib.asynccontextmanager
async def _client(http: httpx.AsyncClient | None) -> AsyncIterator[httpx.AsyncClient]:
    """The caller's client, or one of our own for this round."""
    if http is not None:
        yield http
        return
    async with httpx.AsyncClient() as own:
        yield own
