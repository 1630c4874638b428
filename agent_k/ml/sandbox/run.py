"""Run a candidate's script: in bubblewrap where it can run, else in the basic sandbox (own process group, no
network where `unshare` allows it, a private folder). Both add rlimits, per-candidate pids and memory cgroups,
a scrubbed environment and a kill of everything the candidate started."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import IO, Literal, Protocol

from agent_k.ml.sandbox import bwrap
from agent_k.ml.sandbox.cgroups import CandidateGroups, candidate_groups
from agent_k.ml.sandbox.outputs import LOG_TAIL_BYTES, READ_TIMEOUT_S, extract, read_regular

log = logging.getLogger(__name__)

SandboxKind = Literal["bwrap", "basic"]
MAX_FILE_MB = 512
"""The default cap on one file a candidate writes (and so on one output we read back)."""
_LAUNCHER = Path(__file__).with_name("_launch.py")
OUT_OF_MEMORY_SIGNS = ("MemoryError", "std::bad_alloc", "Unable to allocate")
VIRTUAL_SLACK_MB = 4096
"""Address space beyond the memory cap, where a memory cgroup binds: thread stacks and allocator arenas
reserve address space they never touch, and the cgroup caps what is really used."""


@dataclass(frozen=True)
class Limits:
    timeout_s: float
    memory_mb: int = 4096
    """All of the candidate's processes together (a memory cgroup, where one can be made), and each one's
    address space."""
    disk_mb: int = 1024
    """All it may write, in bubblewrap (its tmpfs). The basic sandbox caps each file only (`file_size_mb`)."""
    file_size_mb: int = MAX_FILE_MB
    processes: int = 256
    """Tasks (processes and threads) the candidate may have at once: a pids cgroup where one can be
    created, else RLIMIT_NPROC (which does not bind root)."""
    threads: int = 1
    sandbox: SandboxKind | None = None
    """None: bubblewrap where it can run here, else the basic sandbox."""
    allow_unsandboxed_code: bool = False
    """Model-written code may run in the basic sandbox (the user said so); otherwise only bubblewrap runs it."""


@dataclass(frozen=True)
class Job:
    """One run of a script: `python SCRIPT --data DIR ARGS...`, writing its outputs into its working folder."""

    script: Path
    data: Path
    args: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    """Names of the files it writes (relative to its working folder) that are brought back."""


@dataclass(frozen=True)
class SandboxResult:
    returncode: int | None
    timed_out: bool
    runtime_s: float
    stdout_tail: str
    stderr_tail: str
    sandbox: SandboxKind = "basic"
    out_of_memory: bool = False
    left_out: dict[str, str] = field(default_factory=dict)
    """Outputs the sandbox would not bring back (a link, a FIFO, over the size cap), with why."""
    peak_mb: float | None = None
    """The most memory its processes held at once (where a memory cgroup records it)."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def failure_reason(self) -> str:
        """One line: why the run failed, ending with the last line the candidate wrote to stderr."""
        if self.timed_out:
            return "timed out"
        if self.out_of_memory:
            return "killed: out of memory (over its memory cap)"
        if any(sign in self.stderr_tail for sign in OUT_OF_MEMORY_SIGNS):
            return "out of memory (an allocation failed under its memory cap)"
        if self.returncode is not None and self.returncode < 0:
            return f"killed by signal {signal.Signals(-self.returncode).name}"
        last = self.stderr_tail.strip().splitlines()[-1:] or [""]
        return f"exit code {self.returncode}: {last[0]}".rstrip(": ")


class Runner(Protocol):
    """How a job is run: `run_sandboxed`, or a warm worker pool's `run` (same contract)."""

    async def __call__(self, job: Job, *, workdir: Path, limits: Limits) -> SandboxResult: ...


def resolve(kind: SandboxKind | None) -> SandboxKind:
    if kind is None:
        return "bwrap" if bwrap.problem() is None else "basic"
    return kind


@cache
def network_isolation_available() -> bool:
    """`unshare --net` (the basic sandbox's network cut) needs privileges many containers lack; probed once."""
    if not shutil.which("unshare"):
        return False
    try:
        probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if probe.returncode != 0:
        log.warning("unshare --net is not permitted here; basic-sandbox candidates run with network access")
    return probe.returncode == 0


def _environment(home: str, threads: int) -> dict[str, str]:
    """A fresh environment: nothing inherited, so no secret can leak into a candidate."""
    count = str(threads)
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.defpath]),
        "HOME": home,
        "TMPDIR": home,
        "MPLCONFIGDIR": home,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": count,
        # Waiting OpenMP threads spin briefly, then sleep: spinning long made a 2-thread LightGBM fit 10x slower
        # beside busy processes, sleeping at once 10x slower on idle cores (benchmarks/thread_wait.py).
        "GOMP_SPINCOUNT": "1000",
        "OPENBLAS_NUM_THREADS": count,
        "MKL_NUM_THREADS": count,
    }


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _tail(handle: IO[bytes]) -> str:
    """The end of a log we opened ourselves (read through our descriptor, whatever now sits at its path)."""
    handle.flush()
    handle.seek(0, os.SEEK_END)
    handle.seek(max(0, handle.tell() - LOG_TAIL_BYTES))
    return handle.read().decode(errors="replace")


