"""py7zr's writers for `archive.safe_extract`: each member of a 7-Zip archive streamed into its own file, all of
them together stopped at a cap while they inflate (py7zr otherwise trusts the sizes its headers declare)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from py7zr.io import Py7zIO, WriterFactory


class CappedWriters(WriterFactory):
    def __init__(self, root: Path, cap: int, over: Callable[[], Exception], check: Callable[[str], None]) -> None:
        self.root, self.cap, self.over, self.check = root, cap, over, check
        self.written = 0
        self.paths: list[Path] = []

    def create(self, filename: str) -> Py7zIO:
        self.check(filename)  # the name as extracted, whatever the listing said
        target = self.root / PurePosixPath(filename.replace("\\", "/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        self.paths.append(target)
        return _CappedFile(self, target.open("wb"))


class _CappedFile(Py7zIO):
    def __init__(self, writers: CappedWriters, file: BinaryIO) -> None:
        self.writers, self.file = writers, file

    def write(self, s: bytes | bytearray) -> int:
        self.writers.written += len(s)
        if self.writers.written > self.writers.cap:
            self.file.close()
            raise self.writers.over()
        return self.file.write(s)

    def read(self, size: int | None = None) -> bytes:
        return b""  # written only

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.file.tell()

    def flush(self) -> None:
        self.file.flush()

    def size(self) -> int:
        return self.file.tell()

    def close(self) -> None:
        self.file.close()
