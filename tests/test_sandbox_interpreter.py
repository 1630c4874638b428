"""The sandboxes start the interpreter the runner runs on, however the runner was started and whoever may read
its environment."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agent_k.sandbox import bwrap, bwrap_problem
from tests.support.sandboxed import run_script

RELATIVE_RUNNER = """
import asyncio
import sys
from pathlib import Path

from agent_k.sandbox import Job, Limits, run_sandboxed

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


def test_an_environment_only_its_owner_reads_is_the_sandbox_users_own_in_the_basic_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A venv made by root under umask 027 is root's alone (folders 0750, files 0640). The basic sandbox binds it
    idmapped, so that its candidates, as the sandbox user, read it and cannot write it; bubblewrap, which binds it
    as it is, is refused saying which folder and what to do instead of a bare EACCES."""
    if os.geteuid() != 0:
        pytest.skip("only a root runner's candidates run as another account")
    from agent_k.sandbox.identity import sandbox_identity
    from agent_k.sandbox.policy import basic_problem

    private = tmp_path / "venv"
    (private / "lib").mkdir(parents=True)
    (private / "lib" / "module.py").write_text("ANSWER = 42\n")
    for path, mode in [(private, 0o750), (private / "lib", 0o750), (private / "lib" / "module.py", 0o640)]:
        path.chmod(mode)
    roots = bwrap.python_roots()
    monkeypatch.setattr(bwrap, "python_roots", lambda: [*roots, str(private)])
    assert basic_problem("65533") is None  # an account of its own: the verdict is kept per sandbox user
    result, _ = run_script(
        tmp_path / "run",
        f"""
        import os, sys
        sys.path.insert(0, {str(private / "lib")!r})
        import module
        print("READ", module.ANSWER, "AS", os.getuid())
        try:
            open({str(private / "lib" / "written")!r}, "w")
        except OSError as exc:
            print("WRITE", type(exc).__name__)
        """,
        "basic",
    )
    assert result.ok, result.stderr_tail
    identity = sandbox_identity(None)
    assert identity is not None and f"READ 42 AS {identity.uid}" in result.stdout_tail
    assert "WRITE OSError" in result.stdout_tail and not (private / "lib" / "written").exists()
    assert sorted(p.name for p in private.rglob("*")) == ["lib", "module.py"], "nothing was written to it"
    assert (private.stat().st_uid, stat.S_IMODE((private / "lib" / "module.py").stat().st_mode)) == (0, 0o640)
    if shutil.which("bwrap") is not None:
        problem = bwrap_problem("65532")
        assert problem is not None and f"cannot read {private} (mode 0750)" in problem
        assert f"chmod -R o+rX {private}" in problem
