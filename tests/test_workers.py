"""Workers run queued missions: launched over the API, shared by two workers on PostgreSQL, and taken over
after a worker is killed with -9."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
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
from tests.conftest import AGENT_K, run_cli
from tests.support.api_client import read_stream, running_api, serve
from tests.support.browser import Watched, chromium

pytestmark = pytest.mark.slow


def _queue(url: str, home: Path, missions: dict[str, str], budget: float, *, stop_early: bool = True) -> Store:
    store = Store.open(url)
    runner = MissionRunner(Settings(home=home, database_url=url), store, LocalPlatform(home / "competitions"))
    for mission_id, competition in missions.items():
        spec = MissionSpec(
            mission_id=mission_id,
            criteria=Criteria(competition=competition),
            mode=Mode.workflow,
            time_budget=budget,
            stop_early=stop_early,  # what most of these tests check does not need the whole budget spent
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


def _scrape(base: str) -> dict[str, dict[tuple[str, ...], float]]:
    from prometheus_client.parser import text_string_to_metric_families

    scraped: dict[str, dict[tuple[str, ...], float]] = {}
    for family in text_string_to_metric_families(httpx.get(f"{base}/metrics").text):
        for sample in family.samples:
            scraped.setdefault(sample.name, {})[tuple(sample.labels.values())] = sample.value
    return scraped


def _events(store: Store, mission_id: str, kind: str) -> list[tuple[datetime, dict[str, Any]]]:
    return [(e.ts, json.loads(e.payload)) for e in store.events_after(mission_id) if e.type == kind]


@pytest.mark.postgres
def test_a_fleet_of_three_workers_submits_once_per_mission_through_a_kill_9(
    home: Path, postgres_url: str, tmp_path: Path
) -> None:
    """Three workers share six missions on PostgreSQL (two pairs on the same competition: equal files are
    likely, and each mission still submits its own). The worker running the first mission is killed with -9 in
    its Evolution. `/metrics` drops it within its lease and shows the mission waiting to be reclaimed; another
    worker resumes it, and the time between the death and the resume is not charged to its Evolution.

    An idle worker reclaims within its 0.2 s poll, faster than a scrape on a loaded machine, so the other two are
    paused (SIGSTOP) from the kill until `/metrics` has shown the wait; their longer lease keeps them live."""
    ttl = 3.0
    missions = {f"q{i}": c for i, c in enumerate(["wine", "penguins", "titanic", "wine", "penguins", "diabetes"])}
    # The one to be killed: 60 s leave its Evolution time after the resume on cores the other five missions load
    # (45 s did not, once, on a slow machine beside the other test process).
    store = _queue(postgres_url, home, {"q0": "wine"}, budget=60, stop_early=False)
    _queue(postgres_url, home, {m: c for m, c in missions.items() if m != "q0"}, budget=10).close()
    env = {"AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": postgres_url, "AGENT_K_WORKERS": "1"}
    logs = [tmp_path / f"worker{i}.log" for i in range(3)]
    workers = [_worker({**env, "AGENT_K_LEASE_TTL": str(ttl)}, logs[0])]  # alone, it claims q0, the oldest
    survivors: list[subprocess.Popen[bytes]] = []
    try:
        deadline = time.monotonic() + 60
        while "running mission q0" not in logs[0].read_text():
            assert time.monotonic() < deadline, "the first worker never claimed q0"
            time.sleep(0.1)
        survivors = [_worker({**env, "AGENT_K_LEASE_TTL": "60"}, log) for log in logs[1:]]
        workers += survivors
        with running_api(env, "--no-worker") as api:
            deadline = time.monotonic() + 90
            while not _events(store, "q0", "evolution.generation") or _scrape(api.base)["agent_k_live_workers"][()] < 3:
                assert time.monotonic() < deadline, "q0 never reached its Evolution under three live workers"
                time.sleep(0.1)
            for survivor in survivors:
                survivor.send_signal(signal.SIGSTOP)
            workers[0].send_signal(signal.SIGKILL)
            killed_at = datetime.now(UTC)
            workers[0].wait(timeout=10)

            dropped, awaiting = None, False
            deadline = time.monotonic() + 60
            while dropped is None or not awaiting:
                assert time.monotonic() < deadline, (dropped, awaiting)
                scraped = _scrape(api.base)
                if dropped is None and scraped["agent_k_live_workers"][()] == 2:
                    dropped = (datetime.now(UTC) - killed_at).total_seconds()
                awaiting = awaiting or ("q0",) in scraped.get("agent_k_lease_expired_seconds", {})
                time.sleep(0.1)
            for survivor in survivors:
                survivor.send_signal(signal.SIGCONT)
            assert dropped <= ttl + 1.5, f"the dead worker stayed on /metrics {dropped:.1f} s, past its {ttl} s lease"
            _wait_for(store, list(missions), timeout=240)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGCONT)
                worker.send_signal(signal.SIGTERM)
                worker.wait(timeout=60)

    ran = [{m for m in missions if f"running mission {m}" in log.read_text()} for log in logs]
    assert sum(len(r) for r in ran) == len(missions) + 1, ran  # q0 twice: before the kill and after it
    created: dict[str, str] = {}
    for mission_id in missions:
        row = store.get_mission(mission_id)
        assert row is not None
        result = json.loads(row.result or "{}")
        assert row.status == "succeeded", (mission_id, result["result"]["error"], result["result"]["detail"])
        (submission,) = [data for _, data in _events(store, mission_id, "submission.created")]
        assert submission["idempotency_key"].startswith(f"{mission_id}:") and not submission["adopted"]
        created[mission_id] = submission["submission_id"]
    assert len(set(created.values())) == len(missions), "two missions shared one submission"
    platform = LocalPlatform(home / "competitions")
    on_platform = [s for c in set(missions.values()) for s in asyncio.run(platform.list_submissions(c))]
    assert sorted(s.id for s in on_platform if "AGENT-K mission" in s.description) == sorted(created.values())

    started = _events(store, "q0", "mission.started")
    assert len(started) == 2 and started[1][1]["resumed_from_seq"] is not None
    resumed_at, ended_at = started[1][0], _events(store, "q0", "mission.completed")[0][0]
    downtime = (resumed_at - killed_at).total_seconds()
    state = json.loads(store.get_mission("q0").result or "{}")["state"]  # type: ignore[union-attr]
    charged = sum(state["budget"]["spent_s"].values())
    ran_for = (ended_at - started[0][0]).total_seconds() - downtime
    assert downtime > 2 and charged <= ran_for + 1.0, (charged, ran_for, downtime)
    after = [ts for ts, _ in _events(store, "q0", "evolution.generation") if ts > resumed_at]
    assert after, "the resumed mission went straight to Submission: its Evolution lost its time"
    store.close()

    reports = [home / "missions" / mission_id / "report.html" for mission_id in missions]
    assert all(report.is_file() for report in reports), "the worker that ended each mission wrote its report"
    with chromium() as browser:  # the takeover in q0's timeline: the dead worker's segment ends before the gap
        watched = Watched(browser, offline=True)
        try:
            watched.page.goto(reports[0].as_uri())
            watched.wait("window.AgentK && window.AgentK.rendered > 0")
            evolution = "window.AgentK.state.segments.filter((s) => s.phase === 'evolution')"
            segments = watched.page.evaluate(evolution)
            assert [s["outcome"] for s in segments] == ["interrupted", "completed"], segments
            gap_s = (segments[1]["start"] - segments[0]["end"]) / 1000
            assert gap_s >= downtime - 1, f"the downtime ({downtime:.1f} s) drawn as phase time (gap {gap_s:.1f} s)"
            assert watched.errors == []
        finally:
            watched.close()


@pytest.mark.postgres
def test_short_missions_on_busy_cores_each_submit_a_valid_file(home: Path, postgres_url: str, tmp_path: Path) -> None:
    """Short missions on three workers beside a busy loop and the other test process: too little for a model in
    some, never too little for a valid submission. Each succeeds within its budget (+10%), and one that submitted
    the training prior says so. 8 s, where `benchmarks/short_budgets.py` runs 5 s: in CI the other test process
    loads the two cores too, and one 5 s mission in a run had a step overrun its hard limit there (alone, beside
    four busy loops, 5 s missions pass)."""
    missions = {f"s{i}": c for i, c in enumerate(["penguins", "wine", "titanic", "diabetes", "penguins", "wine"])}
    budget = 8
    store = _queue(postgres_url, home, missions, budget=budget)
    env = {"AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": postgres_url, "AGENT_K_WORKERS": "1"}
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])]
    workers = [_worker(env, tmp_path / f"worker{i}.log") for i in range(3)]
    try:
        _wait_for(store, list(missions), timeout=180)
    finally:
        for process in busy:
            process.kill()
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=60)
    for mission_id in missions:
        row = store.get_mission(mission_id)
        assert row is not None
        result = json.loads(row.result or "{}")["result"]
        assert row.status == "succeeded", (mission_id, result["error"], result["detail"])
        assert result["duration_s"] <= budget * 1.10 and result["public_score"] is not None
        assert all(note.startswith("submitted the training prior") for note in result["notes"]), result["notes"]
        assert [e.type for e in store.events_after(mission_id)].count("submission.scored") == 1
    store.close()
