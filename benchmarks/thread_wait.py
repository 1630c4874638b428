"""OpenMP's wait policy in a candidate's environment: a LightGBM fit on 2 threads, alone and beside a second one.

Candidates used to run with `OMP_WAIT_POLICY=PASSIVE` (waiting threads sleep at once). On these virtual machines
waking a sleeping thread is slow, so a fit with many short parallel regions pays for it on every boosting round.
This times the same fit (40,000 rows x 10 features, 300 rounds, 2 threads) in fresh processes under each policy:
alone (a blend, a final fit, or a large-data candidate running one at a time), and two at once on the same cores
(another mission's candidates beside it). Median of `--runs` fits per cell.

    .venv/bin/python benchmarks/thread_wait.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

FIT = """
import time
import numpy as np
from lightgbm import LGBMRegressor
rng = np.random.default_rng(0)
X = rng.normal(size=(40_000, 10))
y = X @ rng.normal(size=10) + np.sin(X[:, 0] * 3) + rng.normal(scale=0.1, size=40_000)
started = time.perf_counter()
LGBMRegressor(n_estimators=300, n_jobs=2, verbose=-1).fit(X, y)
print(time.perf_counter() - started)
"""
POLICIES = {"default (now)": {}, "PASSIVE (before)": {"OMP_WAIT_POLICY": "PASSIVE"}}


def fits(policy: dict[str, str], together: int) -> list[float]:
    """`together` fits started at once; the seconds each took inside its process."""
    inherited = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env = {**inherited, "OMP_NUM_THREADS": "2", **policy}
    command = [sys.executable, "-c", FIT]
    procs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) for _ in range(together)]
    return [float(p.communicate()[0]) for p in procs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print("| policy | alone s | two at once s (each) |\n|---|---:|---:|")
    for name, policy in POLICIES.items():
        alone = [fits(policy, 1)[0] for _ in range(args.runs)]
        paired = [statistics.median(fits(policy, 2)) for _ in range(args.runs)]
        print(f"| {name} | {statistics.median(alone):.2f} | {statistics.median(paired):.2f} |")


if __name__ == "__main__":
    main()
