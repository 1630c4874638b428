"""Webhooks (docs/api.md, "Webhooks"): a real mission's approval request and ending POSTed to a receiver on
127.0.0.1 that fails at first, signed (checked here with the secret), retried with backoff and recorded; a
cancel made from outside is delivered by the next sender; a receiver that never answers is recorded as failed."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi import FastAPI, Request, Response
from pydantic import SecretStr

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission import control
from agent_k.mission.launch import LaunchError, MissionRequest, MissionSpec, launch_spec
from agent_k.mission.phases import Mode
from agent_k.mission.runner import MissionRunner
from agent_k.mission.webhooks import deliver_due
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store
from agent_k.store.webhooks import deliveries
from tests.support.api_client import free_port
from tests.support.local_server import serving

SECRET = "whsec-agentk-test-7f3a"


@dataclass
class Receiver:
    """Answers 500 to its first `failures` requests, then 204; keeps what it got."""

    failures: int = 2
    got: list[tuple[dict[str, str], bytes]] = field(default_factory=list)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/hook")
        async def hook(request: Request) -> Response:
            self.got.append((dict(request.headers), await request.body()))
            return Response(status_code=500 if len(self.got) <= self.failures else 204)

        return app


def _verified(headers: dict[str, str], body: bytes) -> dict[str, Any]:
    expected = hmac.new(SECRET.encode(), headers["x-agent-k-timestamp"].encode() + b"." + body, hashlib.sha256)
    assert hmac.compare_digest(headers["x-agent-k-signature"], f"sha256={expected.hexdigest()}")
    assert abs(time.time() - int(headers["x-agent-k-timestamp"])) < 120
    envelope: dict[str, Any] = json.loads(body)
    assert headers["x-agent-k-event"] == envelope["type"]
    return envelope


def _settings(settings: Settings, **changes: object) -> Settings:
    return settings.model_copy(update={"webhook_secret": SecretStr(SECRET), "webhook_backoff": 0.05, **changes})


def _send_until_settled(store: Store, settings: Settings, mission_id: str) -> None:
    deadline = time.monotonic() + 30
    while any(d.status == "pending" for d in deliveries(store, mission_id)):
        assert time.monotonic() < deadline, deliveries(store, mission_id)
        asyncio.run(deliver_due(store, settings))
        time.sleep(0.05)


def test_an_approval_request_and_the_ending_reach_the_receiver_signed(settings: Settings, store: Store) -> None:
    settings = _settings(settings)
    receiver = Receiver(failures=2)
    with serving(receiver.app()) as port:
        url = f"http://127.0.0.1:{port}/hook"
        spec = MissionSpec(
            mission_id="hooked",
            criteria=Criteria(competition="penguins"),
            time_budget=10,
            stop_early=True,
            require_approval=True,
            webhook_url=url,
        )
        runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir))
        runner.create(spec)
        assert asyncio.run(runner.run("hooked")).status == "awaiting_approval"
        (owed,) = deliveries(store, "hooked")
        assert (owed.event_type, owed.status, owed.attempts) == ("approval.requested", "pending", 1)
        assert owed.last_error == "HTTP 500", "the runner tried at once; the receiver failed"
        _send_until_settled(store, settings, "hooked")  # as a worker does between missions
        (approval,) = deliveries(store, "hooked")
        assert (approval.status, approval.attempts) == ("delivered", 3) and approval.delivered_at is not None

        control.approve(store, "hooked")
        assert asyncio.run(runner.run("hooked")).success
        _, ending = deliveries(store, "hooked")
        assert (ending.event_type, ending.status, ending.attempts) == ("mission.completed", "delivered", 1)

    envelopes = [_verified(headers, body) for headers, body in receiver.got]
    assert [e["type"] for e in envelopes] == ["approval.requested"] * 3 + ["mission.completed"]
    events = {e.seq: e for e in store.events_after("hooked")}
    assert all(json.loads(events[e["seq"]].payload) == e["data"] for e in envelopes), "the stored event, as is"
    assert envelopes[-1]["data"]["private_score"] is not None
    assert len({h["x-agent-k-delivery"] for h, _ in receiver.got}) == 2, "a retry is the same delivery"
    assert all(SECRET not in headers.values() and SECRET.encode() not in body for headers, body in receiver.got)


def test_a_cancel_from_outside_is_delivered_and_a_dead_receiver_fails(settings: Settings, store: Store) -> None:
    settings = _settings(settings, webhook_attempts=3)
    receiver = Receiver(failures=0)
    with serving(receiver.app()) as port:
        runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir))
        hook = f"http://127.0.0.1:{port}/hook"
        runner.create(
            MissionSpec(mission_id="queued", criteria=Criteria(competition="wine"), webhook_url=hook), queue=True
        )
        assert control.cancel(store, "queued") == "cancelled"
        assert asyncio.run(deliver_due(store, settings)) == 1
    (cancelled,) = deliveries(store, "queued")
    assert (cancelled.event_type, cancelled.status) == ("mission.cancelled", "delivered")
    assert _verified(*receiver.got[0])["data"]["reason"] == "cancel requested"

    dead = f"http://127.0.0.1:{free_port()}/hook"
    runner.create(
        MissionSpec(mission_id="unheard", criteria=Criteria(competition="wine"), webhook_url=dead), queue=True
    )
    control.cancel(store, "unheard")
    _send_until_settled(store, settings, "unheard")
    (failed,) = deliveries(store, "unheard")
    assert (failed.status, failed.attempts) == ("failed", 3) and "ConnectError" in (failed.last_error or "")


def test_a_webhook_needs_a_secret_and_a_web_address(settings: Settings) -> None:
    request = MissionRequest(competition="penguins", mode=Mode.workflow, webhook_url="http://127.0.0.1:9/hook")
    with pytest.raises(LaunchError, match="needs AGENT_K_WEBHOOK_SECRET"):
        asyncio.run(launch_spec(request, settings))
    signed = _settings(settings)
    with pytest.raises(LaunchError, match="invalid webhook URL"):
        asyncio.run(launch_spec(request.model_copy(update={"webhook_url": "file:///etc/passwd"}), signed))
    spec = asyncio.run(launch_spec(request, signed.model_copy(update={"webhook_url": "https://example.test/h"})))
    assert spec.webhook_url == "http://127.0.0.1:9/hook", "the mission's own URL wins over the default"
