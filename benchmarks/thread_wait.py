"""OpenMP's wait policy in a candidate's environment: a LightGBM fit on 2 threads, alone and on busy cores.

A 2-thread candidate runs when a mission runs one candidate at a time (the blend, large data). Waiting OpenMP
threads may spin or sleep: spinning wins on idle cores and loses badly when other processes want them (another
mission's candidates beside it); sleeping at once (`OMP_WAIT_POLICY=PASSIVE`) is the reverse, as waking a
sleeping thread on these virtual machines is slow and LightGBM waits many times per boosting round. This times
the same fit (40,000 rows x 10 features, 300 rounds, 2 threads) in fresh processes under each policy, alone and
beside another process doing the same fits over and over under the same policy (a second mission's blend on the
same cores). Median of `--runs` fits per cell.

    .venv/bin/python benchmarks/thread_wait.py [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator

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
POLICIES = {
    "spin briefly, GOMP_SPINCOUNT=1000 (now)": {"GOMP_SPINCOUNT": "1000"},
    "sleep at once, OMP_WAIT_POLICY=PASSIVE (before)": {"OMP_WAIT_POLICY": "PASSIVE"},
    "libgomp's default": {},
}


def environment(policy: dict[str, str]) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    return {**inherited, "OMP_NUM_THREADS": "2", **policy}


def fit_s(policy: dict[str, str]) -> float:
    command = [sys.executable, "-c", FIT]
    return float(subprocess.run(command, env=environment(policy), capture_output=True, check=True).stdout)


@contextlib.contextmanager
def fitting_beside(policy: dict[str, str]) -> Iterator[None]:
    loop = f"while True:\n    exec({FIT!r})"
    other = subprocess.Popen([sys.executable, "-c", loop], env=environment(policy), stdout=subprocess.DEVNULL)
    try:
        yield
    finally:
        other.kill()
        other.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print("| wait policy | alone s | beside another such fit s |\n|---|---:|---:|")
    for name, policy in POLICIES.items():
        alone = [fit_s(policy) for _ in range(args.runs)]
        with fitting_beside(policy):
            beside = [fit_s(policy) for _ in range(args.runs)]
        print(f"| {name} | {statistics.median(alone):.2f} | {statistics.median(beside):.2f} |")


if __name__ == "__main__":
    main()
