"""A long-lived child spoken to in JSON lines over its stdin and stdout (warm workers, output readers).

Each exchange runs in a thread of its owner's own pool, never asyncio's default one: a child that stalls holds
that thread until it is killed, and killing it ends the read. The child belongs to no event loop, so a pool of
them outlives the loop that started them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO, Any, TypeVar

from agent_k.sandbox.cgroups import CandidateGroups

T = TypeVar("T")
MAX_LINE_BYTES = 1 << 20


class ChannelClosed(Exception):
    """The child died, or said something that is not an answer."""


@dataclass
class Channel:
    process: subprocess.Popen[bytes]
    groups: CandidateGroups
    stack: contextlib.ExitStack
    """Holds the child's cgroups: closing it kills whatever is left in them and removes them."""
    requests: IO[bytes]
    """Where requests go: the child's stdin, or (a warm worker) a pipe only its supervisor reads."""
    stdout: IO[bytes]
    """Where answers come from: the child's stdout, or a pipe only its supervisor writes."""
    uses: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.requests.write(json.dumps(message).encode() + b"\n")
            self.requests.flush()
        except (OSError, ValueError) as exc:
            raise ChannelClosed(f"the child is gone ({exc})") from None

    def receive(self) -> dict[str, Any]:
        """Its next line, as a JSON object (blocking; killing the child ends the wait)."""
        line = self.stdout.readline(MAX_LINE_BYTES)
        if not line.endswith(b"\n"):
            raise ChannelClosed("the child died" if not line else "the child's answer is longer than a line may be")
        try:
            answer = json.loads(line)
        except ValueError:
            raise ChannelClosed("the child's answer is not JSON") from None
        if not isinstance(answer, dict):
            raise ChannelClosed("the child's answer is not an object")
        return answer

    def read_exactly(self, size: int) -> bytes:
        data = self.stdout.read(size)
        if len(data) != size:
            raise ChannelClosed(f"the child died after {len(data):,} of {size:,} bytes")
        return data

    def read_some(self) -> bytes:
        """What the child sent so far (at least a byte; blocking), b"" once it is gone."""
        data: bytes = self.stdout.read1(1 << 16)  # type: ignore[attr-defined]
        return data

    def kill(self, *, wait: bool = False) -> None:
        """SIGKILL at once; the cleanup (the cgroups, reaping) waits on processes, so unless `wait` it runs in a
        thread, lest the event loop stall behind it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if wait:
            self._reap()
        else:
            threading.Thread(target=self._reap, name="channel-reaper", daemon=True).start()

    def _reap(self) -> None:
        with self._lock:
            self.stack.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
            for pipe in {self.process.stdin, self.process.stdout, self.requests, self.stdout} - {None}:
                with contextlib.suppress(OSError):
                    pipe.close()  # type: ignore[union-attr]


@dataclass
class Exchanges:
    """The thread pool a pool of channels talks through: one thread per channel that may be busy at once."""

    size: int
    _threads: ThreadPoolExecutor | None = None

    async def run(self, work: Callable[[], T], channel: Channel, timeout_s: float) -> T:
        """`work` (one exchange with `channel`) in a thread; past `timeout_s`, or on cancellation, the channel
        is killed, which ends the exchange, and TimeoutError (or the cancellation) is raised."""
        if self._threads is None:
            self._threads = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="channel")
        future = asyncio.get_running_loop().run_in_executor(self._threads, work)
        try:
            return await asyncio.wait_for(future, timeout_s)
        except BaseException:
            channel.kill()
            raise

    def close(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
            self._threads = None
