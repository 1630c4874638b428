"""One script run in a sandbox kind, for the sandbox's tests: the candidate's code, a one-row table as its data."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

from agent_k.sandbox import Job, Limits, SandboxResult, run_sandboxed


def run_script(
    tmp_path: Path, code: str, sandbox: str, *, outputs: tuple[str, ...] = (), **limits: object
) -> tuple[SandboxResult, Path]:
    """(the result, the working folder the outputs came back to); `sandbox`: "bwrap", "basic" or "auto"."""
    tmp_path.mkdir(exist_ok=True)
    script, data, workdir = tmp_path / "candidate.py", tmp_path / "data", tmp_path / "work"
    script.write_text(textwrap.dedent(code))
    data.mkdir(exist_ok=True)
    (data / "train.csv").write_text("id,y\n1,2\n")
    job = Job(script=script, data=data, outputs=dict.fromkeys(outputs, 1 << 20))
    settings = {"timeout_s": 30, "sandbox": None if sandbox == "auto" else sandbox, **limits}
    return asyncio.run(run_sandboxed(job, workdir=workdir, limits=Limits(**settings))), workdir  # type: ignore[arg-type]