def _keep_tail(handle: IO[bytes]) -> str:
    """Cut a basic-sandbox log down to its tail, as bubblewrap's are, and return that tail."""
    tail = _tail(handle)
    handle.seek(0)
    handle.truncate()
    handle.write(tail.encode())
    return tail


def _log_tail(path: Path) -> str:
    try:
        return read_regular(path, LOG_TAIL_BYTES).decode(errors="replace")
    except Exception:
        return ""


def launcher_command(
    groups: CandidateGroups, inner: list[str], *, memory_mb: int, cpu_seconds: int, file_size_mb: int, processes: int
) -> list[str]:
    """`_launch.py` joining the candidate's cgroups and setting its rlimits, then exec'ing `inner`."""
    pids_capped = any((group / "pids.max").exists() for group in groups.paths)
    address_space = memory_mb + (VIRTUAL_SLACK_MB if groups.memory is not None else 0)
    return [
        sys.executable, "-I", "-S", str(_LAUNCHER),
        "--as", str(address_space), "--cpu", str(cpu_seconds), "--fsize", str(file_size_mb),
        "--nproc", "0" if pids_capped else str(processes),
        *(arg for group in groups.paths for arg in ("--cgroup", str(group))), "--", *inner,
    ]  # fmt: skip


async def run_sandboxed(job: Job, *, workdir: Path, limits: Limits) -> SandboxResult:
    """Run `job` with `workdir` as its working folder; kill all it started on timeout or cancellation."""
    workdir.mkdir(parents=True, exist_ok=True)
    kind = resolve(limits.sandbox)
    for name in (*job.outputs, *bwrap.LOGS):
        with contextlib.suppress(FileNotFoundError):
            (workdir / name).unlink()
    if kind == "bwrap":
        inner = bwrap.command(
            [sys.executable, "solution.py", "--data", bwrap.DATA, *job.args],
            script=job.script,
            data=job.data,
            disk_bytes=limits.disk_mb * 1024 * 1024,
            outputs=job.outputs,
        )
        env = _environment(bwrap.WORK, limits.threads)
        stdout_path, stderr_path = workdir / ".outputs.tar", workdir / ".sandbox.log"
    else:
        inner = [sys.executable, str(job.script), "--data", str(job.data), *job.args]
        env = _environment(str(workdir), limits.threads)
        stdout_path, stderr_path = workdir / "stdout.log", workdir / "stderr.log"
    cpu_seconds = int(limits.timeout_s * max(1, limits.threads)) + 5
    with (
        candidate_groups(limits.processes, limits.memory_mb) as groups,
        stdout_path.open("w+b") as stdout,
        stderr_path.open("w+b") as stderr,
    ):
        launcher = launcher_command(
            groups, inner, memory_mb=limits.memory_mb, cpu_seconds=cpu_seconds,
            file_size_mb=limits.file_size_mb, processes=limits.processes,
        )  # fmt: skip
        if kind == "basic" and network_isolation_available():
            launcher = ["unshare", "--net", *launcher]
        started = time.monotonic()
        process = await asyncio.create_subprocess_exec(
            *launcher,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        timed_out = False
        try:
            await asyncio.wait_for(process.wait(), timeout=limits.timeout_s)
        except TimeoutError:
            timed_out = True
            _kill_group(process.pid)
            await process.wait()
        except BaseException:
            _kill_group(process.pid)
            raise
        finally:
            _kill_group(process.pid)  # reap grandchildren the candidate may have left behind
        runtime = round(time.monotonic() - started, 3)
        out_of_memory, peak = groups.oom_kills() > 0, groups.peak_mb()
        if kind == "basic":
            stdout_tail, stderr_tail = _keep_tail(stdout), _keep_tail(stderr)
            return SandboxResult(
                process.returncode, timed_out, runtime, stdout_tail, stderr_tail, kind, out_of_memory, peak_mb=peak
            )
        sandbox_errors = _tail(stderr)
    result = await _collect(job, workdir, limits, process.returncode, timed_out, runtime, out_of_memory, sandbox_errors)
    return replace(result, peak_mb=peak)


async def _collect(
    job: Job,
    workdir: Path,
    limits: Limits,
    returncode: int | None,
    timed_out: bool,
    runtime: float,
    out_of_memory: bool,
    sandbox_errors: str,
) -> SandboxResult:
    """Bring a bubblewrap run's outputs out of the tar stream it wrote, off the event loop."""
    archive = workdir / ".outputs.tar"
    wanted = frozenset((*job.outputs, *bwrap.LOGS))
    try:
        left_out = await asyncio.wait_for(
            asyncio.to_thread(
                extract,
                archive,
                workdir,
                wanted,
                max_file_bytes=limits.file_size_mb * 1024 * 1024,
                logs=frozenset(bwrap.LOGS),
            ),
            READ_TIMEOUT_S,
        )
    except TimeoutError:
        left_out = {name: f"{name} could not be read in time" for name in job.outputs}
    finally:
        archive.unlink(missing_ok=True)
    if returncode is not None and 128 < returncode < 128 + 65:  # the inner shell reports a signal as 128 + n
        returncode = -(returncode - 128)
    stderr_tail = _log_tail(workdir / "stderr.log") or sandbox_errors
    return SandboxResult(
        returncode,
        timed_out,
        runtime,
        _log_tail(workdir / "stdout.log"),
        stderr_tail,
        "bwrap",
        out_of_memory,
        left_out,
    )
