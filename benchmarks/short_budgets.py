"""Short budgets on a busy fleet: N missions of B seconds queued on PostgreSQL, run by W workers beside L busy
loops (the issue's case: 30 missions of 5 s, three workers, two busy cores). How many succeed with a submission,
how many submit the training prior for lack of time, how many were stopped at the hard budget limit (and then
submitted what they had), and how far each went past its budget.

    python benchmarks/short_budgets.py --database postgresql+psycopg://postgres@127.0.0.1:5432/test \\
        [--missions 30] [--budget 5] [--workers 3] [--busy 2]

It makes (and drops) a database of its own on that server, and a home of its own with the built-in competitions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from agent_k.competition import Criteria
from agent_k.config import Settings
from agent_k.mission.launch import MissionSpec
from agent_k.mission.phases import Mode
from agent_k.mission.runner import MissionRunner
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store

COMPETITIONS = ("penguins", "wine", "titanic", "diabetes", "breast-cancer", "digits")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True, help="a PostgreSQL server's URL (a database is made there)")
    parser.add_argument("--missions", type=int, default=30)
    parser.add_argument("--budget", type=float, default=5.0)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--busy", type=int, default=2, help="busy loops beside the workers")
    args = parser.parse_args()
    admin_url = make_url(args.database)
    name = f"agentk_short_{uuid.uuid4().hex[:8]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = admin_url.set(database=name).render_as_string(hide_password=False)
    try:
        with tempfile.TemporaryDirectory() as folder:
            home = Path(folder)
            platform = LocalPlatform(home / "competitions")
            for competition in COMPETITIONS:
                platform.ensure(competition)
            store = Store.open(url)
            runner = MissionRunner(Settings(home=home, database_url=url), store, platform)
            ids = [f"short-{i}" for i in range(args.missions)]
            for i, mission_id in enumerate(ids):
                competition = COMPETITIONS[i % len(COMPETITIONS)]
                spec = MissionSpec(
                    mission_id=mission_id,
                    criteria=Criteria(competition=competition),
                    mode=Mode.workflow,
                    time_budget=args.budget,
                )
                runner.create(spec, queue=True)
            env = {**os.environ, "AGENT_K_HOME": str(home), "AGENT_K_DATABASE_URL": url, "AGENT_K_WORKERS": "1"}
            agent_k = str(Path(sys.executable).parent / "agent-k")
            busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
            workers = [
                subprocess.Popen([agent_k, "worker", "--poll", "0.2"], env=env, stderr=subprocess.DEVNULL)
                for _ in range(args.workers)
            ]
            started = time.monotonic()
            try:
                while any((row := store.get_mission(m)) is None or row.status in ("queued", "running") for m in ids):
                    time.sleep(0.5)
            finally:
                for process in busy:
                    process.kill()
                for worker in workers:
                    worker.terminate()
                    worker.wait(timeout=60)
            wall = time.monotonic() - started
            results = [json.loads(store.get_mission(m).result or "{}")["result"] for m in ids]  # type: ignore[union-attr]
            store.close()
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    succeeded = [r for r in results if r["success"]]
    submitted = [r for r in succeeded if r.get("submission_id")]
    notes = [" ".join(r.get("notes") or []) for r in succeeded]
    prior = [n for n in notes if "training prior" in n]
    stopped = [n for n in notes if "hard budget limit" in n]
    over = [r["duration_s"] / args.budget for r in results]
    errors: dict[str, int] = {}
    for r in results:
        if not r["success"]:
            errors[r["error"]] = errors.get(r["error"], 0) + 1
            print(f"{r['mission_id']} ({r['competition_id']}) failed after {r['duration_s']:.2f} s: {r['detail']}")
    print(
        f"{args.missions} missions of {args.budget:g} s, {args.workers} workers, {args.busy} busy loops: "
        f"{len(succeeded)} succeeded, {len(submitted)} with a submission ({len(prior)} the training prior, "
        f"{len(stopped)} stopped at the hard limit), failed {errors or 0}; "
        f"duration/budget median {statistics.median(over):.2f}, max {max(over):.2f}; wall {wall:.0f} s"
    )


if __name__ == "__main__":
    main()
