"""Webhooks (docs/api.md, "Webhooks"): a real mission's approval request and ending POSTed to a receiver on
127.0.0.1 that fails at first, signed (checked here with the secret), retried with backoff and recorded; a
cancel made from outside is delivered by the next sender; a receiver that never answers is recorded as failed."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from ipaddress import ip_address, ip_network
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request, Response
from pydantic import SecretStr

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission import control, webhooks
from agent_k.mission.launch import LaunchError, MissionRequest, MissionSpec, launch_spec
from agent_k.mission.phases import Mode
from agent_k.mission.runner import MissionRunner
from agent_k.mission.webhook_address import REFUSED, _is_this_host
from agent_k.mission.webhooks import UNREACHABLE, deliver_due
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store
from agent_k.store.webhooks import deliveries
from tests.conftest import AGENT_K
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


LOOPBACK = [ip_network("127.0.0.1/32")]
"""The receivers here listen on 127.0.0.1, which webhooks reach only where an admin allows it."""


def _settings(settings: Settings, **changes: object) -> Settings:
    update = {"webhook_secret": SecretStr(SECRET), "webhook_backoff": 0.05, "webhook_allow": LOOPBACK, **changes}
    return settings.model_copy(update=update)


def _cancelled(runner: MissionRunner, store: Store, mission_id: str, hook: str) -> None:
    """A queued mission with `hook` as its webhook, cancelled from outside: its `mission.cancelled` is owed."""
    runner.create(MissionSpec(mission_id=mission_id, criteria=Criteria(competition="wine"), webhook_url=hook),
                  queue=True)  # fmt: skip
    control.cancel(store, mission_id)


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
    _cancelled(runner, store, "unheard", dead)
    _send_until_settled(store, settings, "unheard")
    (failed,) = deliveries(store, "unheard")
    assert (failed.status, failed.attempts) == ("failed", 3) and failed.last_error == UNREACHABLE


def test_a_webhook_needs_a_secret_and_a_web_address(settings: Settings) -> None:
    request = MissionRequest(competition="penguins", mode=Mode.workflow, webhook_url="http://127.0.0.1:9/hook")
    with pytest.raises(LaunchError, match="needs AGENT_K_WEBHOOK_SECRET"):
        asyncio.run(launch_spec(request, settings))
    signed = _settings(settings)  # 127.0.0.1 allowed
    for unusable in ("file:///etc/passwd", "http://0251.0376.0251.0376/", "http://xn--/"):  # octal; bad IDNA
        with pytest.raises(LaunchError, match="invalid webhook URL"):
            asyncio.run(launch_spec(request.model_copy(update={"webhook_url": unusable}), signed))
    spec = asyncio.run(launch_spec(request, signed.model_copy(update={"webhook_url": "https://example.test/h"})))
    assert spec.webhook_url == "http://127.0.0.1:9/hook", "the mission's own URL wins over the default"


@contextlib.contextmanager
def _tarpit(seconds: float = 20) -> Iterator[str]:
    """A receiver that answers one byte of its headers every 0.2 s, for `seconds`, on every connection: each read
    is quick, the answer never complete."""
    server = socket.create_server(("127.0.0.1", 0))

    def drip(connection: socket.socket) -> None:
        with contextlib.suppress(OSError), connection:
            connection.recv(65536)
            ends = time.monotonic() + seconds
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000:
                if time.monotonic() > ends:
                    break
                connection.sendall(bytes([byte]))
                time.sleep(0.2)

    def answer() -> None:
        with contextlib.suppress(OSError):
            while True:
                threading.Thread(target=drip, args=(server.accept()[0],), daemon=True).start()

    threading.Thread(target=answer, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/hook"
    finally:
        server.close()


def test_a_receiver_that_answers_a_byte_at_a_time_is_cut_off_at_the_attempts_deadline(
    settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpx's timeout bounds each read; the attempt's deadline bounds the whole request (before: the sender was
    held as long as the receiver kept dripping)."""
    monkeypatch.setattr(webhooks, "TIMEOUT_S", 1.0)
    settings = _settings(settings)
    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir))
    with _tarpit() as hook:
        _cancelled(runner, store, "dripped", hook)
        started = time.monotonic()
        assert asyncio.run(deliver_due(store, settings)) == 0
        took = time.monotonic() - started
    (attempt,) = deliveries(store, "dripped")
    assert (attempt.status, attempt.attempts) == ("pending", 1), attempt
    assert attempt.last_error == "no complete answer within 1 s" and took < 3, (attempt.last_error, took)


