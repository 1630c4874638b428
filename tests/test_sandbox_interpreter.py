"""The sandboxes start the interpreter the runner runs on, however the runner was started."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RELATIVE_RUNNER = """
import asyncio
import sys
from pathlib import Path

from agent_k.ml.sandbox import Job, Limits, run_sandboxed

script = Path("candidate.py")
script.write_text("print('ran')")
job = Job(script=script.resolve(), data=Path("data").resolve())
limits = Limits(timeout_s=30, sandbox=sys.argv[1])
result = asyncio.run(run_sandboxed(job, workdir=Path("work").resolve(), limits=limits))
print(result.ok, result.failure_reason() if not result.ok else "")
"""


def test_a_runner_started_through_a_relative_interpreter_path_runs_candidates(
    tmp_path: Path, sandbox_kind: str
) -> None:
    """`cd benchmarks && ../.venv/bin/python media.py`: `sys.executable` then holds a `..` through a folder that
    neither sandbox can reach (the basic sandbox's user may not enter it; bubblewrap does not mount it)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "runner.py").write_text(RELATIVE_RUNNER)
    interpreter = os.path.relpath(sys.executable, tmp_path)
    assert ".." in interpreter
    done = subprocess.run([interpreter, "runner.py", sandbox_kind], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stdout + done.stderr[-2000:]
