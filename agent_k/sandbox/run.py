"""Run a candidate's script: in bubblewrap where it can run, else in the basic sandbox. In both, our supervisor
(`_supervise.py`) runs the candidate and sends its named outputs back as frames on a descriptor only it holds;
rlimits, per-candidate pids, memory and CPU cgroups, a seccomp filter, a scrubbed environment, and a kill of
everything the candidate started. As root, every candidate runs as the sandbox user.

Its stdout and stderr are pipes the runner drains, keeping the last LOG_TAIL_BYTES of each (a flood costs no
disk and still ends with the error that explains it). The frames are read as they come (`frames.FrameReader`),
each output under its cap.

A sandbox that fails to start (bubblewrap's "Creating new namespace failed: Resource temporarily unavailable"
on a busy machine) is tried again, START_ATTEMPTS times; under `auto` a candidate whose bubblewrap never
started then runs in the basic sandbox (our templates only), and the next candidate tries bubblewrap again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Protocol

from agent_k.sandbox import basic, bwrap
from agent_k.sandbox.cgroups import candidate_groups
from agent_k.sandbox.frames import FrameError, FrameReader
from agent_k.sandbox.identity import sandbox_identity
from agent_k.sandbox.launcher import environment, launcher_command
from agent_k.sandbox.policy import SandboxKind, resolve
from agent_k.sandbox.reader import shared_reader

log = logging.getLogger(__name__)

MAX_FILE_MB = 512
"""The default cap on one file a candidate writes (and so on one output we read back)."""
LOG_TAIL_BYTES = 64 * 1024
LOGS = ("stdout.log", "stderr.log")
DRAIN_AFTER_EXIT_S = 5.0
"""How long the pipes may still deliver once the candidate's processes are dead (only what the kernel buffered)."""
FRAME_SLACK_BYTES = 1 << 20
START_ATTEMPTS = 3
START_BACKOFF_S = 0.3
"""The wait before the second start, doubled before the third."""
OUT_OF_MEMORY_SIGNS = ("MemoryError", "std::bad_alloc", "Unable to allocate")


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
    user: str | None = None
    """The host account a root runner's candidates run as (`identity`); None: agent-k-sandbox, else nobody."""


