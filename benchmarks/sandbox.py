"""What bubblewrap adds to starting a candidate: `run_sandboxed` of a script that does nothing, under bubblewrap
and under the basic launcher, taken in turns (A B A B …) so both see the same machine, median of N starts each.

The figure is the whole start: cgroups, launcher, bwrap and its mounts, the interpreter, the copy-out of the
outputs, the cleanup.

    python benchmarks/sandbox.py [--starts 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from agent_k.ml.sandbox import Job, Limits, SandboxKind, bwrap, run_sandboxed


async def start_once(kind: SandboxKind, root: Path, n: int) -> float:
    script, data = root / "noop.py", root / "data"
    job = Job(script=script, data=data, outputs=("out.csv",))
    started = time.perf_counter()
    result = await run_sandboxed(job, workdir=root / f"{kind}-{n}", limits=Limits(timeout_s=60, sandbox=kind))
    elapsed = time.perf_counter() - started
    assert result.ok, result.failure_reason()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=50)
    args = parser.parse_args()
    problem = bwrap.problem()
    if problem:
        raise SystemExit(f"bubblewrap cannot run here: {problem}")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "noop.py").write_text("open('out.csv', 'w').write('a\\n1\\n')\n")
        (root / "data").mkdir()
        times: dict[SandboxKind, list[float]] = {"bwrap": [], "basic": []}
        for n in range(-3, args.starts):  # three warm-up pairs
            for kind in ("bwrap", "basic"):
                elapsed = asyncio.run(start_once(kind, root, n))  # type: ignore[arg-type]
                if n >= 0:
                    times[kind].append(elapsed)  # type: ignore[index]
    basic, sandboxed = statistics.median(times["basic"]), statistics.median(times["bwrap"])
    ratios = sorted(b / a for a, b in zip(times["basic"], times["bwrap"], strict=True))
    print(f"{args.starts} starts each, in turns")
    print(f"basic launcher  median {basic * 1000:6.1f} ms")
    print(f"bubblewrap      median {sandboxed * 1000:6.1f} ms")
    print(
        f"overhead        median {(sandboxed - basic) * 1000:6.1f} ms  (pairwise ratio {statistics.median(ratios):.2f})"
    )


if __name__ == "__main__":
    main()
