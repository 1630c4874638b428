"""Extract a downloaded zip without trusting it: no path traversal, no absolute paths, no links, and a cap on
the total uncompressed size (a zip bomb is stopped while it inflates, whatever its headers claim)."""

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
    """Extract `archive` into `dest` (replaced as a whole); on any refusal nothing is left behind."""
    try:
        with zipfile.ZipFile(archive) as zf:
            members = [info for info in zf.infolist() if not info.is_dir()]
            for info in zf.infolist():
                _check_entry(info)
            declared = sum(info.file_size for info in members)
            if declared > max_bytes:
                size = f"{declared:,} bytes, over the {max_bytes:,}-byte cap"
                raise UnsafeArchive(f"{archive.name} would expand to {size}")
            staging = dest.with_name(dest.name + ".partial")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            try:
                paths = _inflate(zf, members, staging, max_bytes, archive.name)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
    except zipfile.BadZipFile as exc:
        raise UnsafeArchive(f"{archive.name} is not a valid zip archive: {exc}") from exc
    except (OSError, EOFError, zlib.error, NotImplementedError, RuntimeError, ValueError) as exc:
        # Corrupt data, a compression method or an encryption zipfile does not read, entries that clash on disk
        # (a file and a folder of one name), a name the filesystem refuses: malformed, whatever the cause.
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise UnsafeArchive(f"{archive.name} cannot be extracted: {reason}") from exc
    shutil.rmtree(dest, ignore_errors=True)
    staging.rename(dest)
    return [dest / path.relative_to(staging) for path in paths]


def _check_entry(info: zipfile.ZipInfo) -> None:
    name = info.filename.replace("\\", "/")
    if name.startswith("/") or _DRIVE.match(name):
        raise UnsafeArchive(f"archive entry '{info.filename}' has an absolute path")
    if ".." in PurePosixPath(name).parts or "\x00" in name:
        raise UnsafeArchive(f"archive entry '{info.filename}' points outside the extraction folder")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise UnsafeArchive(f"archive entry '{info.filename}' is a symbolic link")


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
