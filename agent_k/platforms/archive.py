"""Extract a downloaded zip or 7-Zip archive without trusting it: no path traversal, no absolute paths, no links,
and a cap on the total uncompressed size (a bomb is stopped while it inflates, whatever its headers claim)."""

from __future__ import annotations

import re
import shutil
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from agent_k.platforms.base import PlatformError

_CHUNK = 1 << 20
_DRIVE = re.compile(r"^[A-Za-z]:")


class UnsafeArchive(PlatformError):
    """The archive tries to write outside its folder, holds a link, or inflates past the cap."""


def safe_extract(archive: Path, dest: Path, *, max_bytes: int) -> list[Path]:
    """Extract `archive` (a zip, or a 7-Zip file by its `.7z` suffix) into `dest` (replaced as a whole); on any
    refusal nothing is left behind."""
    staging = dest.with_name(dest.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        extract = _extract_7z if archive.suffix.lower() == ".7z" else _extract_zip
        paths = extract(archive, staging, max_bytes)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(dest, ignore_errors=True)
    staging.rename(dest)
    return [dest / path.relative_to(staging) for path in paths]


def _extract_zip(archive: Path, staging: Path, max_bytes: int) -> list[Path]:
    try:
        with zipfile.ZipFile(archive) as zf:
            members = [info for info in zf.infolist() if not info.is_dir()]
            for info in zf.infolist():
                _check_name(info.filename)
                if stat.S_ISLNK(info.external_attr >> 16):
                    raise UnsafeArchive(f"archive entry '{info.filename}' is a symbolic link")
            _check_declared(archive, sum(info.file_size for info in members), max_bytes)
            staging.mkdir(parents=True)
            return _inflate(zf, members, staging, max_bytes, archive.name)
    except zipfile.BadZipFile as exc:
        raise UnsafeArchive(f"{archive.name} is not a valid zip archive: {exc}") from exc
    except (OSError, EOFError, zlib.error, NotImplementedError, RuntimeError, ValueError) as exc:
        # Corrupt data, a compression method or an encryption zipfile does not read, entries that clash on disk
        # (a file and a folder of one name), a name the filesystem refuses: malformed, whatever the cause.
        raise UnsafeArchive(f"{archive.name} cannot be extracted: {_reason(exc)}") from exc


def _extract_7z(archive: Path, staging: Path, max_bytes: int) -> list[Path]:
    import py7zr
    from py7zr.exceptions import ArchiveError

    from agent_k.platforms._sevenzip import CappedWriters

    try:
        with py7zr.SevenZipFile(archive) as sz:
            entries = sz.list()
            for entry in entries:
                _check_name(entry.filename)
                if entry.is_symlink or not (entry.is_file or entry.is_directory):
                    raise UnsafeArchive(f"archive entry '{entry.filename}' is a link or a special file")
            _check_declared(archive, sum(e.uncompressed for e in entries if e.is_file), max_bytes)
            staging.mkdir(parents=True)
            writers = CappedWriters(
                staging,
                max_bytes,
                lambda: UnsafeArchive(f"{archive.name} expands past the {max_bytes:,}-byte cap"),
                _check_name,
            )
            sz.extractall(factory=writers)
            return writers.paths
    except ArchiveError as exc:
        raise UnsafeArchive(f"{archive.name} is not a 7-Zip archive it can read: {_reason(exc)}") from exc
    except (OSError, EOFError, RuntimeError, ValueError, KeyError) as exc:
        raise UnsafeArchive(f"{archive.name} cannot be extracted: {_reason(exc)}") from exc


def _reason(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _check_declared(archive: Path, declared: int, max_bytes: int) -> None:
    if declared > max_bytes:
        raise UnsafeArchive(f"{archive.name} would expand to {declared:,} bytes, over the {max_bytes:,}-byte cap")


def _check_name(filename: str) -> None:
    name = filename.replace("\\", "/")
    if name.startswith("/") or _DRIVE.match(name):
        raise UnsafeArchive(f"archive entry '{filename}' has an absolute path")
    if ".." in PurePosixPath(name).parts or "\x00" in name:
        raise UnsafeArchive(f"archive entry '{filename}' points outside the extraction folder")


def _inflate(zf: zipfile.ZipFile, members: list[zipfile.ZipInfo], root: Path, cap: int, name: str) -> list[Path]:
    written, paths = 0, []
    for info in members:
        target = root / PurePosixPath(info.filename.replace("\\", "/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(info) as source, target.open("wb") as out:
            while chunk := source.read(_CHUNK):
                written += len(chunk)
                if written > cap:
                    raise UnsafeArchive(f"{name} expands past the {cap:,}-byte cap")
                out.write(chunk)
        paths.append(target)
    return paths
