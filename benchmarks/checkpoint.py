"""Checkpoint overhead per mission step, on SQLite and PostgreSQL, beside a raw SQLite commit.

One checkpoint is what the runner does between two nodes: close the previous snapshot, insert the next one
(node + full state JSON) and touch the mission row, in one transaction.

    python benchmarks/checkpoint.py [--steps 2000] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from agent_k.mission.state import BudgetLedger, MissionState
from agent_k.ml.profiling import profile
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store


def realistic_state(home: Path) -> str:
    """A mission state as it is during Evolution: competition, full research findings, history."""
    import pandas as pd

    platform = LocalPlatform(home / "competitions")
    spec = platform.ensure("penguins")
    data = home / "data"
    asyncio.run(platform.download_data("penguins", data))
    findings = profile(spec, pd.read_csv(data / "train.csv"), pd.read_csv(data / "test.csv"))
    state = MissionState(
        mission_id="bench",
        competition_id="penguins",
        selected_competition=spec,
        research_findings=findings,
        data_dir=str(data),
        budget=BudgetLedger(total_s=120),
    )
    return state.model_dump_json()


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e6, ordered[int(len(ordered) * 0.99) - 1] * 1e6


def time_each(step: Callable[[int], object], steps: int) -> list[float]:
    for i in range(min(50, steps)):  # warm up connections and statement caches
        step(-1 - i)
    samples = []
    for i in range(steps):
        started = time.perf_counter()
        step(i)
        samples.append(time.perf_counter() - started)
    return samples


def bench_store(url: str, state_json: str, steps: int) -> list[float]:
    store = Store.open(url)
    mission = f"bench-{uuid.uuid4().hex[:8]}"
    store.create_mission(mission, competition="penguins", platform="local", mode="workflow", budget_s=120, options="{}")
    previous: list[int | None] = [None]
    seq = [0]

    def step(_: int) -> None:
        seq[0] += 1
        previous[0] = store.begin_step(
            mission,
            previous_id=previous[0],
            seq=seq[0],
            node_kind="EvolutionNode",
            node_json="{}",
            state_json=state_json,
        )

    try:
        return time_each(step, steps)
    finally:
        store.close()


def bench_raw_sqlite(path: Path, state_json: str, steps: int) -> list[float]:
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("CREATE TABLE raw (id INTEGER PRIMARY KEY, seq INTEGER, state TEXT)")

    def step(i: int) -> None:
        connection.execute("INSERT INTO raw (seq, state) VALUES (?, ?)", (i, state_json))
        connection.commit()

    try:
        return time_each(step, steps)
    finally:
        connection.close()


def fresh_postgres(admin_url: str) -> tuple[str, Callable[[], None]]:
    admin = make_url(admin_url).set(drivername="postgresql+psycopg")
    name = f"agentk_bench_{uuid.uuid4().hex[:8]}"
    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with engine.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()

    return admin.set(database=name).render_as_string(hide_password=False), drop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument(
        "--postgres",
        default=os.environ.get("AGENT_K_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
        help="an admin URL; a temporary database is created and dropped ('' to skip)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        state_json = realistic_state(home)
        rows = [
            ("raw sqlite3 commit (same payload)", bench_raw_sqlite(home / "raw.db", state_json, args.steps)),
            ("checkpoint on SQLite (WAL)", bench_store(f"sqlite:///{home / 'agent_k.db'}", state_json, args.steps)),
        ]
        if args.postgres:
            url, drop = fresh_postgres(args.postgres)
            try:
                rows.append(("checkpoint on PostgreSQL", bench_store(url, state_json, args.steps)))
            finally:
                drop()
    print(f"state JSON: {len(state_json):,} bytes; {args.steps} steps each")
    print(f"{'what':38} {'p50 µs':>9} {'p99 µs':>9}")
    for name, samples in rows:
        p50, p99 = percentiles(samples)
        print(f"{name:38} {p50:9.0f} {p99:9.0f}")


if __name__ == "__main__":
    main()
