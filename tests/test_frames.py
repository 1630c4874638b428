"""What comes back from a sandbox is read as frames (`agent_k.sandbox.frames`): only wanted files, each under
its cap, nothing half-written, and no path a forged stream can make slow."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from agent_k.sandbox.frames import FrameError, FrameReader


def test_the_frame_reader_takes_only_wanted_files_under_their_caps(tmp_path: Path) -> None:
    """What comes back from a sandbox is read as frames: a file over its cap, an unwanted name, one that would
    leave the folder or a second copy stops the reading at its header; nothing is half-written."""
    caps = {"ok.csv": 100, "big.csv": 10}

    def read(*frames: bytes) -> FrameReader:
        reader = FrameReader(tmp_path, caps)
        try:
            for frame in (b'{"ready": true}\n', *frames):
                reader.feed(frame)
        except FrameError as exc:
            reader.fail(str(exc))
        reader.close()
        return reader

    good = read(b'{"file": "ok.csv", "size": 3}\nabc', b'{"left_out": "big.csv", "why": "too big"}\n{"end": true}\n')
    assert good.error is None and good.end == {"end": True} and (tmp_path / "ok.csv").read_bytes() == b"abc"
    assert good.left_out == {"big.csv": "too big"}
    for frames, why in (
        ((b'{"file": "big.csv", "size": 11}\n' + b"x" * 11,), "big.csv announced as 11 bytes, over its 10-byte cap"),
        ((b'{"file": "../escape.csv", "size": 1}\nx',), "an output nobody asked for: '../escape.csv'"),
        ((b'{"file": "ok.csv", "size": 1}\nx{"file": "ok.csv", "size": 1}\nx',), "ok.csv sent twice"),
        ((b'{"file": "ok.csv", "size": 50}\n' + b"x" * 20,), None),  # cut off: left out, not half-written
        ((b"x" * 5000,), "a frame header longer than 4096 bytes"),
        ((b"[" * 2000 + b"]" * 2000 + b"\n",), "a frame header nested too deep"),  # was a RecursionError
        ((b'{"end": true}\ntrailing',), "bytes after the end of the outputs"),
    ):
        for name in caps:
            (tmp_path / name).unlink(missing_ok=True)
        reader = read(*frames)
        assert reader.error == why, frames
        assert not (tmp_path / "big.csv").exists() and not (tmp_path.parent / "escape.csv").exists()
        assert "ok.csv" in reader.left_out or "ok.csv" in reader.received
    assert not (tmp_path / "ok.csv").exists(), "a cut-off file is not left half-written"


def test_a_forged_tar_with_a_pax_header_is_refused_at_once(tmp_path: Path) -> None:
    """The pax `hdrcharset` header whose regex costs Python 3.11's tarfile quadratic time (CVE-2024-6232) is
    no frame at all: refused at its first header, whatever its length."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w", format=tarfile.PAX_FORMAT) as tar:
        member = tarfile.TarInfo("predictions.csv")
        member.pax_headers = {"hdrcharset": "x" * 50_000 + " "}
        tar.addfile(member, io.BytesIO(b""))
    reader = FrameReader(tmp_path, {"predictions.csv": 1 << 20})
    with pytest.raises(FrameError):
        reader.feed(archive.getvalue())
    assert reader.received == []