def test_a_round_of_slow_receivers_ends_within_one_attempts_deadline(
    settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight deliveries to dripping receivers take one deadline, not eight: a round sent one after another
    outlasted the claim on its last deliveries (`CLAIM_S`), and another sender would have sent them again."""
    monkeypatch.setattr(webhooks, "TIMEOUT_S", 1.0)
    settings = _settings(settings)
    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir))
    names = [f"slow-{n}" for n in range(8)]
    with _tarpit() as hook:
        for name in names:
            _cancelled(runner, store, name, hook)
        started = time.monotonic()
        assert asyncio.run(deliver_due(store, settings)) == 0
        took = time.monotonic() - started
    errors = {deliveries(store, name)[0].last_error for name in names}
    assert errors == {"no complete answer within 1 s"} and took < 4, (errors, took)


@pytest.mark.slow
def test_a_worker_beside_a_dripping_receiver_starts_the_next_mission_and_stops_on_sigterm(
    home: Path, tmp_path: Path
) -> None:
    """The worker's delivery to a receiver that drips its answer runs beside its claiming loop: a mission queued
    meanwhile starts within 5 s, and SIGTERM stops the worker within 2 s (before: both waited on the receiver)."""
    url = f"sqlite:///{home / 'agent_k.db'}"
    store = Store.open(url)
    runner = MissionRunner(Settings(home=home, database_url=url), store, LocalPlatform(home / "competitions"))
    env = {**os.environ, "AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": url, "AGENT_K_WEBHOOK_SECRET": SECRET,
           "AGENT_K_WEBHOOK_ALLOW": "127.0.0.1"}  # fmt: skip
    with _tarpit(seconds=120) as hook, (tmp_path / "worker.log").open("w") as log:
        _cancelled(runner, store, "dripped", hook)
        worker = subprocess.Popen([AGENT_K, "worker", "--poll", "0.2"], env=env, stderr=log)
        try:
            deadline = time.monotonic() + 60
            while deliveries(store, "dripped")[0].next_attempt_at is None:  # not yet taken by the worker
                assert time.monotonic() < deadline and worker.poll() is None, (tmp_path / "worker.log").read_text()
                time.sleep(0.1)
            runner.create(MissionSpec(mission_id="next", criteria=Criteria(competition="wine"), time_budget=4,
                                      stop_early=True), queue=True)  # fmt: skip
            queued = time.monotonic()
            while (row := store.get_mission("next")) is None or row.status == "queued":
                assert time.monotonic() - queued < 5, "the queued mission waited on the receiver"
                time.sleep(0.1)
            while (row := store.get_mission("next")) is None or row.status not in ("succeeded", "failed"):
                assert time.monotonic() - queued < 60, row
                time.sleep(0.2)
            worker.send_signal(signal.SIGTERM)
            stopping = time.monotonic()
            assert worker.wait(timeout=30) == 0
            assert time.monotonic() - stopping < 2, "SIGTERM waited on the receiver"
        finally:
            if worker.poll() is None:
                worker.kill()
    assert row.status == "succeeded", row.result
    store.close()


REFUSED_URLS = (
    "http://127.0.0.1:8000/missions/x/cancel",
    "http://localhost:8000/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/latest/meta-data/",  # 169.254.169.254 as one number
    "http://0xA9FEA9FE/",  # in hex
    "http://169.254.43518/",  # the last two parts as one
    "http://[::ffff:169.254.169.254]/",  # mapped into IPv6
    "http://[::1]:8000/hook",
    "http://10.0.0.7/hook",
    "http://192.168.1.1/hook",
    "http://100.64.0.1/hook",  # shared address space (carrier-grade NAT)
    "http://224.0.0.1/hook",
    "http://0.0.0.0:8000/hook",
)


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_a_webhook_to_an_address_inside_is_refused_when_the_mission_is_asked_for(home: Path, url: str) -> None:
    """Loopback, the metadata address in its spellings, private, shared, multicast: a one-line 4xx-style error
    before anything is stored (before: only the scheme was checked). No database is read: one backend."""
    signed = Settings(home=home, webhook_secret=SecretStr(SECRET))
    request = MissionRequest(competition="penguins", mode=Mode.workflow, webhook_url=url)
    with pytest.raises(LaunchError) as refused:
        asyncio.run(launch_spec(request, signed))
    assert str(refused.value) == REFUSED
    allowed = signed.model_copy(update={"webhook_allow": [ip_network("0.0.0.0/0"), ip_network("::/0")]})
    assert asyncio.run(launch_spec(request, allowed)).webhook_url == url, "an admin may allow any of them"


def test_a_name_that_resolves_inside_is_refused_on_delivery_and_never_reached(settings: Settings, store: Store) -> None:
    """A host name is checked where it is resolved, on delivery: a mission stored with `localhost` (made before
    the check at creation, or a name whose answer changed since) reaches no receiver, and the delivery fails at
    once, without retries."""
    settings = _settings(settings, webhook_allow=[])
    receiver = Receiver(failures=0)
    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir))
    with serving(receiver.app()) as port:
        hook = f"http://localhost:{port}/hook"
        _cancelled(runner, store, "inside", hook)
        assert asyncio.run(deliver_due(store, settings)) == 0
    (refused,) = deliveries(store, "inside")
    assert (refused.status, refused.attempts, refused.last_error) == ("failed", 1, REFUSED)
    assert receiver.got == []


def test_what_answered_a_failed_delivery_is_not_told(settings: Settings, store: Store) -> None:
    """Allowed to reach 127.0.0.1, a webhook aimed at PostgreSQL, at Redis and at a closed port fails with the same
    line each time (before: each error told them apart, a port scanner through the API)."""
    settings = _settings(settings, webhook_attempts=1)
    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir))
    targets = {"postgres": 5432, "redis": 6379, "closed": free_port()}
    for name, port in targets.items():
        _cancelled(runner, store, name, f"http://127.0.0.1:{port}/")
    asyncio.run(deliver_due(store, settings))
    errors = {name: deliveries(store, name)[0].last_error for name in targets}
    assert errors == dict.fromkeys(targets, UNREACHABLE)


def test_a_name_is_resolved_once_and_the_checked_address_is_the_one_reached(
    settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: a name that resolves to an allowed address, then to another, is reached at the first; the
    receiver still sees its own name in `Host`."""
    answers = iter(["127.0.0.1", "127.0.0.2"])
    real = socket.getaddrinfo

    def rebinding(host: object, port: object, *args: Any, **kwargs: Any) -> Any:
        return real(next(answers) if host == "hooks.example.test" else host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    settings = _settings(settings)  # 127.0.0.1 allowed, 127.0.0.2 not
    receiver = Receiver(failures=0)
    runner = MissionRunner(settings, store, LocalPlatform(settings.competitions_dir))
    with serving(receiver.app()) as port:
        hook = f"http://hooks.example.test:{port}/hook"
        _cancelled(runner, store, "rebound", hook)
        assert asyncio.run(deliver_due(store, settings)) == 1
    ((headers, _),) = receiver.got
    assert headers["host"] == f"hooks.example.test:{port}"
    assert next(answers) == "127.0.0.2", "resolved once"


def test_this_hosts_own_addresses_are_told_from_others() -> None:
    """The API's own address is among this host's, however it was bound; an address of no interface here is not."""
    own = {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
    assert all(_is_this_host(ip_address(address)) for address in own | {"127.0.0.1"})
    assert not _is_this_host(ip_address("192.0.2.1")), "TEST-NET-1: on no interface here"
