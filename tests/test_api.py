"""The mission API over real HTTP: `agent-k serve` in a child process, missions run by the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.conftest import AGENT_K, run_cli
from tests.support.api_client import read_stream, serve

pytestmark = pytest.mark.slow


@pytest.fixture
def database_url(home: Path) -> str:
    """The stream reads the events table through the same Store on either database; SQLite keeps this fast
    (the PostgreSQL paths of the service are covered by the worker tests)."""
    return f"sqlite:///{home / 'agent_k.db'}"


@pytest.fixture
def api(home: Path, database_url: str) -> Iterator[str]:
    yield from serve({"AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": database_url})


def test_follow_a_mission_through_the_approval_gate_with_many_subscribers(
    api: str, home: Path, database_url: str
) -> None:
    """`agent-k run --require-approval` stops before Submission; ten subscribers stay on the stream while it
    waits, `POST approve` lets the API's worker finish it, and every subscriber sees the same sequence."""
    env = {"AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": database_url}
    command = [AGENT_K, "run", "--competition", "wine", "--time-budget", "12", "--mission-id", "live", "--stop-early"]
    mission = subprocess.Popen(
        [*command, "--require-approval", "--json"],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while httpx.get(f"{api}/missions/live").status_code == 404:
        assert time.monotonic() < deadline and mission.poll() is None
        time.sleep(0.05)

    with ThreadPoolExecutor(10) as pool:
        followers = [pool.submit(read_stream, f"{api}/missions/live/events") for _ in range(10)]
        out, _ = mission.communicate(timeout=60)
        assert mission.returncode == 0 and json.loads(out.splitlines()[-1])["status"] == "awaiting_approval"
        waiting = httpx.get(f"{api}/missions/live").json()
        assert (waiting["status"], waiting["approval"]) == ("awaiting_approval", "pending")
        assert waiting["steps"][-1] == {
            "seq": len(waiting["steps"]),
            "node": "SubmissionNode",
            "status": "waiting",
            "error": "awaiting approval",
        }
        assert not any(f.done() for f in followers), "streams stay open while the mission waits"
        approved = httpx.post(f"{api}/missions/live/approve", json={})
        assert approved.status_code == 200 and approved.json()["status"] == "queued"
        streams = [f.result(timeout=60) for f in followers]

    first = streams[0]
    assert [int(e["id"]) for e in first] == list(range(1, len(first) + 1)), "ids run 1, 2, 3… without a gap"
    types = [e["event"] for e in first]
    assert types[0] == "mission.started" and types[-1] == "mission.completed"
    gate = types.index("approval.requested")
    assert types[gate + 1 : gate + 3] == ["approval.granted", "mission.started"]
    assert "submission.created" not in types[:gate] and "submission.created" in types[gate:]
    assert all(e["event"] == e["data"]["type"] == e["data"]["data"]["type"] for e in first)
    assert all(e["data"]["seq"] == int(e["id"]) and e["data"]["mission_id"] == "live" for e in first)
    assert all(stream == first for stream in streams), "every subscriber receives the same sequence"

    rest = read_stream(f"{api}/missions/live/events", headers={"Last-Event-ID": "7"})
    assert rest == first[7:]
    assert read_stream(f"{api}/missions/live/events?after=10") == first[10:]
    done = httpx.get(f"{api}/missions/live/events", headers={"Last-Event-ID": str(len(first))})
    assert done.status_code == 204 and done.content == b"", "ended and nothing left: EventSource stops"

    detail = httpx.get(f"{api}/missions/live").json()
    assert detail["status"] == "succeeded" and detail["result"]["private_score"] is not None
    assert [r["phase"] for r in detail["phase_history"]].count("submission") == 1
    solution = httpx.get(f"{api}/missions/live/artifacts/solution.py")
    assert solution.status_code == 200 and solution.text == Path(detail["state"]["solution_path"]).read_text()
    page = httpx.get(f"{api}/missions", params={"status": "succeeded", "limit": 1}).json()
    assert [m["id"] for m in page["items"]] == ["live"] and page["next_offset"] is None
    assert httpx.post(f"{api}/missions/live/approve", json={}).status_code == 409
    assert httpx.post(f"{api}/missions/live/cancel", json={}).status_code == 409


def test_unknown_ids_and_bad_queries(api: str) -> None:
    for path in ("/missions/nope", "/missions/nope/events", "/missions/nope/artifacts/solution.py"):
        response = httpx.get(api + path)
        assert response.status_code == 404 and "nope" in response.json()["detail"]
    for action in ("cancel", "resume", "approve", "reject"):
        response = httpx.post(f"{api}/missions/nope/{action}", json={})
        assert response.status_code == 404 and "nope" in response.json()["detail"]
    for path in ("/missions/nope/steps", "/missions/nope/steps/1"):
        assert httpx.get(api + path).status_code == 404
    assert httpx.post(f"{api}/missions/nope/fork", json={"from_phase": "evolution"}).status_code == 404
    refused = httpx.post(f"{api}/missions/nope/fork", json={"from_phase": "evolution", "set": {"budget": 3}})
    assert (
        refused.status_code == 422
        and refused.json()["detail"] == "cannot change budget: Extra inputs are not permitted"
    )
    assert httpx.get(f"{api}/missions").json()["items"] == [], "a 404 leaves nothing behind"
    assert httpx.get(f"{api}/competitions/nope").status_code == 404
    invalid = httpx.get(f"{api}/missions", params={"limit": 0, "status": "dancing"})
    assert invalid.status_code == 422
    assert {tuple(e["loc"]) for e in invalid.json()["detail"]} == {("query", "limit"), ("query", "status")}
    assert httpx.get(f"{api}/missions/x/artifacts/secrets.txt").status_code == 422
    assert httpx.get(f"{api}/readyz").json() == {"status": "ready"}

    wine = httpx.get(f"{api}/competitions/wine").json()
    assert wine["competition"]["id"] == "wine" and len(wine["leaderboard"]) >= 13
    assert "wine" in {c["id"] for c in httpx.get(f"{api}/competitions").json()}


def test_a_token_guards_everything_but_health(home: Path) -> None:
    env = {"AGENT_K_HOME": str(home), "AGENT_K_API_TOKEN": "s3cret-token"}
    for base in serve(env):
        assert httpx.get(f"{base}/healthz").status_code == 200
        assert httpx.get(f"{base}/missions").status_code == 401
        assert httpx.get(f"{base}/missions", headers={"Authorization": "Bearer wrong"}).status_code == 401
        ok = httpx.get(f"{base}/missions", headers={"Authorization": "Bearer s3cret-token"})
        assert ok.status_code == 200 and "s3cret" not in ok.text
        assert "s3cret" not in httpx.get(f"{base}/openapi.json").text


def test_serve_refuses_a_public_address_without_a_token(home: Path) -> None:
    result = run_cli("serve", "--host", "0.0.0.0", env={"AGENT_K_HOME": str(home)})
    assert result.returncode == 2 and "AGENT_K_API_TOKEN" in result.stderr
