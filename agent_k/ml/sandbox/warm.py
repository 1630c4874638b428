"""Warm workers: long-lived bubblewrap sandboxes that have the libraries imported and run our own rendered
templates one after another, so a small candidate costs its model's fit, not an interpreter's start.

A candidate's fixed cost (interpreter, imports of pandas, scikit-learn and LightGBM, sandbox set-up) is about
1.5 s: on small data most of a candidate's time. A worker pays it once. It runs in the same namespaces as a
cold candidate, with the mission's data read-only, its own tmpfs, a memory cgroup for all it runs, and the
mission's candidate folders as the one writable place, where each job writes its outputs. Only templates AGENT-K
rendered from typed recipes run here; a script a model wrote gets a sandbox of its own (`run_sandboxed`).

A job that overruns its time is stopped by killing its worker; a worker that dies, ran out of memory or grew
past its share is replaced by the next job.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from agent_k.ml.sandbox import bwrap
from agent_k.ml.sandbox.cgroups import CandidateGroups, candidate_groups
from agent_k.ml.sandbox.run import (
    Job,
    Limits,
    SandboxResult,
    _environment,
    _log_tail,
    launcher_command,
    resolve,
    run_sandboxed,
)

log = logging.getLogger("agent_k.sandbox")

_SERVER = Path(__file__).with_name("_warm_server.py")
JOBS = "/sandbox/jobs"
START_TIMEOUT_S = 60.0
MAX_JOBS = 200
RECYCLE_SHARE = 0.6
"""A worker whose resident memory passed this share of its cap after a job is replaced (Python keeps what it
allocated, and the next job should have the room a cold candidate would)."""
CPU_SECONDS = 7 * 24 * 3600
"""The rlimit is for the worker's life; each job's time is enforced here."""


@dataclass(frozen=True)
class WarmKey:
    """What a worker is started with: jobs that differ in any of these need another worker."""

    data: Path
    jobs: Path
    threads: int
    memory_mb: int
    disk_mb: int
    file_size_mb: int
    processes: int


@dataclass
class _Worker:
    """A plain `Popen` (its pipes are read in threads), so it belongs to no event loop and outlives none."""

    key: WarmKey
    process: subprocess.Popen[bytes]
    groups: CandidateGroups
    stack: contextlib.ExitStack
    jobs_done: int = 0

    async def answer(self, timeout_s: float) -> bytes:
        """Its next line (b"" when it died); TimeoutError after `timeout_s` (killing it ends the read)."""
        assert self.process.stdout is not None
        return await asyncio.wait_for(asyncio.to_thread(self.process.stdout.readline), timeout=timeout_s)

    def kill(self, *, wait: bool = False) -> None:
        """SIGKILL at once; the cleanup (the cgroups, reaping) waits on processes, so on the event loop it runs
        in a thread, lest the budget's hard stop and the cancel watch stall behind it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if wait:
            self._reap()
        else:
            threading.Thread(target=self._reap, name="warm-worker-reaper", daemon=True).start()

    def _reap(self) -> None:
        self.stack.close()  # the cgroups: whatever is left in them is killed, then they are removed
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


