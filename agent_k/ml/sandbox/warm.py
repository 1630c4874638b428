"""Warm workers: long-lived bubblewrap sandboxes that have the libraries imported and run our own rendered
templates one after another, so a small candidate costs its model's fit, not an interpreter's start.

A candidate's fixed cost (interpreter, imports of pandas, scikit-learn and LightGBM, sandbox set-up) is about
1.5 s: on small data most of a candidate's time. A worker pays it once. It runs in the same namespaces, as the
same user and under the same seccomp filter as a cold candidate, with the mission's data read-only, its own
tmpfs and a memory cgroup for all it runs; nothing of the host is writable. Each job's script goes in with the
request, and its outputs (under their caps) and log tails come back on the reply pipe, written into the job's
folder by the runner. Only templates AGENT-K rendered from typed recipes run here; a script a model wrote gets a
sandbox of its own (`run_sandboxed`).

A job that overruns its time is stopped by killing its worker; a worker that dies, ran out of memory or grew
past its share is replaced by the next job.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_k.ml.sandbox import bwrap
from agent_k.ml.sandbox.cgroups import candidate_groups
from agent_k.ml.sandbox.channel import Channel, ChannelClosed, Exchanges
from agent_k.ml.sandbox.launcher import environment, launcher_command, user_arg
from agent_k.ml.sandbox.policy import resolve
from agent_k.ml.sandbox.run import LOGS, Job, Limits, SandboxResult, run_sandboxed

log = logging.getLogger("agent_k.sandbox")

_SERVER = Path(__file__).with_name("_warm_server.py")
START_TIMEOUT_S = 60.0
MAX_JOBS = 200
RECYCLE_SHARE = 0.6
"""A worker whose resident memory passed this share of its cap after a job is replaced (Python keeps what it
allocated, and the next job should have the room a cold candidate would)."""
CPU_SECONDS = 7 * 24 * 3600
"""The rlimit is for the worker's life; each job's time is enforced here."""
LOG_TAIL_BYTES = 64 * 1024


@dataclass(frozen=True)
class WarmKey:
    """What a worker is started with: jobs that differ in any of these need another worker."""

    data: Path
    threads: int
    memory_mb: int
    disk_mb: int
    file_size_mb: int
    processes: int
    user: str | None


@dataclass
class WarmPool:
    """Up to `size` warm workers for one mission's data, started on first use and reused."""

    size: int
    started: int = 0
    """Workers started so far (each costs what a cold candidate does)."""
    _key: WarmKey | None = None
    _idle: list[Channel] = field(default_factory=list)
    _busy: int = 0
    _freed: asyncio.Condition | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _exchanges: Exchanges = field(init=False)

    def __post_init__(self) -> None:
        self._exchanges = Exchanges(self.size)

    def accepts(self, job: Job, limits: Limits) -> bool:
        """Only bubblewrap runs warm workers, and only our own templates."""
        return not job.untrusted and resolve(limits.sandbox, limits.user) == "bwrap"

    async def run(self, job: Job, *, workdir: Path, limits: Limits) -> SandboxResult:
        """`run_sandboxed`'s contract, in a warm worker where one can take the job."""
        if not self.accepts(job, limits):
            return await run_sandboxed(job, workdir=workdir, limits=limits)
        key = WarmKey(
            job.data.resolve(), limits.threads, limits.memory_mb, limits.disk_mb, limits.file_size_mb,
            limits.processes, limits.user,
        )  # fmt: skip
        try:
            worker = await self._acquire(key)
        except (RuntimeError, OSError, TimeoutError, ChannelClosed) as exc:
            log.warning("a warm worker could not start (%s); this candidate runs cold", exc)
            return await run_sandboxed(job, workdir=workdir, limits=limits)
        keep = False
        try:
            result, keep = await self._job(worker, job, workdir, limits)
            return result
        finally:
            self._release(worker, key, keep)

    def close(self) -> None:
        """Stop the idle workers (outside the event loop: when the evaluator closes)."""
        self._drop_idle(wait=True)
        self._exchanges.close()

    def _drop_idle(self, *, wait: bool) -> None:
        for worker in self._idle:
            worker.kill(wait=wait)
        self._idle.clear()

    # -- workers -----------------------------------------------------------------------------------

    async def _acquire(self, key: WarmKey) -> Channel:
        loop = asyncio.get_running_loop()
        if self._freed is None or loop is not self._loop:  # the condition belongs to one event loop
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
            worker = await self._start(key)
            self.started += 1
            return worker
        except BaseException:
            await self._give_back()
            raise

    def _release(self, worker: Channel, key: WarmKey, keep: bool) -> None:
        if keep and key == self._key:
            self._idle.append(worker)
        else:
            worker.kill()
        asyncio.get_running_loop().create_task(self._give_back())

    async def _give_back(self) -> None:
        assert self._freed is not None
        async with self._freed:
            self._busy -= 1
            self._freed.notify()

    async def _job(self, worker: Channel, job: Job, workdir: Path, limits: Limits) -> tuple[SandboxResult, bool]:
        """Run one job; the result, and whether the worker may take another."""
        for name in (*job.outputs, *LOGS):
            with contextlib.suppress(FileNotFoundError):
                (workdir / name).unlink()
        request = {
            "script": job.script.read_text(),
            "args": ["--data", bwrap.DATA, *job.args],
            "outputs": dict(job.outputs),
        }

        def exchange() -> dict[str, Any]:
            worker.send(request)
            answer = worker.receive()
            _receive_files(worker, answer, job, workdir)
            return answer

        started = time.monotonic()
        timed_out, answer = False, None
        try:
            answer = await self._exchanges.run(exchange, worker, limits.timeout_s)
        except TimeoutError:
            timed_out = True
        except ChannelClosed:
            answer = None
        runtime = round(time.monotonic() - started, 3)
        out_of_memory = worker.groups.oom_kills() > 0
        stdout, stderr = (_text(workdir / name) for name in LOGS)
        if answer is None:  # the worker died with the job (or was stopped for its time)
            code = None if timed_out else -signal.SIGKILL
            return SandboxResult(code, timed_out, runtime, stdout, stderr, "bwrap", out_of_memory), False
        worker.uses += 1
        left_out = {str(k): str(v) for k, v in dict(answer.get("left_out") or {}).items()}
        result = SandboxResult(int(answer["code"]), False, runtime, stdout, stderr, "bwrap", out_of_memory, left_out)
        fresh = int(answer.get("rss_mb", 0)) < RECYCLE_SHARE * limits.memory_mb and worker.uses < MAX_JOBS
        return result, fresh and not out_of_memory

    async def _start(self, key: WarmKey) -> Channel:
        """A worker in its own sandbox and cgroups, ready (libraries imported) when this returns."""
        stack = contextlib.ExitStack()
        groups = stack.enter_context(candidate_groups(key.processes, key.memory_mb))
        user = user_arg(key.user)
        launch = bwrap.serve_command(
            [sys.executable, "-u", _SERVER.name],
            server=_SERVER,
            data=key.data,
            disk_bytes=key.disk_mb * 1024 * 1024,
            staged=user is not None,
        )
        launcher = launcher_command(
            groups, launch.argv, memory_mb=key.memory_mb, cpu_seconds=CPU_SECONDS, file_size_mb=key.file_size_mb,
            processes=key.processes, user=user, stage=launch.stage,
        )  # fmt: skip
        try:  # a plain Popen on purpose: see `agent_k.ml.sandbox.channel`
            process = subprocess.Popen(  # noqa: ASYNC220
                launcher,
                cwd=key.data,
                env=environment(bwrap.WORK, key.threads),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                pass_fds=launch.fds,
                start_new_session=True,
            )
        except BaseException:
            stack.close()
            raise
        finally:
            launch.close()
        worker = Channel(process, groups, stack)
        try:
            await self._exchanges.run(worker.receive, worker, START_TIMEOUT_S)
        except BaseException:
            worker.kill()
            raise
        return worker


def _receive_files(worker: Channel, answer: dict[str, Any], job: Job, workdir: Path) -> None:
    """Write the files that follow an answer into the job's folder, each checked against its cap first (a
    worker that announces more than it may send is killed by the caller's ChannelClosed)."""
    files = dict(answer.get("files") or {})
    caps = {**job.outputs, **dict.fromkeys(LOGS, LOG_TAIL_BYTES)}
    for name, size in files.items():
        if name not in caps or not isinstance(size, int) or not 0 <= size <= caps[name]:
            raise ChannelClosed(f"the worker announced {name!r} of {size!r} bytes")
    for name, size in files.items():
        with (workdir / name).open("wb") as out:
            left = size
            while left:
                chunk = worker.read_exactly(min(left, 1 << 20))
                out.write(chunk)
                left -= len(chunk)


def _text(path: Path) -> str:
    try:
        return path.read_bytes()[-LOG_TAIL_BYTES:].decode(errors="replace")
    except OSError:
        return ""
