"""How long reading what comes back from a sandbox takes, for honest and hostile streams: the frame reader
(`agent_k.sandbox.frames`) against Python's `tarfile`, which the runner read before, on the same inputs.

Honest: one 64 MiB output. Hostile: a pax header whose `hdrcharset` search is quadratic in Python 3.11's
tarfile (CVE-2024-6232), a header line that never ends, a file announced far over its cap. Each is fed in 1 MiB
pieces, as the pipe delivers it; medians of N runs.

    python benchmarks/frames.py [--runs 5] [--pax-digits 100000]
"""

from __future__ import annotations

import argparse
import io
import statistics
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agent_k.sandbox.frames import FrameError, FrameReader

CAP = 128 * 2**20
CHUNK = 1 << 20


def frames_of(name: str, data: bytes) -> bytes:
    return b'{"ready": true}\n' + f'{{"file": "{name}", "size": {len(data)}}}\n'.encode() + data + b'{"end": true}\n'


def tar_of(name: str, data: bytes, pax_digits: int = 0) -> bytes:
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w", format=tarfile.GNU_FORMAT) as tar:
        if pax_digits:
            pax = tarfile.TarInfo("././@PaxHeader")
            pax.type, pax.size = tarfile.XHDTYPE, pax_digits
            tar.addfile(pax, io.BytesIO(b"1" * pax_digits))
        member = tarfile.TarInfo(name)
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
    return archive.getvalue()


def read_frames(stream: bytes, folder: Path) -> str:
    reader = FrameReader(folder, {"oof.csv": CAP})
    try:
        for at in range(0, len(stream), CHUNK):
            reader.feed(stream[at : at + CHUNK])
    except FrameError as exc:
        reader.fail(str(exc))
    reader.close()
    return f"refused: {reader.error}" if reader.error else f"{len(reader.received)} file(s)"


def read_tar(stream: bytes, folder: Path) -> str:
    try:
        with tarfile.open(fileobj=io.BytesIO(stream), mode="r|") as tar:
            for member in tar:
                source = tar.extractfile(member)
                if source is not None:
                    (folder / "oof.csv").write_bytes(source.read(CAP))
    except tarfile.TarError as exc:
        return f"refused: {exc}"
    return "read"


def timed(read: Callable[[bytes, Path], str], stream: bytes, runs: int) -> tuple[float, str]:
    times, said = [], ""
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            said = read(stream, Path(folder))
            times.append(time.perf_counter() - started)
    return statistics.median(times), said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pax-digits", type=int, default=100_000, help="the pax header's length (tarfile: ~n²)")
    args = parser.parse_args()
    honest = b"id,fold,p\n" + b"123456,0,0.123456789\n" * (64 * 2**20 // 21)
    cases = {
        "honest, 64 MiB": (frames_of("oof.csv", honest), tar_of("oof.csv", honest)),
        f"pax hdrcharset, {args.pax_digits:,} digits": (
            tar_of("oof.csv", b"id\n", args.pax_digits),  # what a forger sends the frame reader: a tar, refused
            tar_of("oof.csv", b"id\n", args.pax_digits),
        ),
        "a header that never ends, 8 MiB": (b'{"ready": true}\n' + b"x" * 8 * 2**20, b"x" * 8 * 2**20),
        "a file announced over its cap": (b'{"ready": true}\n{"file": "oof.csv", "size": 999999999999}\n', b""),
    }
    print(f"{'stream':<36} {'frames, median':>15} {'tarfile, median':>16}  frames say")
    for name, (framed, tarred) in cases.items():
        framed_s, said = timed(read_frames, framed, args.runs)
        tarred_ms = f"{timed(read_tar, tarred, 1 if 'pax' in name else args.runs)[0] * 1000:.1f} ms" if tarred else "-"
        print(f"{name:<36} {framed_s * 1000:>12.1f} ms {tarred_ms:>16}  {said[:60]}")


if __name__ == "__main__":
    main()