@dataclass
class WarmPool:
    """Up to `size` warm workers for one mission's data, started on first use and reused."""

    size: int
    started: int = 0
    """Workers started so far (each costs what a cold candidate does)."""
    _key: WarmKey | None = None
    _idle: list[_Worker] = field(default_factory=list)
    _busy: int = 0
    _freed: asyncio.Condition | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    def accepts(self, job: Job, workdir: Path, limits: Limits) -> bool:
        """Only bubblewrap runs warm workers; the job's folder must be a candidate folder under one root."""
        return resolve(limits.sandbox) == "bwrap" and workdir.parent.is_dir() and job.script == workdir / "solution.py"

    async def run(self, job: Job, *, workdir: Path, limits: Limits) -> SandboxResult:
        """`run_sandboxed`'s contract, in a warm worker where one can take the job."""
        if not self.accepts(job, workdir, limits):
            return await run_sandboxed(job, workdir=workdir, limits=limits)
        key = WarmKey(
            job.data.resolve(),
            workdir.parent.resolve(),
            limits.threads,
            limits.memory_mb,
            limits.disk_mb,
            limits.file_size_mb,
            limits.processes,
        )
        try:
            worker = await self._acquire(key)
        except (RuntimeError, OSError, TimeoutError) as exc:
            log.warning("a warm worker could not start (%s); this candidate runs cold", exc)
            return await run_sandboxed(job, workdir=workdir, limits=limits)
        keep = False
        try:
            result, keep = await self._job(worker, job, workdir, limits)
            return result
        finally:
            self._release(worker, keep)

    def close(self) -> None:
        """Stop the idle workers (outside the event loop: when the evaluator closes)."""
        self._drop_idle(wait=True)

    def _drop_idle(self, *, wait: bool) -> None:
        for worker in self._idle:
            worker.kill(wait=wait)
        self._idle.clear()

    # -- workers -----------------------------------------------------------------------------------

    async def _acquire(self, key: WarmKey) -> _Worker:
        loop = asyncio.get_running_loop()
        if self._freed is None or loop is not self._loop:  # workers and their pipes belong to one event loop
            self._drop_idle(wait=False)
            self._freed, self._loop, self._busy, self._key = asyncio.Condition(), loop, 0, None
        async with self._freed:
            if key != self._key:  # another mission's data or other limits: the old workers are of no use
                self._drop_idle(wait=False)
                self._key = key
            while not self._idle and self._busy >= self.size:
                await self._freed.wait()
            self._busy += 1
            if self._idle:
                return self._idle.pop()
        try:
            worker = await _start(key)
            self.started += 1
            return worker
        except BaseException:
            await self._give_back()
            raise

    def _release(self, worker: _Worker, keep: bool) -> None:
        if keep and worker.key == self._key:
            self._idle.append(worker)
        else:
            worker.kill()
        asyncio.get_running_loop().create_task(self._give_back())

    async def _give_back(self) -> None:
        assert self._freed is not None
        async with self._freed:
            self._busy -= 1
            self._freed.notify()

    async def _job(self, worker: _Worker, job: Job, workdir: Path, limits: Limits) -> tuple[SandboxResult, bool]:
        """Run one job; the result, and whether the worker may take another."""
        for name in (*job.outputs, *bwrap.LOGS):
            with contextlib.suppress(FileNotFoundError):
                (workdir / name).unlink()
        request = {"dir": f"{JOBS}/{workdir.name}", "args": ["--data", bwrap.DATA, *job.args]}
        started = time.monotonic()
        assert worker.process.stdin is not None
        timed_out, answer = False, None
        try:
            worker.process.stdin.write((json.dumps(request) + "\n").encode())
            worker.process.stdin.flush()
            line = await worker.answer(limits.timeout_s)
            answer = json.loads(line) if line else None
        except TimeoutError:
            timed_out = True
        except (OSError, ValueError):
            answer = None
        runtime = round(time.monotonic() - started, 3)
        out_of_memory = worker.groups.oom_kills() > 0
        if answer is None:  # the worker died with the job (or was stopped for its time)
            code = None if timed_out else -signal.SIGKILL
            result = SandboxResult(
                code, timed_out, runtime, _log_tail(workdir / "stdout.log"), _log_tail(workdir / "stderr.log"),
                "bwrap", out_of_memory,
            )  # fmt: skip
            return result, False
        worker.jobs_done += 1
        result = SandboxResult(
            int(answer["code"]), False, runtime, _log_tail(workdir / "stdout.log"),
            _log_tail(workdir / "stderr.log"), "bwrap", out_of_memory,
        )  # fmt: skip
        fresh = int(answer.get("rss_mb", 0)) < RECYCLE_SHARE * limits.memory_mb and worker.jobs_done < MAX_JOBS
        return result, fresh and not out_of_memory


async def _start(key: WarmKey) -> _Worker:
    """A worker in its own sandbox and cgroups, ready (libraries imported) when this returns."""
    stack = contextlib.ExitStack()
    groups = stack.enter_context(candidate_groups(key.processes, key.memory_mb))
    inner = bwrap.serve_command(
        [sys.executable, "-u", _SERVER.name],
        script=_SERVER,
        data=key.data,
        disk_bytes=key.disk_mb * 1024 * 1024,
        writable=key.jobs,
        mount=JOBS,
    )
    launcher = launcher_command(
        groups, inner, memory_mb=key.memory_mb, cpu_seconds=CPU_SECONDS,
        file_size_mb=key.file_size_mb, processes=key.processes,
    )  # fmt: skip
    try:  # a plain Popen on purpose: see _Worker
        process = subprocess.Popen(  # noqa: ASYNC220
            launcher,
            cwd=key.jobs,  # so the host sees the worker's processes in the mission's folder, as a candidate's
            env=_environment(bwrap.WORK, key.threads),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except BaseException:
        stack.close()
        raise
    worker = _Worker(key, process, groups, stack)
    try:
        ready = await worker.answer(START_TIMEOUT_S)
    except BaseException:
        worker.kill()
        raise
    if not ready:
        worker.kill()
        raise RuntimeError("the warm worker did not start")
    return worker
