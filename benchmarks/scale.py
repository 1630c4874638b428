"""How a mission's cost grows with the data, on `synthetic-N` (24 numeric columns, three categoricals, one of
2,000 levels, 5% missing values in three columns; binary, AUC).

For each N it measures, after the competition is materialised (not timed):
- Research: reading the CSVs, profiling, writing the Parquet tables (what the Research phase does);
- one default LightGBM candidate at full fidelity (3-fold CV, out-of-fold file, final fit, submission) in the
  sandbox with 2 threads: wall time and the peak memory of all its processes (its memory cgroup's record);
- unless --no-missions, a mission of --budget seconds through the CLI: candidates evaluated (and how many of
  them on a sample), elapsed time, private AUC.

    python benchmarks/scale.py [--rows 10000 100000 300000 1000000] [--budget 300] [--no-missions]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from agent_k.ml.evaluate import CompetitionData, evaluate
from agent_k.ml.profiling import profile
from agent_k.ml.recipes import ModelFamily
from agent_k.ml.search import default_recipe
from agent_k.ml.sizing import data_mb, size_candidates
from agent_k.ml.tables import write_tables
from agent_k.platforms.local import LocalPlatform
from agent_k.sandbox import Limits


def research(data_dir: Path, spec: Any) -> tuple[dict[str, float], Any]:
    started = time.monotonic()
    train, test = pd.read_csv(data_dir / "train.csv"), pd.read_csv(data_dir / "test.csv")
    read = time.monotonic()
    findings = profile(spec, train, test)
    profiled = time.monotonic()
    assert write_tables({"train.csv": train, "test.csv": test}, data_dir) is None
    done = time.monotonic()
    timings = {"read_s": read - started, "profile_s": profiled - read, "write_s": done - profiled}
    return {**{k: round(v, 2) for k, v in timings.items()}, "research_s": round(done - started, 2)}, findings


def candidate(data_dir: Path, spec: Any, findings: Any, workdir: Path) -> dict[str, Any]:
    size = size_candidates(data_mb(data_dir), 1, cap_mb=None)
    limits = Limits(timeout_s=1800, memory_mb=size.memory_mb, threads=2)
    data = CompetitionData.load(spec, data_dir)
    result = asyncio.run(evaluate(default_recipe(ModelFamily.lightgbm), data, findings.cv, workdir, limits))
    assert result.status == "succeeded", result.error
    return {"candidate_s": round(result.runtime_s, 1), "candidate_peak_mib": result.peak_mb, "cv": result.cv_mean}


def mission(home: Path, competition: str, budget: float) -> dict[str, Any]:
    env = {**os.environ, "AGENT_K_HOME": str(home)}
    env.pop("AGENT_K_DATABASE_URL", None)
    agent_k = str(Path(sys.executable).parent / "agent-k")
    command = [agent_k, "run", "--competition", competition, "--time-budget", str(budget), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    with sqlite3.connect(home / "agent_k.db") as db:
        rows = db.execute(
            "select payload from events where mission_id = ? and type = 'candidate.evaluated'", (report["mission_id"],)
        ).fetchall()
    evaluated = [json.loads(payload) for (payload,) in rows]
    return {
        "mission_status": report["status"],
        "mission_elapsed_s": report["elapsed_s"],
        "mission_private": report["private_score"],
        "candidates": len(evaluated),
        "sampled": sum(1 for e in evaluated if e.get("fidelity", 1.0) < 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[10_000, 100_000, 300_000, 1_000_000])
    parser.add_argument("--budget", type=float, default=300.0)
    parser.add_argument("--no-missions", action="store_true")
    parser.add_argument("--home", type=Path, help="keep competitions and missions here (default: a temp dir)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp)
        platform = LocalPlatform(home / "competitions")
        for n in args.rows:
            competition = f"synthetic-{n}"
            spec = platform.ensure(competition)
            work = Path(tmp) / competition
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(platform.root / competition / "public", work / "data")
            timings, findings = research(work / "data", spec)
            row = {"rows": n, **timings, **candidate(work / "data", spec, findings, work / "candidate")}
            if not args.no_missions:
                row.update(mission(home, competition, args.budget))
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\n{'rows':>9} {'research s':>10} {'candidate s':>11} {'peak MiB':>9} {'candidates':>10} {'elapsed':>8}")
    for r in rows:
        print(
            f"{r['rows']:>9,} {r['research_s']:>10.1f} {r['candidate_s']:>11.1f} {r['candidate_peak_mib'] or 0:>9.0f} "
            f"{r.get('candidates', '-'):>10} {r.get('mission_elapsed_s', '-'):>8}"
        )


if __name__ == "__main__":
    main()
