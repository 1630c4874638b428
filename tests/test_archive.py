"""Every malformed zip is an `UnsafeArchive` with a one-line reason, and leaves nothing behind: corrupt data, a
compression method zipfile does not read, entries that clash on disk, a name the filesystem refuses. (Traversal,
links and bombs: `test_kaggle.py`.)"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from agent_k.platforms.archive import UnsafeArchive, safe_extract

MiB = 2**20


def _zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def _malformed() -> dict[str, bytes]:
    good = _zip({"train.csv": b"a,b\n" * 1000})
    corrupt = bytearray(good)
    data = good.index(b"train.csv") + len("train.csv")
    corrupt[data + 5 : data + 25] = b"\xff" * 20  # the deflate stream
    method = bytearray(good)
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # a compression method zipfile lacks
        at = good.index(signature) + offset
        method[at : at + 2] = (99).to_bytes(2, "little")
    return {
        "corrupt-data": bytes(corrupt),
        "unknown-method": bytes(method),
        "file-and-folder": _zip({"a": b"x", "a/b": b"y"}),
        "name-too-long": _zip({"x" * 300 + ".csv": b"x"}),
    }


@pytest.mark.parametrize("name", list(_malformed()))
def test_a_malformed_archive_is_an_unsafe_archive_and_leaves_nothing(tmp_path: Path, name: str) -> None:
    path = tmp_path / "data.zip"
    path.write_bytes(_malformed()[name])
    with pytest.raises(UnsafeArchive, match=r"data\.zip cannot be extracted: ") as refused:
        safe_extract(path, tmp_path / "sandbox" / "raw", max_bytes=16 * MiB)
    assert len(str(refused.value).splitlines()) == 1
    sandbox = tmp_path / "sandbox"
    assert (list(sandbox.rglob("*")) if sandbox.exists() else []) == []


def _seven_zip(path: Path, folder: Path) -> Path:
    import py7zr

    with py7zr.SevenZipFile(path, "w") as archive:
        archive.writeall(folder, arcname="data")
    return path


def test_a_7z_archive_is_extracted_through_the_same_guard(tmp_path: Path) -> None:
    """statoil-iceberg ships its tables only as `.7z`: extracted with their folders; one declared past the cap, or
    holding a link, or not a 7-Zip file at all, is refused in one line and leaves nothing."""
    source = tmp_path / "source"
    (source / "processed").mkdir(parents=True)
    (source / "processed" / "train.json").write_text('[{"id": "a", "band_1": [1.5, 2.5]}]')
    (source / "readme.txt").write_bytes(b"x" * 100_000)
    archive = _seven_zip(tmp_path / "train.json.7z", source)
    paths = safe_extract(archive, tmp_path / "out", max_bytes=16 * MiB)
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in paths) == [
        "data/processed/train.json", "data/readme.txt"]  # fmt: skip
    assert (tmp_path / "out" / "data" / "processed" / "train.json").read_text().startswith('[{"id": "a"')

    (source / "link").symlink_to("/etc/passwd")
    linked = _seven_zip(tmp_path / "linked.7z", source)
    garbage = tmp_path / "garbage.7z"
    garbage.write_bytes(b"7z\xbc\xaf\x27\x1c" + b"\x00" * 40)
    for refused, cap, said in ((archive, 1_000, "over the 1,000-byte cap"), (linked, 16 * MiB, "is a link"),
                               (garbage, 16 * MiB, "garbage.7z")):  # fmt: skip
        with pytest.raises(UnsafeArchive, match=said) as error:
            safe_extract(refused, tmp_path / "sandbox" / refused.stem, max_bytes=cap)
        assert len(str(error.value).splitlines()) == 1
    assert not (tmp_path / "sandbox").exists() or list((tmp_path / "sandbox").rglob("*")) == []


def test_a_7z_member_is_stopped_as_it_inflates_past_the_cap(tmp_path: Path) -> None:
    """The sizes a 7-Zip header declares are not trusted: the writers count what actually inflates."""
    from agent_k.platforms._sevenzip import CappedWriters

    writers = CappedWriters(tmp_path, 1_000, lambda: UnsafeArchive("past the cap"), lambda name: None)
    first = writers.create("a.bin")
    first.write(b"x" * 600)
    second = writers.create("deeper/b.bin")
    with pytest.raises(UnsafeArchive, match="past the cap"):
        second.write(b"y" * 600)
    assert writers.paths == [tmp_path / "a.bin", tmp_path / "deeper" / "b.bin"]
