"""Inside a warm worker's sandbox: import the libraries once, then run solution scripts one after another.

Requests arrive on stdin, one JSON object per line: `{"dir": ..., "args": [...]}`. Each script runs as
`python solution.py ARGS` would, in `dir`, with its stdout and stderr in `dir`'s logs; the answer, one JSON line
on the original stdout, carries its exit code and the worker's resident memory. Only AGENT-K's own rendered
templates are sent here; a script a model wrote runs in a sandbox of its own.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import runpy
import sys
import traceback

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


def _resident_mb() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 2**20
    except (OSError, ValueError, IndexError):
        return 0


def _run(folder: str, args: list[str]) -> int:
    os.chdir(folder)
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


def main() -> None:
    for name in WARM_IMPORTS:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    replies.write(json.dumps({"ready": True, "rss_mb": _resident_mb()}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        code = _run(request["dir"], list(request["args"]))
        gc.collect()
        replies.write(json.dumps({"code": code, "rss_mb": _resident_mb()}) + "\n")


if __name__ == "__main__":
    main()
