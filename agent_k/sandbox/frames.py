"""Reading the frames a sandbox's supervisor sends back (`_supervise.py`): its outputs, each under its cap.

The format has no path a hostile stream could make slow: one JSON header line of at most MAX_HEADER bytes per
frame (refused at that length before it is parsed), then exactly the announced bytes, each file's size checked
against its cap before a byte of it is written. Parsing is linear in what arrives; anything else (an unknown
name, a second copy, a size over the cap, bytes after the end) stops the reading with a one-line reason.

`FrameReader` does no I/O of its own: the caller feeds it what it reads, from an asyncio pipe (a cold run) or a
blocking one in a thread (a warm worker), so both read the same way.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

MAX_HEADER = 4096


class FrameError(Exception):
    """The stream is not what a supervisor sends; the message says why, in one line."""


@dataclass
class FrameReader:
    """Writes the files of a frame stream into `dest`: only names in `caps`, each at most its cap."""

    dest: Path
    caps: Mapping[str, int]
    ready: dict[str, Any] | None = None
    """The supervisor's first frame: the sandbox started."""
    end: dict[str, Any] | None = None
    """The last frame (the exit code); None until it came."""
    left_out: dict[str, str] = field(default_factory=dict)
    received: list[str] = field(default_factory=list)
    error: str | None = None
    """Why the stream stopped being read (then every output not received is left out, saying so)."""
    _buffer: bytearray = field(default_factory=bytearray)
    _file: BinaryIO | None = None
    _left: int = 0

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the stream; `FrameError` when they break the format."""
        self._buffer += data
        while self._buffer:
            if self._file is not None:
                self._write()
                continue
            if self.end is not None:
                raise FrameError("bytes after the end of the outputs")
            newline = self._buffer.find(b"\n", 0, MAX_HEADER)
            if newline < 0:
                if len(self._buffer) >= MAX_HEADER:
                    raise FrameError(f"a frame header longer than {MAX_HEADER} bytes")
                return
            line = bytes(self._buffer[:newline])
            del self._buffer[: newline + 1]
            self._header(line)

    def fail(self, reason: str) -> None:
        """Stop: the stream broke the format (`FrameError`) or outgrew its caps."""
        self.error = reason
        if self._file is not None:
            self._discard()

    def close(self) -> None:
        """The stream ended (or was cut): a file still arriving is left out, nothing is half-written; after an
        error, so is every output not received."""
        if self._file is not None:
            name = self._discard()
            self.left_out[name] = f"{name} was cut off"
        if self.error is not None:
            for name in self.caps:
                if name not in self.received and name not in self.left_out:
                    self.left_out[name] = f"{name} could not be read back: {self.error}"

    def _header(self, line: bytes) -> None:
        try:
            header = json.loads(line)
        except ValueError:
            raise FrameError("a frame header that is not JSON") from None
        except RecursionError:  # 4096 bytes of brackets nest deeper than the parser recurses
            raise FrameError("a frame header nested too deep") from None
        if not isinstance(header, dict):
            raise FrameError("a frame header that is not an object")
        if self.ready is None:
            if header.get("ready") is not True:
                raise FrameError("the stream does not start with the supervisor's ready frame")
            self.ready = header
        elif header.get("end") is True:
            self.end = header
        elif "left_out" in header:
            name = self._wanted(header.get("left_out"))
            self.left_out[name] = str(header.get("why", "left out"))[:300]
        elif "file" in header:
            name, size = self._wanted(header.get("file")), header.get("size")
            if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= self.caps[name]:
                raise FrameError(f"{name} announced as {size!r} bytes, over its {self.caps[name]:,}-byte cap")
            self._open(name, size)
        else:
            raise FrameError("a frame of no known kind")

    def _wanted(self, name: object) -> str:
        if not isinstance(name, str) or name not in self.caps:
            raise FrameError(f"an output nobody asked for: {str(name)[:60]!r}")
        if name in self.received or name in self.left_out:
            raise FrameError(f"{name} sent twice")
        return name

    def _open(self, name: str, size: int) -> None:
        path = self.dest / name
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o640)
        self._file, self._left = os.fdopen(fd, "wb"), size
        self.received.append(name)
        if not size:
            self._finish()

    def _write(self) -> None:
        assert self._file is not None
        chunk = self._buffer[: self._left]
        self._file.write(chunk)
        del self._buffer[: len(chunk)]
        self._left -= len(chunk)
        if not self._left:
            self._finish()

    def _finish(self) -> None:
        assert self._file is not None
        self._file.close()
        self._file = None

    def _discard(self) -> str:
        assert self._file is not None
        name = self.received.pop()
        self._file.close()
        self._file = None
        (self.dest / name).unlink(missing_ok=True)
        return name
