"""The store on real SQLite and PostgreSQL: migrations, leases, unique event sequence numbers."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from agent_k.store.engine import SCHEMA_REVISION, current_revision
from agent_k.store.repository import MissionExists, Store
from tests.conftest import run_cli


def _mission(store: Store, mission_id: str = "m") -> None:
    store.create_mission(
        mission_id, competition="penguins", platform="local", mode="workflow", budget_s=10, options="{}"
    )


def test_the_code_expects_the_migrations_head() -> None:
    config = Config()
    config.set_main_option("script_location", str(resources.files("agent_k.store") / "migrations"))
    assert ScriptDirectory.from_config(config).get_current_head() == SCHEMA_REVISION


def test_db_upgrade_creates_the_schema(database_url: str) -> None:
    result = run_cli("db", "upgrade")
    assert result.returncode == 0, result.stderr
    assert f"revision {SCHEMA_REVISION}" in result.stdout
    store = Store.open(database_url)
    assert current_revision(store.engine) == SCHEMA_REVISION
    store.close()


_OPEN_AT = """
import sys, time
from agent_k.store.repository import Store
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
Store.open(sys.argv[1]).close()
"""


def test_processes_starting_together_on_a_fresh_database_all_open_it(database_url: str) -> None:
    """A server and its workers often start at once; only one may migrate, the others must wait and go on."""
    start = time.time() + 3  # every child has imported and is waiting when the moment comes
    children = [
        subprocess.Popen([sys.executable, "-c", _OPEN_AT, database_url, str(start)], stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    errors = [child.communicate(timeout=120)[1].decode() for child in children]
    assert [child.returncode for child in children] == [0] * 4, "\n".join(errors)
    store = Store.open(database_url)
    assert current_revision(store.engine) == SCHEMA_REVISION
    store.close()


def test_sqlite_runs_in_wal_mode(home: Path) -> None:
    store = Store.open(f"sqlite:///{home / 'wal.db'}")
    with store.engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    store.close()


def test_mission_ids_are_unique(store: Store) -> None:
    _mission(store)
    with pytest.raises(MissionExists):
        _mission(store)


def test_event_sequence_numbers_are_unique_per_mission(store: Store) -> None:
    _mission(store)
    store.append_event("m", seq=1, type="log", phase=None, payload="{}", ts=datetime.now(UTC))
    with pytest.raises(IntegrityError):
        store.append_event("m", seq=1, type="log", phase=None, payload="{}", ts=datetime.now(UTC))
    assert store.last_event_seq("m") == 1


def test_leases_exclude_expire_and_can_be_taken_from_the_dead(store: Store) -> None:
    _mission(store)
    assert store.acquire_lease("m", "a", ttl=0.5)
    assert not store.acquire_lease("m", "b", ttl=30)
    assert store.acquire_lease("m", "b", ttl=30, steal_from="a")
    assert not store.renew_lease("m", "a", ttl=30)
    store.release_lease("m", "b")
    assert store.acquire_lease("m", "c", ttl=0.2)
    time.sleep(0.4)
    assert store.acquire_lease("m", "d", ttl=30), "an expired lease is free"


def test_a_step_closes_the_previous_one_atomically(store: Store) -> None:
    _mission(store)
    first = store.begin_step("m", previous_id=None, seq=1, node_kind="A", node_json="{}", state_json="{}")
    store.begin_step("m", previous_id=first, seq=2, node_kind="B", node_json="{}", state_json="{}")
    assert [(s.node_kind, s.status) for s in store.snapshots("m")] == [("A", "succeeded"), ("B", "running")]
    with pytest.raises(IntegrityError):
        store.begin_step("m", previous_id=None, seq=2, node_kind="C", node_json="{}", state_json="{}")
    assert [s.node_kind for s in store.snapshots("m")] == ["A", "B"]


def test_workers_claim_queued_and_abandoned_missions_oldest_first(store: Store) -> None:
    options = json.dumps({"criteria": {}, "mode": "workflow", "keep_columns": []})
    for mission_id in ("old", "new"):
        store.create_mission(
            mission_id, competition=None, platform="local", mode="workflow", budget_s=10, options=options
        )
        time.sleep(0.01)
    store.create_mission(
        "held", competition=None, platform="local", mode="workflow", budget_s=10, options=options, claimed_by="cli"
    )
    assert store.claim_next("w1", ttl=0.3) == "old"
    assert store.claim_next("w2", ttl=30) == "new"
    assert store.claim_next("w3", ttl=30) is None, "a mission held by its creator or a live worker is not claimable"
    time.sleep(0.5)
    assert store.claim_next("w3", ttl=30) == "old", "a worker that stopped renewing loses its mission"
    store.finish_mission("new", last_snapshot_id=None, status="succeeded", result="{}")
    store.release_lease("old", "w3")
    store.finish_mission("old", last_snapshot_id=None, status="failed", result="{}")
    assert store.claim_next("w4", ttl=30) is None, "ended missions are never claimed"


def test_a_live_worker_forgets_workers_gone_for_minutes(store: Store) -> None:
    from datetime import timedelta

    from sqlmodel import Session, select

    from agent_k.store.models import WorkerRow, utcnow
    from agent_k.store.overview import figures, touch_worker

    now = utcnow()
    with Session(store.engine) as session:
        for worker_id, gone in (("killed-long-ago", timedelta(hours=1)), ("killed-just-now", timedelta(seconds=40))):
            started, seen = now - timedelta(hours=2), now - gone
            session.add(
                WorkerRow(id=worker_id, started_at=started, seen_at=seen, expires_at=seen + timedelta(seconds=30))
            )
        session.commit()
    touch_worker(store, "alive", now, 30.0)
    with Session(store.engine) as session:
        remaining = {worker.id for worker in session.exec(select(WorkerRow))}
    assert remaining == {"alive", "killed-just-now"}, "a recent death stays visible a while; an old one goes"
    assert figures(store).live_workers == 1