@dataclass(frozen=True)
class Job:
    """One run of a script: `python SCRIPT --data DIR ARGS...`, writing its outputs into its working folder."""

    script: Path
    data: Path
    args: tuple[str, ...] = ()
    outputs: Mapping[str, int] = field(default_factory=dict)
    """The files it writes (relative to its working folder) that are brought back, each with its size cap."""
    untrusted: bool = False
    """A model wrote the script: a fresh sandbox of its own, with copies of its data (no host path inside)."""


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
    started: bool = True
    """The sandbox came up and its supervisor ran (False: it failed before, say, its namespaces were made)."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def failure_reason(self) -> str:
        """One line: why the run failed, ending with the last line the candidate wrote to stderr."""
        if self.timed_out:
            return "timed out"
        if not self.started:
            said = self.stderr_tail.strip().splitlines()[-1:] or [f"exit code {self.returncode}"]
            return f"the {self.sandbox} sandbox did not start: {said[0]}"
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


class Tail:
    """The last `limit` bytes of a pipe, drained to its end; what came so far is there at any moment."""

    def __init__(self, limit: int = LOG_TAIL_BYTES) -> None:
        self.limit = limit
        self._kept = bytearray()

    async def drain(self, reader: asyncio.StreamReader) -> None:
        while chunk := await reader.read(1 << 16):
            self._kept += chunk
            if len(self._kept) > 2 * self.limit:
                del self._kept[: -self.limit]

    def value(self) -> bytes:
        return bytes(self._kept[-self.limit :])


async def receive(
    reader: asyncio.StreamReader, transport: asyncio.ReadTransport, frames: FrameReader, cap: int
) -> None:
    """Feed the supervisor's frames to `frames` until the pipe ends; past `cap` bytes, or on a frame that breaks
    the format, stop reading and close the pipe (the supervisor's next write fails)."""
    total = 0
    try:
        while chunk := await reader.read(1 << 20):
            total += len(chunk)
            if total > cap:
                raise FrameError(f"more than the outputs' caps allow ({cap:,} bytes)")
            frames.feed(chunk)
    except FrameError as exc:
        frames.fail(str(exc))
        transport.close()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _signalled(returncode: int | None) -> int | None:
    """The supervisor reports a candidate killed by signal n as 128 + n; as a process's own code, that is -n."""
    if returncode is not None and 128 < returncode < 128 + 65:
        return -(returncode - 128)
    return returncode


@dataclass
class _Pipes:
    """What the runner reads of one sandboxed run while it lasts: its stdout and stderr, and the supervisor's
    frames on a third pipe, each drained by a task of its own. The runner makes these pipes itself: a pipe
    asyncio made would hold `Process.wait()` until every holder closed it, and a grandchild that left the
    process group holds it until the cgroup kill."""

    stdout_fd: int
    stderr_fd: int
    channel_fd: int
    """The ends the child writes to (closed here once it has them)."""
    stdout: Tail = field(default_factory=Tail)
    stderr: Tail = field(default_factory=Tail)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    transports: list[asyncio.ReadTransport] = field(default_factory=list)
    _read_fds: list[int] = field(default_factory=list)

    @classmethod
    def make(cls) -> _Pipes:
        ends = [os.pipe() for _ in range(3)]
        pipes = cls(ends[0][1], ends[1][1], ends[2][1])
        pipes._read_fds = [read for read, _ in ends]
        return pipes

    def close_writers(self) -> None:
        """Close the child's ends in this process (the child has its own copies once it started)."""
        for fd in (self.stdout_fd, self.stderr_fd, self.channel_fd):
            os.close(fd)

    async def start(self, frames: FrameReader, cap: int) -> None:
        """Drain our ends (the child started: its ends are closed here)."""
        self.close_writers()
        loop = asyncio.get_running_loop()
        readers = []
        for fd in self._read_fds:
            reader = asyncio.StreamReader(limit=1 << 20)
            transport, _ = await loop.connect_read_pipe(_protocol_for(reader), os.fdopen(fd, "rb", buffering=0))
            readers.append(reader)
            self.transports.append(transport)
        self._read_fds = []
        self.tasks += [
            asyncio.ensure_future(self.stdout.drain(readers[0])),
            asyncio.ensure_future(self.stderr.drain(readers[1])),
            asyncio.ensure_future(receive(readers[2], self.transports[2], frames, cap)),
        ]

    async def finish(self, wait_s: float) -> tuple[bytes, bytes]:
        """Let the pipes deliver what the kernel still holds (at most `wait_s`), then close them; the tails."""
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=wait_s)
        self.abandon()
        return self.stdout.value(), self.stderr.value()

    def abandon(self) -> None:
        """Stop reading and close every end still open (after a failed start, the child's ends too)."""
        for task in self.tasks:
            task.cancel()
        for transport in self.transports:
            transport.close()
        for fd in self._read_fds:
            os.close(fd)
        self._read_fds = []


def _protocol_for(reader: asyncio.StreamReader) -> Callable[[], asyncio.StreamReaderProtocol]:
    return lambda: asyncio.StreamReaderProtocol(reader)


def _prepare(job: Job, workdir: Path, limits: Limits, kind: SandboxKind, channel: int) -> bwrap.Launch:
    identity = sandbox_identity(limits.user)
    outputs = dict(job.outputs)
    disk_bytes = limits.disk_mb * 1024 * 1024
    if kind == "basic":
        return basic.command(
            list(job.args), script=job.script, data=job.data, workdir=workdir, disk_bytes=disk_bytes,
            outputs=outputs, channel=channel, identity=identity,
        )  # fmt: skip
    return bwrap.command(
        ["--data", bwrap.DATA, *job.args],
        script=job.script,
        data=job.data,
        disk_bytes=disk_bytes,
        outputs=outputs,
        channel=channel,
        untrusted=job.untrusted,
        staged=identity is not None,
    )


