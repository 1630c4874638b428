"""Warm workers: long-lived bubblewrap sandboxes that have the libraries imported and run our own rendered
templates one after another, so a small candidate costs its model's fit, not an interpreter's start.

A candidate's fixed cost (interpreter, imports of pandas, scikit-learn and LightGBM, sandbox set-up) is about
1.5 s: on small data most of a candidate's time. A worker pays it once. It runs in the same namespaces, as the
same user and under the same seccomp filter as a cold candidate, with the mission's data read-only, its own
tmpfs and memory, pids and CPU cgroups for all it runs; nothing of the host is writable.

The worker is our supervisor in `serve` mode (`_supervise.py`), a fork server: each job runs in a child forked
from the clean, preloaded parent, never in the parent's interpreter, so a job that patches a library, leaves a
process or a file behind changes nothing the next job sees (its leftovers are killed, the writable folders
wiped whatever their modes). What the kernel keeps outside the job's own processes (SysV IPC objects, the
parent's limits, affinity, priorities: docs/security.md) is checked after every job, and a worker where any of
it changed is retired: the next job gets a fresh one. Each job's script goes in with the request, and its
outputs (under their caps) and log tails come back as frames on the replies pipe, which only the non-dumpable
parent holds. Only templates AGENT-K rendered from typed recipes run here; a script a model wrote gets a sandbox
of its own (`run_sandboxed`).

A job that overruns its time is stopped by killing its worker; a worker that dies or ran out of memory is
replaced by the next job.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from agent_k.sandbox import bwrap
from agent_k.sandbox.cgroups import candidate_groups
from agent_k.sandbox.channel import Channel, ChannelClosed, Exchanges
from agent_k.sandbox.frames import FrameError, FrameReader
from agent_k.sandbox.launcher import environment, launcher_command, user_arg
from agent_k.sandbox.policy import resolve
from agent_k.sandbox.run import FRAME_SLACK_BYTES, LOG_TAIL_BYTES, LOGS, Job, Limits, SandboxResult, run_sandboxed

log = logging.getLogger("agent_k.sandbox")

START_TIMEOUT_S = 60.0
MAX_JOBS = 200
"""A worker is replaced after this many jobs (its parent never runs one, but its cgroup counters grow)."""
CPU_SECONDS = 7 * 24 * 3600
"""The rlimit is for the worker's life; each job's time is enforced here."""


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
    preload: tuple[str, ...] = ()
    """What each worker's parent imports once, for every job it forks (the caller's libraries: the sandbox
    knows none)."""
    started: int = 0
    """Workers started so far (each costs what a cold candidate does)."""
    jobs: int = 0
    """Jobs run in a warm worker so far."""
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
        """`run_sandboxed`'s contract, in a warm worker where one can take the job. Starting a worker counts in
        the job's time, as a cold candidate's interpreter does: a candidate never outlasts its timeout."""
        if not self.accepts(job, limits):
            return await run_sandboxed(job, workdir=workdir, limits=limits)
        key = WarmKey(
            job.data.resolve(), limits.threads, limits.memory_mb, limits.disk_mb, limits.file_size_mb,
            limits.processes, limits.user,
        )  # fmt: skip
        began = time.monotonic()
        try:
            worker = await asyncio.wait_for(self._acquire(key), limits.timeout_s)
        except TimeoutError:
            return SandboxResult(None, True, round(time.monotonic() - began, 3), "", "", "bwrap")
        except (RuntimeError, OSError, ChannelClosed) as exc:
            log.warning("a warm worker could not start (%s); this candidate runs cold", exc)
            left = replace(limits, timeout_s=max(0.1, limits.timeout_s - (time.monotonic() - began)))
            return await run_sandboxed(job, workdir=workdir, limits=left)
        keep, self.jobs = False, self.jobs + 1
        try:
            left = replace(limits, timeout_s=max(0.0, limits.timeout_s - (time.monotonic() - began)))
            result, keep = await self._job(worker, job, workdir, left)
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
            "script": job.script.read_text(encoding="utf-8"),
            "args": ["--data", bwrap.DATA, *job.args],
            "outputs": dict(job.outputs),
        }
        frames = FrameReader(workdir, {**job.outputs, **dict.fromkeys(LOGS, LOG_TAIL_BYTES)}, ready={})
        cap = sum(frames.caps.values()) + FRAME_SLACK_BYTES

        def exchange() -> None:
            worker.send(request)
            total = 0
            while frames.end is None:
                chunk = worker.read_some()
                if not chunk:
                    raise ChannelClosed("the worker died")
                total += len(chunk)
                if total > cap:
                    raise FrameError(f"more than the outputs' caps allow ({cap:,} bytes)")
                frames.feed(chunk)

        started = time.monotonic()
        timed_out, broken = False, False
        try:
            await self._exchanges.run(exchange, worker, limits.timeout_s)
        except TimeoutError:
            timed_out = True
        except ChannelClosed:
            broken = True
        except FrameError as exc:  # the exchange already killed the worker
            frames.fail(str(exc))
            broken = True
        frames.close()
        runtime = round(time.monotonic() - started, 3)
        out_of_memory = worker.groups.oom_kills() > 0
        stdout, stderr = (_text(workdir / name) for name in LOGS)
        if timed_out or broken or frames.end is None:  # the worker died with the job (or was stopped for its time)
            code = None if timed_out else -signal.SIGKILL
            result = SandboxResult(code, timed_out, runtime, stdout, stderr, "bwrap", out_of_memory, frames.left_out)
            return result, False
        worker.uses += 1
        code = int(frames.end.get("code", 1))
        code = -(code - 128) if 128 < code < 128 + 65 else code
        result = SandboxResult(code, False, runtime, stdout, stderr, "bwrap", out_of_memory, frames.left_out)
        retired = bool(frames.end.get("retire"))  # the job left state a next job would inherit
        return result, worker.uses < MAX_JOBS and not out_of_memory and not retired

    async def _start(self, key: WarmKey) -> Channel:
        """A worker in its own sandbox and cgroups, ready (libraries imported) when this returns. Its requests and
        replies travel on two pipes passed to the supervisor alone: bubblewrap's own stdin and stdout are not
        the channel."""
        stack = contextlib.ExitStack()
        groups = stack.enter_context(candidate_groups(key.processes, key.memory_mb, key.threads))
        user = user_arg(key.user)
        (requests_in, requests), (replies, replies_out) = os.pipe(), os.pipe()
        launch = bwrap.serve_command(
            requests=requests_in,
            replies=replies_out,
            preload=self.preload,
            data=key.data,
            disk_bytes=key.disk_mb * 1024 * 1024,
            staged=user is not None,
        )
        launcher = launcher_command(
            groups, launch.argv, memory_mb=key.memory_mb, cpu_seconds=CPU_SECONDS, file_size_mb=key.file_size_mb,
            processes=key.processes, user=user, stage=launch.stage,
        )  # fmt: skip
        try:  # a plain Popen on purpose: see `agent_k.sandbox.channel`
            process = subprocess.Popen(  # noqa: ASYNC220
                launcher,
                cwd=key.data,
                env=environment(bwrap.WORK, key.threads),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=[*launch.fds, requests_in, replies_out],
                start_new_session=True,
            )
        except BaseException:
            for fd in (requests, replies):
                os.close(fd)
            stack.close()
            raise
        finally:
            launch.close()
            for fd in (requests_in, replies_out):
                os.close(fd)
        worker = Channel(process, groups, stack, os.fdopen(requests, "wb"), os.fdopen(replies, "rb"))
        try:
            await self._exchanges.run(worker.receive, worker, START_TIMEOUT_S)
        except BaseException:
            worker.kill()
            raise
        return worker


def _text(path: Path) -> str:
    try:
        return path.read_bytes()[-LOG_TAIL_BYTES:].decode(errors="replace")
    except OSError:
        return ""
