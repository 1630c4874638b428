"""Child-side half of the output reader: parse a candidate's CSV for the runner.

Run as a script (`python -I _reader.py`), one request per line on stdin, one JSON answer per line on stdout,
followed, for a table, by that many bytes of Arrow IPC. Everything a candidate wrote is parsed here, in a
process with a memory cap that the runner kills at a timeout, never in the runner itself.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pandas as pd
import pyarrow as pa


def table(path: str, max_rows: int) -> bytes:
    """A candidate's CSV, parsed as pandas reads it, as an Arrow IPC stream (at most `max_rows` + 1 rows, so the
    runner sees that there were too many)."""
    frame = pd.read_csv(path, nrows=max_rows + 1, low_memory=False)
    frame.columns = [str(c) for c in frame.columns]
    batch = pa.Table.from_pandas(frame, preserve_index=False)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_table(batch)
    return bytes(sink.getvalue())


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[-1] if text else type(exc).__name__)[:500]


def answer(request: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    try:
        payload = table(request["path"], int(request["max_rows"]))
        return {"ok": True, "bytes": len(payload)}, payload
    except MemoryError:
        return {"ok": False, "error": "ran out of memory while reading it"}, b""
    except Exception as exc:
        return {"ok": False, "error": _one_line(exc)}, b""


def main() -> None:
    replies = sys.stdout.buffer
    replies.write(b'{"ready": true}\n')
    replies.flush()
    for line in sys.stdin.buffer:
        header, payload = answer(json.loads(line))
        replies.write(json.dumps(header).encode() + b"\n" + payload)
        replies.flush()


if __name__ == "__main__":
    main()