async def run_sandboxed(job: Job, *, workdir: Path, limits: Limits) -> SandboxResult:
    """Run `job` with `workdir` as its folder; kill all it started on timeout or cancellation. A sandbox that did
    not start is tried again; under `auto`, a bubblewrap that never starts leaves this one candidate to the
    basic sandbox."""
    workdir.mkdir(parents=True, exist_ok=True)
    kind = await asyncio.to_thread(resolve, limits.sandbox, limits.user)  # a stale verdict is probed again
    for attempt in range(START_ATTEMPTS):
        result = await _run_once(job, workdir, limits, kind)
        if result.started:
            return result
        log.warning("the %s sandbox did not start (%s)", kind, result.failure_reason())
        if attempt + 1 < START_ATTEMPTS:
            await asyncio.sleep(START_BACKOFF_S * 2**attempt)
    if kind == "bwrap" and limits.sandbox is None and (not job.untrusted or limits.allow_unsandboxed_code):
        return await _run_once(job, workdir, limits, "basic")
    return result


async def _run_once(job: Job, workdir: Path, limits: Limits, kind: SandboxKind) -> SandboxResult:
    for name in (*job.outputs, *LOGS):
        with contextlib.suppress(FileNotFoundError):
            (workdir / name).unlink()
    identity = sandbox_identity(limits.user)
    user = identity.launcher_arg() if identity else None
    shared_reader().prestart()
    home = bwrap.WORK if kind == "bwrap" or identity is not None else str(workdir / basic.PRIVATE)
    cpu_seconds = int(limits.timeout_s * max(1, limits.threads)) + 5
    pipes = _Pipes.make()
    frames = FrameReader(workdir, job.outputs)
    try:
        launch = _prepare(job, workdir, limits, kind, pipes.channel_fd)
    except BaseException:
        pipes.close_writers()
        pipes.abandon()
        raise
    with candidate_groups(limits.processes, limits.memory_mb, limits.threads) as groups:
        launcher = launcher_command(
            groups, launch.argv, memory_mb=limits.memory_mb, cpu_seconds=cpu_seconds,
            file_size_mb=limits.file_size_mb, processes=limits.processes, user=user, stage=launch.stage,
            rootfs=launch.rootfs, seccomp=launch.seccomp,
        )  # fmt: skip
        if kind == "basic" and identity is None and network_isolation_available():
            launcher = ["unshare", "--net", *launcher]
        started = time.monotonic()
        try:
            process = await asyncio.create_subprocess_exec(
                *launcher,
                cwd=launch.cwd or workdir,
                env=environment(home, limits.threads),
                stdin=subprocess.DEVNULL,
                stdout=pipes.stdout_fd,
                stderr=pipes.stderr_fd,
                pass_fds=[*launch.fds, pipes.channel_fd],
                start_new_session=True,
            )
        except BaseException:
            pipes.close_writers()
            pipes.abandon()
            raise
        finally:
            launch.close()
        await pipes.start(frames, sum(job.outputs.values()) + FRAME_SLACK_BYTES)
        timed_out = False
        try:
            await asyncio.wait_for(process.wait(), timeout=limits.timeout_s)
        except TimeoutError:
            timed_out = True
        except BaseException:
            _kill_group(process.pid)
            pipes.abandon()
            raise
        finally:
            _kill_group(process.pid)  # and grandchildren the candidate may have left behind
        await process.wait()
        runtime = round(time.monotonic() - started, 3)
        groups.kill()  # escapees from the process group would hold the pipes open
        stdout, stderr = await pipes.finish(DRAIN_AFTER_EXIT_S)
        out_of_memory, peak = groups.oom_kills() > 0, groups.peak_mb()
    frames.close()
    basic.cleanup(workdir)
    for name, tail in zip(LOGS, (stdout, stderr), strict=True):
        (workdir / name).write_bytes(tail)
    return SandboxResult(
        _signalled(process.returncode), timed_out, runtime, stdout.decode(errors="replace"),
        stderr.decode(errors="replace"), kind, out_of_memory, frames.left_out, peak,
        started=frames.ready is not None or timed_out,
    )  # fmt: skip
