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
