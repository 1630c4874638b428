"""Reading what a candidate leaves, without trusting it: in disposable child processes, never in the runner.

Before anything is parsed, its shape is checked here with bounded reads: a regular file (never a link, FIFO or
device), no larger than the expected rows can take, whose header is exactly the expected columns. Then a reader
process (`_reader.py`: a memory cap, killed at its timeout and replaced) parses it and hands back an Arrow table.
A hostile file therefore costs the runner neither memory nor a thread: a 131,072-column header is refused after
a few hundred bytes, a 400 MB file by its size, and a parse that would take minutes is killed.

One pool per process (`shared_reader`), started on first use; its processes die with the runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import os
import stat
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_k.sandbox import bwrap
from agent_k.sandbox.cgroups import candidate_groups
from agent_k.sandbox.channel import Channel, ChannelClosed, Exchanges
from agent_k.sandbox.launcher import environment, launcher_command

if TYPE_CHECKING:
    import pandas as pd

_CHILD = Path(__file__).with_name("_reader.py")
READ_TIMEOUT_S = 60.0
READER_MEMORY_MB = 2048
START_TIMEOUT_S = 60.0
MAX_USES = 500
"""A reader is replaced after this many reads: whatever pandas kept from earlier files goes with it."""


class UntrustedOutput(Exception):
    """A candidate's output cannot be read safely; the message says which file and why, in one line."""


