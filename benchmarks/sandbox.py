"""What the sandbox's hardening adds to starting a candidate: `run_sandboxed` of a script that writes one small
output, in bubblewrap, with this checkout's code and with a baseline commit's (before the hardening), taken in
turns (A B A B …) so both see the same machine; the basic sandbox beside them for scale. Median of N starts each,
after three warm-up rounds.

Each version runs in a process of its own (a worktree of the baseline commit for the old code), which starts one
candidate whenever asked. The figure is the whole start as the runner sees it: cgroups, the launcher (as root:
staging and the drop to the sandbox user), bwrap and its mounts, the seccomp filter, the interpreter, the
copy-out of the output through the reader process, the cleanup.

    python benchmarks/sandbox.py [--starts 50] [--baseline 2820ab6]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HARDENED_SINCE = "2820ab6"
"""The last commit before the hardening (root's uid drop, /proc covered, seccomp, pipes, the reader process)."""


def serve(kind: str, root: Path) -> None:
    """The child: start one candidate per line read, answer with the seconds it took."""
    from agent_k.sandbox import Job, Limits, run_sandboxed

    script, data = root / "noop.py", root / "data"
    script.write_text("open('out.csv', 'w').write('a\\n1\\n')\n")
    data.mkdir(exist_ok=True)
    try:
        job = Job(script=script, data=data, outputs={"out.csv": 1 << 20})  # type: ignore[arg-type]
    except TypeError:
        job = None
    if job is None or not isinstance(job.outputs, dict):
        job = Job(script=script, data=data, outputs=("out.csv",))  # type: ignore[arg-type]  # the old API
    limits = Limits(timeout_s=60, sandbox=kind)  # type: ignore[arg-type]

    async def loop() -> None:
        for n, _ in enumerate(sys.stdin):
            started = time.perf_counter()
            result = await run_sandboxed(job, workdir=root / f"{kind}-{n}", limits=limits)
            elapsed = time.perf_counter() - started
            assert result.ok, result.failure_reason()
            print(f"{elapsed:.6f}", flush=True)

    asyncio.run(loop())


class Version:
    def __init__(self, name: str, kind: str, pythonpath: Path, root: Path) -> None:
        self.name, self.times = name, []
        env = {**os.environ, "PYTHONPATH": str(pythonpath)}
        (root / name).mkdir()
        command = [sys.executable, str(Path(__file__).resolve()), "--serve", kind, str(root / name)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=pythonpath
        )

    def start(self, keep: bool) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        elapsed = float(self.process.stdout.readline())
        if keep:
            self.times.append(elapsed)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=50)
    parser.add_argument("--baseline", default=HARDENED_SINCE, help="the commit to compare against")
    parser.add_argument("--serve", nargs=2, metavar=("KIND", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], Path(args.serve[1]))
        return
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        old = root / "baseline-checkout"
        checkout = ["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(old), args.baseline]
        subprocess.run(checkout, check=True)
        try:
            versions = [
                Version("hardened", "bwrap", REPO, root),
                Version("baseline", "bwrap", old, root),
                Version("basic", "basic", REPO, root),
            ]
            for n in range(-3, args.starts):
                for version in versions:
                    version.start(keep=n >= 0)
            for version in versions:
                version.close()
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old)], check=False)
    medians = {v.name: statistics.median(v.times) for v in versions}
    hardened, baseline = versions[0].times, versions[1].times
    pairs = sorted(a - b for a, b in zip(hardened, baseline, strict=True))
    ratios = sorted(a / b for a, b in zip(hardened, baseline, strict=True))
    print(f"{args.starts} starts each, in turns (runner uid {os.geteuid()})")
    for name, median in medians.items():
        print(f"{name:<10} median {median * 1000:6.1f} ms")
    print(
        f"hardening  median {statistics.median(pairs) * 1000:6.1f} ms a start "
        f"(pairwise ratio {statistics.median(ratios):.2f}; baseline {args.baseline})"
    )


if __name__ == "__main__":
    main()
