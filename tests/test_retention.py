"""Retention (docs/architecture.md, "Retention"): `agent-k gc` on a home of 20 finished missions (the run's shared
real one, copied whole 20 times), then every one of them opened through a real `agent-k serve` (two through
`agent-k missions show` too); forks made before and after the collection still run; a worker with
AGENT_K_RETENTION collects by itself."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import update
from sqlmodel import col

from agent_k.config import Settings
from agent_k.mission.fork import fork_mission
from agent_k.mission.phases import Phase
from agent_k.mission.runner import MissionRunner
from agent_k.platforms.local import LocalPlatform
from agent_k.store.models import MissionRow, utcnow
from agent_k.store.repository import Store
from tests.conftest import AGENT_K, run_cli
from tests.support.api_client import read_stream, running_api
from tests.support.finished import FinishedMission
from tests.support.homes import copy_mission

pytestmark = pytest.mark.slow
COPIES = 19
OLD = timedelta(days=8)


def _bytes(folder: Path) -> int:
    seen, total = set(), 0
    for root, _, files in os.walk(folder):
        for name in files:
            info = (Path(root) / name).lstat()
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_size
    return total


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, competition_cache: Path) -> Path:
    home = tmp_path_factory.mktemp("retention-home")
    shutil.copytree(competition_cache / "penguins", home / "competitions" / "penguins")
    return home


@pytest.fixture(scope="module")
def settings(home: Path) -> Settings:
    return Settings(home=home, database_url=f"sqlite:///{home / 'agent_k.db'}", workers=2)


@pytest.fixture(scope="module")
def store(settings: Settings) -> Iterator[Store]:
    store = Store.open(settings.resolved_database_url)
    yield store
    store.close()


def _ended_long_ago(store: Store, mission_id: str) -> None:
    with store.engine.begin() as connection:
        ended = update(MissionRow).where(col(MissionRow.id) == mission_id)
        connection.execute(ended.values(updated_at=utcnow() - OLD, collected_at=None))


def _run(settings: Settings, store: Store, mission_id: str, runner: MissionRunner | None = None) -> None:
    runner = runner or MissionRunner(settings, store, LocalPlatform(settings.competitions_dir))
    result = asyncio.run(runner.run(mission_id))
    assert result.success, result.detail


@pytest.fixture(scope="module")
def missions(settings: Settings, store: Store, finished_mission: FinishedMission) -> list[str]:
    """20 finished missions (copies of a real one: a few dozen candidates, what a real mission's folder holds),
    ended eight days ago, and one fork of the first (queued, not run yet)."""
    original = "m-penguins"
    finished_mission.copy_into(store, settings.missions_dir, original)
    names = [original]
    for n in range(COPIES):
        copy_mission(store, settings.missions_dir, original, f"{original}-{n}")
        names.append(f"{original}-{n}")
    for name in names:
        _ended_long_ago(store, name)
    fork_mission(store, settings, "m-penguins", Phase.evolution, time_budget=12, mission_id="early-fork")
    return names


def test_gc_frees_most_bytes_and_every_mission_still_opens(
    settings: Settings, store: Store, missions: list[str], home: Path
) -> None:
    recent = "m-penguins-recent"
    copy_mission(store, settings.missions_dir, "m-penguins", recent)
    store.update_mission(recent)  # ended just now: not collected
    folders = [settings.missions_dir / name for name in missions]
    sizes = {name: _bytes(settings.missions_dir / name) for name in missions}
    before = sum(sizes.values())
    steps = {name: len(store.snapshots(name)) for name in missions}
    recent_bytes = _bytes(settings.missions_dir / recent)

    env = {"AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": settings.resolved_database_url}
    done = run_cli("gc", "--keep-best", "2", "--json", env=env)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    totals, collected = lines[-1], {line["mission_id"]: line for line in lines[:-1]}
    after = sum(_bytes(f) for f in folders)

    assert set(collected) == set(missions), "every mission older than the policy, and only those"
    # What stays (the best two's files, those a blend or a kept snapshot names, the data, the snapshots) is a larger
    # share where the short mission ran fewer candidates, as on a loaded machine: 77.6% and 68.2% freed in two CI
    # runs of one code. Most of the bytes, with that slack; benchmarks/retention.py measures the share.
    assert 1 - after / before >= 0.6, f"freed {before - after} of {before} bytes"
    assert all(c["candidates_removed"] > 0 for c in collected.values()), collected
    assert totals["bytes_before"] == before
    for name in missions:  # what it says it freed counts only files no other mission links
        dropped = sizes[name] - _bytes(settings.missions_dir / name)
        if name == "m-penguins":  # the early fork links the candidates it took over
            assert collected[name]["bytes_freed"] < dropped
        else:
            assert collected[name]["bytes_freed"] == dropped
    assert (
        _bytes(settings.missions_dir / recent) == recent_bytes and len(store.snapshots(recent)) == steps["m-penguins"]
    )
    for name in missions:
        folder = settings.missions_dir / name
        kept = {p.name for p in (folder / "candidates").iterdir()}
        state = json.loads(store.get_mission(name).result or "{}")["state"]  # type: ignore[union-attr]
        assert state["evolution_state"]["best_candidate_key"] in kept, "the submitted candidate keeps its files"
        assert len(kept) < collected[name]["candidates"]
        assert (folder / "solution.py").is_file() and (folder / "submission.csv").is_file()
        kinds = [s.node_kind for s in store.snapshots(name)]
        assert set(kinds) == {"DiscoveryNode", "ResearchNode", "PrototypeNode", "EvolutionNode", "SubmissionNode"}
        assert len(kinds) < steps[name], "the intermediate generations' snapshots went"

    for name in (missions[0], missions[-1]):  # the CLI reads what the API does: two of them are enough there
        shown = run_cli("missions", "show", name, "--json", env=env)
        assert shown.returncode == 0, shown.stderr
        document = json.loads(shown.stdout)
        assert document["status"] == "succeeded" and document["result"]["private_score"] is not None
        assert document["collected_at"] is not None
    with running_api(env, "--no-worker") as api:
        for name in missions:
            detail = httpx.get(f"{api.base}/missions/{name}").json()
            assert detail["status"] == "succeeded" and detail["result"]["private_score"] is not None
            assert detail["collected_at"] is not None
            assert httpx.get(f"{api.base}/ui/missions/{name}").status_code == 200
            events = read_stream(f"{api.base}/missions/{name}/events")
            assert events[-1]["event"] == "mission.completed"
            assert httpx.get(f"{api.base}/missions/{name}/artifacts/solution.py").status_code == 200
            steps_seen = httpx.get(f"{api.base}/missions/{name}/steps").json()
            assert [s["seq"] for s in steps_seen] == [s.seq for s in store.snapshots(name)]

    again = run_cli("gc", "--keep-best", "2", "--json", env=env)
    assert json.loads(again.stdout.splitlines()[-1])["missions"] == 0, "a collected mission is not collected twice"


def test_forks_run_after_their_parent_was_collected(settings: Settings, store: Store, missions: list[str]) -> None:
    assert store.get_mission("m-penguins").collected_at is not None  # type: ignore[union-attr]
    _run(settings, store, "early-fork")  # made before the collection: it holds its own links
    fork_mission(store, settings, "m-penguins-3", Phase.evolution, time_budget=12, mission_id="late-fork")
    _run(settings, store, "late-fork")  # made from a collected mission: its phase starts were kept
    assert (settings.missions_dir / "late-fork" / "submission.csv").is_file()


def test_a_worker_with_a_retention_policy_collects_by_itself(
    settings: Settings, store: Store, missions: list[str], home: Path
) -> None:
    copy_mission(store, settings.missions_dir, "m-penguins", "m-penguins-later")
    _ended_long_ago(store, "m-penguins-later")
    env = {
        **os.environ,
        "AGENT_K_HOME": str(home),
        "AGENT_K_DATABASE_URL": settings.resolved_database_url,
        "AGENT_K_RETENTION": "best=1,days=7",
    }
    worker = subprocess.Popen([AGENT_K, "worker", "--poll", "0.2"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while store.get_mission("m-penguins-later").collected_at is None:  # type: ignore[union-attr]
            assert worker.poll() is None and time.monotonic() < deadline, "the worker did not collect"
            time.sleep(0.2)
    finally:
        worker.send_signal(signal.SIGTERM)
        _, log = worker.communicate(timeout=30)
    assert "waiting for queued missions" in log and "sqlite" in log, log
    assert "retention collected 1 finished missions" in log, log
