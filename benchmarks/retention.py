"""Retention: how much a home grows per mission and per candidate, and what `agent-k gc` frees of it.

Works on a copy of the home (real copies, no links), so the home measured is left as it was: every finished
mission in it is collected (`--older-than 0`), timed, and its folder measured before and after.

    python benchmarks/retention.py --home ~/.agent-k [--keep-best 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def folder_bytes(folder: Path) -> int:
    return sum((Path(root) / name).lstat().st_size for root, _, files in os.walk(folder) for name in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--keep-best", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        shutil.copytree(args.home, home, symlinks=True, ignore=shutil.ignore_patterns("competitions"))
        missions = sorted(p for p in (home / "missions").iterdir() if p.is_dir())
        per_candidate = [folder_bytes(c) for m in missions for c in (m / "candidates").glob("*") if c.is_dir()]
        before = {m.name: folder_bytes(m) for m in missions}
        env = {**os.environ, "AGENT_K_HOME": str(home)}
        env.pop("AGENT_K_DATABASE_URL", None)
        agent_k = str(Path(sys.executable).parent / "agent-k")
        started = time.perf_counter()
        done = subprocess.run(
            [agent_k, "gc", "--older-than", "0", "--keep-best", str(args.keep_best), "--json"],
            capture_output=True, text=True, env=env, check=True,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        collected = [json.loads(line) for line in done.stdout.splitlines()[:-1]]
        after = {m.name: folder_bytes(m) for m in missions}
    total_before, total_after = sum(before.values()), sum(after.values())
    report = {
        "missions": len(missions),
        "collected": len(collected),
        "candidates": len(per_candidate),
        "mission_mb_median": round(statistics.median(before.values()) / 2**20, 2),
        "candidate_kb_median": round(statistics.median(per_candidate) / 2**10, 1),
        "candidate_kb_max": round(max(per_candidate) / 2**10, 1),
        "home_mb_before": round(total_before / 2**20, 2),
        "home_mb_after": round(total_after / 2**20, 2),
        "freed_share": round(1 - total_after / total_before, 4),
        "gc_s": round(elapsed, 2),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
