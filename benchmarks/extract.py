"""What the zip guard costs: `safe_extract` (entry checks, counted inflation, staging) vs `ZipFile.extractall`.

The archive is a realistic competition download: a CSV of mixed numeric and text columns, deflated.

    python benchmarks/extract.py [--mb 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from agent_k.platforms.archive import safe_extract


def make_archive(folder: Path, megabytes: int) -> Path:
    rng = np.random.default_rng(0)
    csv = folder / "train.csv"
    with csv.open("w") as out:
        out.write("id,x1,x2,x3,category,target\n")
        row = 0
        while out.tell() < megabytes * 2**20:
            block = rng.random((10_000, 3))
            labels = rng.choice(["alpha", "beta", "gamma", "delta"], 10_000)
            lines = (
                f"{row + i},{a:.6f},{b:.6f},{c:.6f},{label},{int(a > b)}\n"
                for i, ((a, b, c), label) in enumerate(zip(block, labels, strict=True))
            )
            out.writelines(lines)
            row += 10_000
    archive = folder / "data.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(csv, "train.csv")
    csv.unlink()
    return archive


def timed(action: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=200, help="uncompressed size of the CSV")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        archive = make_archive(folder, args.mb)
        size = archive.stat().st_size / 2**20

        def plain() -> None:
            shutil.rmtree(folder / "plain", ignore_errors=True)
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(folder / "plain")

        def guarded() -> None:
            safe_extract(archive, folder / "guarded", max_bytes=10 * 2**30)

        results = {"ZipFile.extractall": timed(plain, args.repeat), "safe_extract": timed(guarded, args.repeat)}
    print(f"archive: {args.mb} MB CSV, {size:.0f} MB deflated; best of {args.repeat}")
    print("| extraction | best s | median s | MB/s (uncompressed) |")
    print("|---|---:|---:|---:|")
    for name, times in results.items():
        best = min(times)
        print(f"| {name} | {best:.2f} | {statistics.median(times):.2f} | {args.mb / best:.0f} |")


if __name__ == "__main__":
    main()
