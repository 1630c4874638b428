"""Inside a warm worker's sandbox: import the libraries once, then run solution scripts one after another.

Requests arrive on stdin, one JSON object per line: `{"script": source, "args": [...], "outputs": {name: cap}}`.
Each script runs as `python solution.py ARGS` would, in a fresh folder of the sandbox's tmpfs, with its stdout
and stderr in that folder's logs. The answer, on the original stdout, is one JSON line (exit code, resident
memory, the files that follow and their sizes, what was left out and why) and then those files' bytes: the
outputs under their caps, and the last LOG_TAIL_BYTES of each log. Nothing of the host is writable here, and
only AGENT-K's own rendered templates are sent; a script a model wrote runs in a sandbox of its own.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import runpy
import shutil
import stat
import sys
import traceback
from pathlib import Path

WARM_IMPORTS = (
    "numpy",
    "pandas",
    "pyarrow.parquet",
    "sklearn.base",
    "sklearn.compose",
    "sklearn.ensemble",
    "sklearn.impute",
    "sklearn.linear_model",
    "sklearn.model_selection",
    "sklearn.neighbors",
    "sklearn.pipeline",
    "sklearn.preprocessing",
    "lightgbm",
)
JOB = "/sandbox/work/job"
LOGS = ("stdout.log", "stderr.log")
LOG_TAIL_BYTES = 64 * 1024


def _resident_mb() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 2**20
    except (OSError, ValueError, IndexError):
        return 0


def _run(script: str, args: list[str]) -> int:
    shutil.rmtree(JOB, ignore_errors=True)
    Path(JOB).mkdir(parents=True)
    os.chdir(JOB)
    with open("solution.py", "w") as handle:
        handle.write(script)
    sys.stdout.flush()
    sys.stderr.flush()
    for fd, name in ((1, "stdout.log"), (2, "stderr.log")):
        log = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, fd)
        os.close(log)
    sys.argv = ["solution.py", *args]
    code = 0
    try:
        runpy.run_path("solution.py", run_name="__main__")
    except SystemExit as exc:
        if isinstance(exc.code, int):
            code = exc.code
        elif exc.code is not None:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # the script's failure, reported as a process's would be
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return code


def _collect(outputs: dict[str, int]) -> tuple[dict[str, int], dict[str, str], list[tuple[str, int, int]]]:
    """Which files go back (name, size to send, offset to start at), and which outputs are left out, and why."""
    sizes: dict[str, int] = {}
    left_out: dict[str, str] = {}
    plan: list[tuple[str, int, int]] = []
    for name in (*outputs, *LOGS):
        try:
            info = os.lstat(name)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            left_out[name] = f"{name} is not a regular file"
        elif name in LOGS:
            size = min(info.st_size, LOG_TAIL_BYTES)
            sizes[name] = size
            plan.append((name, size, info.st_size - size))
        elif info.st_size > outputs[name]:
            left_out[name] = f"{name} is {info.st_size:,} bytes, over its {outputs[name]:,}-byte cap"
        else:
            sizes[name] = info.st_size
            plan.append((name, info.st_size, 0))
    return sizes, left_out, plan


def main() -> None:
    for name in WARM_IMPORTS:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    replies = os.fdopen(os.dup(1), "wb")
    replies.write(json.dumps({"ready": True, "rss_mb": _resident_mb()}).encode() + b"\n")
    replies.flush()
    for line in sys.stdin:
        request = json.loads(line)
        code = _run(request["script"], list(request["args"]))
        sizes, left_out, plan = _collect(dict(request["outputs"]))
        gc.collect()
        header = {"code": code, "rss_mb": _resident_mb(), "files": sizes, "left_out": left_out}
        replies.write(json.dumps(header).encode() + b"\n")
        for name, size, offset in plan:
            with open(name, "rb") as handle:
                handle.seek(offset)
                replies.write(handle.read(size).ljust(size, b"\0"))  # a file shrunk meanwhile keeps the frame
        replies.flush()
        os.chdir("/")
        shutil.rmtree(JOB, ignore_errors=True)


if __name__ == "__main__":
    main()