@dataclass(frozen=True)
class TableShape:
    """What a candidate's CSV must look like before it is parsed at all."""

    columns: tuple[str, ...]
    """The header, exactly."""
    max_rows: int
    max_bytes: int


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: Path) -> int:
    """A descriptor of `path`, which must be a regular file (checked on the open descriptor, so nothing can be
    swapped in between the check and the read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UntrustedOutput(f"{path.name} was not written") from None
    except OSError:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            raise UntrustedOutput(f"{path.name} cannot be opened") from None
        raise UntrustedOutput(f"{path.name} is {_kind(mode)}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UntrustedOutput(f"{path.name} is {_kind(mode)}")
    return fd


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of `path`, a regular file of at most `max_bytes` (for small files: scripts, our own logs)."""
    with os.fdopen(open_regular(path), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise UntrustedOutput(f"{path.name} is {size:,} bytes, over the {max_bytes:,}-byte cap")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UntrustedOutput(f"{path.name} grew past the {max_bytes:,}-byte cap while it was read")
    return data


def read_tail(path: Path, max_bytes: int) -> bytes:
    """The last `max_bytes` of a regular file, however large it is ("" when it cannot be read)."""
    try:
        with os.fdopen(open_regular(path), "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - max_bytes))
            return handle.read(max_bytes)
    except (UntrustedOutput, OSError):
        return b""


def check_shape(path: Path, shape: TableShape) -> None:
    """Refuse, before any parsing, a file that is no regular file, is larger than its rows can be, or whose
    header is not exactly the expected columns (read as a bounded prefix)."""
    expected = list(shape.columns)
    prefix_limit = sum(2 * len(c) + 3 for c in expected) + 64
    with os.fdopen(open_regular(path), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > shape.max_bytes:
            raise UntrustedOutput(
                f"{path.name} is {size:,} bytes, more than {shape.max_rows:,} rows of its columns take "
                f"({shape.max_bytes:,})"
            )
        prefix = handle.read(prefix_limit)
    line, newline, _ = prefix.partition(b"\n")
    if not newline and len(prefix) == prefix_limit:
        raise UntrustedOutput(f"{path.name}: its header is longer than the columns {expected} take")
    text = line.decode(errors="replace").removeprefix("\ufeff").rstrip("\r")
    got = next(csv.reader(io.StringIO(text)), [])
    if got != expected:
        shown = got if len(got) <= 12 else [*got[:12], f"… {len(got) - 12} more"]
        raise UntrustedOutput(f"{path.name}: columns must be {expected}, got {shown}")


@dataclass
class OutputReader:
    """Up to `size` reader processes, each with a memory cap of `memory_mb`, used one request at a time."""

    size: int = 2
    memory_mb: int = READER_MEMORY_MB
    timeout_s: float = READ_TIMEOUT_S
    _idle: list[Channel] = field(default_factory=list)
    _slots: asyncio.Semaphore | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _warming: bool = False
    _exchanges: Exchanges = field(init=False)

    def __post_init__(self) -> None:
        self._exchanges = Exchanges(self.size)

    async def table(self, path: Path, shape: TableShape, *, left_out: Mapping[str, str] | None = None) -> pd.DataFrame:
        """`path` parsed as a CSV of `shape`; `UntrustedOutput` with a one-line reason when it cannot be."""
        if left_out and path.name in left_out:
            raise UntrustedOutput(left_out[path.name])
        check_shape(path, shape)
        _, payload = await self._ask({"op": "table", "path": str(path), "max_rows": shape.max_rows}, path.name)
        import pyarrow as pa

        frame: pd.DataFrame = pa.ipc.open_stream(payload).read_all().to_pandas()
        if len(frame) > shape.max_rows:
            raise UntrustedOutput(f"{path.name} has more than {shape.max_rows:,} rows")
        return frame

    def prestart(self) -> None:
        """Start a reader in the background (on the running event loop) when none is ready, so the first read
        does not wait for its imports."""
        if self._idle or self._warming:
            return
        self._warming = True

        async def warm_up() -> None:
            with contextlib.suppress(Exception):
                self._release(await self._acquire())
            self._warming = False

        asyncio.get_running_loop().create_task(warm_up())

    def close(self) -> None:
        for channel in self._idle:
            channel.kill(wait=True)
        self._idle.clear()
        self._exchanges.close()

    async def _ask(self, request: dict[str, Any], name: str) -> tuple[dict[str, Any], bytes]:
        channel = await self._acquire()
        keep = False

        def exchange() -> tuple[dict[str, Any], bytes]:
            channel.send(request)
            answer = channel.receive()
            size = int(answer.get("bytes") or 0)
            return answer, channel.read_exactly(size) if size else b""

        try:
            answer, payload = await self._exchanges.run(exchange, channel, self.timeout_s)
            keep = True
        except TimeoutError:
            raise UntrustedOutput(f"{name} took longer than {self.timeout_s:.0f} s to read") from None
        except ChannelClosed:
            raise UntrustedOutput(f"{name} could not be read: the reader ran out of memory or died") from None
        finally:
            self._release(channel, keep=keep)
        if not answer.get("ok"):
            raise UntrustedOutput(f"{name} could not be read: {answer.get('error')}")
        return answer, payload

    async def _acquire(self) -> Channel:
        loop = asyncio.get_running_loop()
        if self._slots is None or loop is not self._loop:  # the semaphore belongs to one event loop
            self._slots, self._loop = asyncio.Semaphore(self.size), loop
        await self._slots.acquire()
        try:
            while self._idle:
                channel = self._idle.pop()
                if channel.process.poll() is None:
                    return channel
                channel.kill()
            return await self._start()
        except BaseException:
            self._slots.release()
            raise

    def _release(self, channel: Channel, *, keep: bool = True) -> None:
        channel.uses += 1
        if keep and channel.uses < MAX_USES and channel.process.poll() is None:
            self._idle.append(channel)
        else:
            channel.kill()
        if self._slots is not None:
            self._slots.release()

    async def _start(self) -> Channel:
        stack = contextlib.ExitStack()
        groups = stack.enter_context(candidate_groups(16, self.memory_mb))
        argv = launcher_command(
            groups, [bwrap.python(), "-I", str(_CHILD)], memory_mb=self.memory_mb, cpu_seconds=7 * 24 * 3600,
            file_size_mb=self.memory_mb, processes=16,
        )  # fmt: skip
        try:  # a plain Popen on purpose: see `agent_k.sandbox.channel`
            process = subprocess.Popen(  # noqa: ASYNC220
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd="/",
                env=environment("/", 1), start_new_session=True,
            )  # fmt: skip
        except BaseException:
            stack.close()
            raise
        assert process.stdin is not None and process.stdout is not None
        channel = Channel(process, groups, stack, process.stdin, process.stdout)
        try:
            await self._exchanges.run(channel.receive, channel, START_TIMEOUT_S)
        except (TimeoutError, ChannelClosed) as exc:
            raise UntrustedOutput(f"no output reader could start ({exc or 'timed out'})") from None
        return channel


@cache
def shared_reader() -> OutputReader:
    """This process's output reader (its children start on first use and die with the process)."""
    return OutputReader()
