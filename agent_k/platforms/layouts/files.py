"""What a competition's folder holds: its tables by role (train, test, labels, sample submission, extra), and
how many media files lie beside them."""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from agent_k.media.kinds import media_kinds
from agent_k.platforms.layouts.records import TABLES

MEDIA_FILES = 20
"""A folder with at least this many media files holds media, beside or instead of its tables."""


class LayoutError(ValueError):
    """The files do not make a competition AGENT-K can enter; the message says why, in one line."""


@dataclass(frozen=True)
class Media:
    kind: str
    count: int
    suffix: str
    """The most common file type."""

    def __str__(self) -> str:
        return f"{self.count:,} {self.kind} files ({self.suffix})"


def side_of(folders: tuple[str, ...]) -> str | None:
    """Whether these folders (the nearest first) say "train" or "test"; None when none does."""
    for folder in reversed(folders):
        name = folder.lower()
        if "train" in name:
            return "train"
        if "test" in name:
            return "test"
    return None


def role(path: Path, folders: tuple[str, ...] = ()) -> str:
    """A table's role by its name, else by the folders it lies in (`folders`: given for the one table of its folder,
    herbarium's `train/metadata.json`; a folder of many tables is rows of signal, not the training table)."""
    name = path.name.lower()
    if "sample" in name or "submission" in name:
        return "sample"
    if re.search(r"(^|[_\-.])labels?([_\-.]|$)", name) or ("solution" in name and "train" in name):
        return "labels"
    if "train" in name:
        return "train"
    if "test" in name:
        return "test"
    return side_of(folders) or "extra"


def tables_by_role(*roots: Path) -> dict[str, list[Path]]:
    roles: dict[str, list[Path]] = {}
    for root in roots:
        paths = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in TABLES)
        per_folder = Counter(p.parent for p in paths)
        for path in paths:
            alone = per_folder[path.parent] == 1
            roles.setdefault(role(path, path.relative_to(root).parts[:-1] if alone else ()), []).append(path)
    return roles


def one(roles: dict[str, list[Path]], kind: str, slug: str, *, required: bool = True) -> Path | None:
    found = roles.get(kind, [])
    if len(found) > 1:
        raise LayoutError(f"'{slug}': several {kind} files ({', '.join(p.name for p in found)}); which one is meant?")
    if not found and required:
        raise LayoutError(f"'{slug}': no {kind} file among its tables")
    return found[0] if found else None


def media_in(*roots: Path) -> Media | None:
    counts: Counter[tuple[str, str]] = Counter()
    for path in (p for root in roots for p in root.rglob("*")):
        suffix = path.suffix.lower()
        for declared in media_kinds():
            if suffix in declared.suffixes:
                counts[(declared.name, suffix)] += 1
    if not counts:
        return None
    (kind, suffix), _ = counts.most_common(1)[0]
    total = sum(v for (k, _), v in counts.items() if k == kind)
    return Media(kind, total, suffix) if total >= MEDIA_FILES else None


def refuse_links_out(raw: Path, slug: str) -> None:
    """A link (to a file or a folder) that leaves the folder is refused: whatever it points at would otherwise
    be copied into the new competition, where every candidate reads it."""
    root = raw.resolve()
    for folder, dirs, files in os.walk(raw):
        for name in (*dirs, *files):
            path = Path(folder, name)
            if path.is_symlink() and not path.resolve().is_relative_to(root):
                raise LayoutError(f"'{slug}': {path.relative_to(raw)} links outside the folder")


MAX_UNZIPPED_BYTES = 64 * 1024**3
"""What the archives of a competition's folder may expand to, together."""
ARCHIVES = ("*.zip", "*.7z")
"""Archives read where they lie: zips, and 7-Zip files (statoil-iceberg's `train.json.7z`)."""


def unzip_beside(raw: Path, scratch: Path) -> list[Path]:
    """The folder's archives that hold what is not already beside them (MLE-bench leaves `train.zip` beside the
    `train/` folder it holds), extracted under `scratch/<name>` through the archive guard (no links, no paths
    out, streamed, capped); the folders they made."""
    from agent_k.platforms.archive import UnsafeArchive, safe_extract

    made, budget = [], MAX_UNZIPPED_BYTES
    for archive in sorted(path for pattern in ARCHIVES for path in raw.rglob(pattern)):
        if _unpacked_beside(archive):
            continue
        try:
            files = safe_extract(archive, scratch / archive.stem, max_bytes=budget)
        except UnsafeArchive as exc:
            raise LayoutError(str(exc)) from None
        budget -= sum(f.stat().st_size for f in files)
        made.append(scratch / archive.stem)
    return made


def _unpacked_beside(archive: Path) -> bool:
    names = _names_in(archive)
    return bool(names) and all((archive.parent / name).is_file() for name in names)


def _names_in(archive: Path) -> list[str]:
    """The files an archive lists; none where it cannot be read (the guard, which extracts it next, says why)."""
    if archive.suffix.lower() == ".7z":
        import py7zr
        from py7zr.exceptions import ArchiveError

        try:
            with py7zr.SevenZipFile(archive) as sz:
                return [entry.filename for entry in sz.list() if not entry.is_directory]
        except (ArchiveError, OSError, EOFError, ValueError):
            return []
    import zipfile

    try:
        with zipfile.ZipFile(archive) as zf:
            return [info.filename for info in zf.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, OSError):
        return []
