"""What a candidate leaves behind is untrusted: only regular files are read (never through a link, never a FIFO
or a device), each under a size cap, off the event loop and with a timeout."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import stat
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

LOG_TAIL_BYTES = 64 * 1024
READ_TIMEOUT_S = 60.0


class UntrustedOutput(Exception):
    """A candidate's output cannot be read safely; the message says which file and why, in one line."""


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


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of `path`, which must be a regular file of at most `max_bytes` (checked on the open file, so
    nothing can be swapped in between the check and the read)."""
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
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UntrustedOutput(f"{path.name} is {_kind(info.st_mode)}")
        if info.st_size > max_bytes:
            raise UntrustedOutput(f"{path.name} is {info.st_size:,} bytes, over the {max_bytes:,}-byte cap")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UntrustedOutput(f"{path.name} grew past the {max_bytes:,}-byte cap while it was read")
    return data


async def parse_output(
    path: Path,
    parse: Callable[[io.BytesIO], T],
    *,
    max_bytes: int,
    left_out: dict[str, str] | None = None,
    timeout_s: float = READ_TIMEOUT_S,
) -> T:
    """Read `path` as `read_regular` does and parse it, in a thread, within `timeout_s`. `left_out` is what
    the sandbox refused to bring back, by name (see `SandboxResult.left_out`)."""
    if left_out and path.name in left_out:
        raise UntrustedOutput(left_out[path.name])

    def read_and_parse() -> T:
        return parse(io.BytesIO(read_regular(path, max_bytes)))

    try:
        return await asyncio.wait_for(asyncio.to_thread(read_and_parse), timeout_s)
    except TimeoutError:
        raise UntrustedOutput(f"{path.name} took longer than {timeout_s:.0f} s to read") from None


def extract(
    archive: Path, dest: Path, wanted: frozenset[str], *, max_file_bytes: int, logs: frozenset[str]
) -> dict[str, str]:
    """Unpack the outputs a sandbox streamed out: only `wanted` names, only regular files, each capped (a log
    keeps its last LOG_TAIL_BYTES). Returns what was left out, and why; a cut-off archive keeps what came
    before the cut."""
    dest.mkdir(parents=True, exist_ok=True)
    left_out: dict[str, str] = {}
    with contextlib.suppress(tarfile.ReadError, EOFError, OSError), tarfile.open(archive, mode="r|") as stream:
        for member in stream:
            name = member.name
            if name not in wanted or "/" in name:
                continue
            source = stream.extractfile(member) if member.isreg() else None
            if source is None:
                left_out[name] = f"{name} is {_member_kind(member)}"
            elif name in logs:
                skip = max(0, member.size - LOG_TAIL_BYTES)
                while skip > 0 and (chunk := source.read(min(skip, 1 << 20))):  # a stream only goes forward
                    skip -= len(chunk)
                (dest / name).write_bytes(source.read(LOG_TAIL_BYTES))
            elif member.size > max_file_bytes:
                left_out[name] = f"{name} is {member.size:,} bytes, over the {max_file_bytes:,}-byte cap"
            else:
                (dest / name).write_bytes(source.read(max_file_bytes))
    return left_out


def _member_kind(member: tarfile.TarInfo) -> str:
    if member.issym() or member.islnk():
        return "a link"
    if member.isfifo():
        return "a FIFO"
    if member.ischr() or member.isblk():
        return "a device"
    return "not a regular file"
