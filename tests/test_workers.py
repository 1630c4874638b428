"""Workers run queued missions: launched over the API, shared by two workers on PostgreSQL, and taken over
after a worker is killed with -9."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.launch import MissionSpec
from agent_k.mission.phases import Mode
from agent_k.mission.runner import MissionRunner
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store
from tests.api_client import read_stream, running_api, serve
from tests.conftest import AGENT_K, run_cli

pytestmark = pytest.mark.slow


def _queue(url: str, home: Path, missions: dict[str, str], budget: float) -> Store:
    store = Store.open(url)
    runner = MissionRunner(Settings(home=home, database_url=url), store, LocalPlatform(home / "competitions"))
    for mission_id, competition in missions.items():
        spec = MissionSpec(
            mission_id=mission_id,
            criteria=Criteria(competition=competition),
            mode=Mode.workflow,
            time_budget=budget,
            stop_early=True,  # what these tests check does not need the whole budget spent
        )
        runner.create(spec, queue=True)
    return store


def _worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("w") as out:
        return subprocess.Popen([AGENT_K, "worker", "--poll", "0.2"], env={**os.environ, **env}, stderr=out)


def _wait_for(
    store: Store, mission_ids: list[str], timeout: float, ends: tuple[str, ...] = ("succeeded", "failed")
) -> None:
    deadline = time.monotonic() + timeout
    while any((row := store.get_mission(m)) is None or row.status not in ends for m in mission_ids):
        assert time.monotonic() < deadline, {m: store.get_mission(m).status for m in mission_ids}  # type: ignore[union-attr]
        time.sleep(0.5)


@pytest.fixture
def api(home: Path) -> Iterator[str]:
    yield from serve({"AGENT_K_HOME": str(home), "AGENT_K_WORKERS": "2"})


def _processes_under(directory: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and (entry / "cwd").readlink().is_relative_to(directory):
                found.append(int(entry.name))
    return found


def _wait_status(base: str, mission_id: str, wanted: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while (mission := httpx.get(f"{base}/missions/{mission_id}").json())["status"] != wanted:
        assert time.monotonic() < deadline, mission["status"]
        time.sleep(0.2)
    return mission


def test_posted_missions_run_wait_for_approval_across_a_restart_and_cancel(home: Path) -> None:
    """On the embedded worker: a gated mission waits for approval through a kill -9 of the API, then finishes
    after `agent-k approve`; a running mission is cancelled over HTTP and its sandboxed children die with it."""
    env = {"AGENT_K_HOME": str(home), "AGENT_K_WORKERS": "2"}
    with running_api(env) as api:
        body = {"competition": "wine", "time_budget": 12, "mode": "workflow", "require_approval": True}
        body["stop_early"] = True
        created = httpx.post(f"{api.base}/missions", json=body)
        assert created.status_code == 201, created.text
        gated = created.json()
        assert gated["status"] == "queued" and gated["competition"] == "wine"
        _wait_status(api.base, gated["id"], "awaiting_approval")
        api.process.send_signal(signal.SIGKILL)
        api.process.wait(timeout=10)

    with running_api(env) as api:
        assert httpx.get(f"{api.base}/missions/{gated['id']}").json()["approval"] == "pending"
        doomed = httpx.post(f"{api.base}/missions", json={"competition": "wine", "time_budget": 60}).json()
        mission_dir = home / "missions" / doomed["id"]
        deadline = time.monotonic() + 60
        while not _processes_under(mission_dir):
            assert time.monotonic() < deadline, "no candidate ever ran"
            time.sleep(0.05)
        cancelling = httpx.post(f"{api.base}/missions/{doomed['id']}/cancel", json={})
        assert cancelling.status_code == 202 and cancelling.json()["cancel_requested_at"] is not None
        events = read_stream(f"{api.base}/missions/{doomed['id']}/events")
        assert events[-1]["event"] == "mission.cancelled"
        assert _wait_status(api.base, doomed["id"], "cancelled")["result"]["error"] == "cancelled"
        assert _processes_under(mission_dir) == [], "sandboxed children outlived the cancel"

        approved = run_cli("approve", gated["id"], env=env)
        assert approved.returncode == 0, approved.stderr
        events = read_stream(f"{api.base}/missions/{gated['id']}/events")
        assert events[-1]["event"] == "mission.completed"
        assert [e["event"] for e in events].count("submission.created") == 1
        detail = _wait_status(api.base, gated["id"], "succeeded")
        assert detail["result"]["rank"] is not None

        second = run_cli("worker", env=env, timeout=30)  # beside the embedded one, on the same SQLite file
        assert second.returncode == 2 and "SQLite allows one" in second.stderr


def test_a_bad_launch_is_refused_and_writes_nothing(api: str) -> None:
    for body in (
        {"competition": "no-such-competition"},
        {"competition": "wine", "time_budget": -1},
        {"competition": "wine", "mode": "psychic"},
        {"competition": "wine", "surprise": True},
        {"competition": "wine", "mode": "agent"},
        {"competition": "wine", "model": "anthropic:claude-sonnet-4-5"},
        {},
    ):
        response = httpx.post(f"{api}/missions", json=body)
        assert response.status_code == 422, (body, response.text)
    assert "no-such-competition" in httpx.post(f"{api}/missions", json={"competition": "no-such-competition"}).text
    assert httpx.get(f"{api}/missions").json()["items"] == []


@pytest.mark.postgres
def test_two_workers_share_six_missions_and_run_each_once(home: Path, postgres_url: str, tmp_path: Path) -> None:
    missions = {f"q{i}": c for i, c in enumerate(["wine", "penguins", "titanic", "diabetes", "wine", "penguins"])}
    # 20 s, not 10: two missions run at once here, beside the suite's other worker, and the subject is the sharing
    store = _queue(postgres_url, home, missions, budget=20)
    env = {"AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": postgres_url, "AGENT_K_WORKERS": "1"}
    workers = [_worker(env, tmp_path / f"worker{i}.log") for i in range(2)]
    try:
        _wait_for(store, list(missions), timeout=240)
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=60)

    ran = [{m for m in missions if f"running mission {m}" in (tmp_path / f"worker{i}.log").read_text()} for i in (0, 1)]
    assert ran[0].isdisjoint(ran[1]) and ran[0] | ran[1] == set(missions), ran
    assert ran[0] and ran[1], "both workers took missions"
    for mission_id in missions:
        row = store.get_mission(mission_id)
        assert row is not None
        result = json.loads(row.result or "{}")
        assert row.status == "succeeded", (mission_id, result["result"]["error"], result["result"]["detail"])
        types = [e.type for e in store.events_after(mission_id)]
        assert types.count("mission.started") == 1 and types.count("submission.created") == 1
        assert [r["phase"] for r in result["state"]["phase_history"]].count("submission") == 1
        assert all(s.status == "succeeded" for s in store.snapshots(mission_id))
    store.close()


@pytest.mark.postgres
def test_a_worker_killed_with_9_is_replaced_and_the_mission_resumes(
    home: Path, postgres_url: str, tmp_path: Path
) -> None:
    store = _queue(postgres_url, home, {"orphan": "wine"}, budget=20)
    env = {"AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": postgres_url, "AGENT_K_LEASE_TTL": "3"}
    first = _worker(env, tmp_path / "first.log")
    deadline = time.monotonic() + 60
    while "evolution.generation" not in [e.type for e in store.events_after("orphan")]:
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.1)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert store.get_mission("orphan").status == "running"  # type: ignore[union-attr]

    second = _worker(env, tmp_path / "second.log")
    try:
        _wait_for(store, ["orphan"], timeout=120)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=60)
    row = store.get_mission("orphan")
    assert row is not None and row.status == "succeeded"
    started = [json.loads(e.payload) for e in store.events_after("orphan") if e.type == "mission.started"]
    assert len(started) == 2 and started[1]["resumed_from_seq"] is not None
    assert "running mission orphan" in (tmp_path / "second.log").read_text()
    store.close()
