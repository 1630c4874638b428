"""Inside the sandbox: the one process that holds the way out, and the only one a candidate cannot reach.

Run as a script with the standard library only. It makes itself non-dumpable first (`PR_SET_DUMPABLE` 0), so a
process of the same user can neither open its `/proc/<pid>/mem` nor reopen its descriptors through
`/proc/<pid>/fd`; in bubblewrap it is also the sandbox's pid 1 (`--as-pid-1`), which ignores every signal sent
from inside. The outputs channel is a descriptor only it holds: it is closed in every candidate.

- `run`: fork a child that runs the candidate's script (`runpy`, as `python solution.py` would: the interpreter
  is already up, so the supervisor costs a cold candidate no second start), wait for it, kill whatever it left,
  then send the named outputs back as frames, and exit with its code (128 + n when signal n killed it).
- `serve` (a warm worker): import the libraries once, then for each request on the requests descriptor fork a
  clean child from this preloaded parent, run the script there the same way, kill what it left, wipe the
  writable folders and send its outputs and log tails back. A job changes nothing the next one sees: it never
  runs in this interpreter, and nothing it wrote outlives it.

Frames: one JSON header line each (a few dozen bytes), `{"ready": true}` first, then `{"file": NAME,
"size": N}` followed by N bytes, or `{"left_out": NAME, "why": REASON}`, and `{"end": true, "code": C}` last
(parsed by `agent_k.sandbox.frames`).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import signal
import stat
import sys
import time

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
WORK = "/sandbox/work"
WIPED = (WORK, "/dev/shm")
"""Everything writable inside a warm worker's sandbox: emptied after every job."""
JOB = WORK + "/job"
LOGS = ("stdout.log", "stderr.log")
LOG_TAIL_BYTES = 64 * 1024
KILL_WAIT_S = 5.0


def _protect() -> None:
    """No other process of this user may read or write this one's memory or descriptors; orphans of the
    candidate become this process's children, so it can find and kill them."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as pid 1, a signal without a handler is ignored


class Frames:
    def __init__(self, fd: int) -> None:
        os.set_inheritable(fd, False)
        self.out = os.fdopen(fd, "wb")

    def header(self, **fields: object) -> None:
        self.out.write(json.dumps(fields).encode() + b"\n")

    def send(self, name: str, cap: int, *, tail: bool = False) -> None:
        """The file `name` of the working folder: a regular file (never a link, FIFO or device) under its cap,
        or its last `cap` bytes when `tail`; else why it is left out (nothing, when it was not written)."""
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return
        except OSError:
            self.header(left_out=name, why=f"{name} is {_kind(name)}")
            return
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self.header(left_out=name, why=f"{name} is {_kind(name)}")
                return
            if info.st_size > cap and not tail:
                self.header(left_out=name, why=f"{name} is {info.st_size:,} bytes, over its {cap:,}-byte cap")
                return
            size = min(info.st_size, cap)
            handle.seek(info.st_size - size)
            self.header(file=name, size=size)
            left = size
            while left:
                chunk = handle.read(min(left, 1 << 20)) or b"\0" * min(left, 1 << 20)  # shrunk: keep the frame
                self.out.write(chunk[:left])
                left -= len(chunk[:left])

    def flush(self) -> None:
        self.out.flush()


def _kind(name: str) -> str:
    try:
        mode = os.lstat(name).st_mode
    except OSError:
        return "gone"
    kinds = (
        (stat.S_ISLNK, "a link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next(
        (kind for test, kind in kinds if test(mode)),
        "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file",
    )


def _exit_code(status: int) -> int:
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _children() -> list[int]:
    found: list[int] = []
    for task in os.listdir("/proc/self/task"):  # noqa: PTH208 (pathlib costs this process's start 2 ms)
        with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/children") as listed:
            found += [int(pid) for pid in listed.read().split()]
    return found


def _kill_leftovers(whole_namespace: bool) -> None:
    """SIGKILL everything the candidate left and reap it. In bubblewrap's PID namespace that is every other
    process (`kill(-1)`); elsewhere it is this process's descendants, which as a subreaper it inherits."""
    deadline = time.monotonic() + KILL_WAIT_S
    while time.monotonic() < deadline:
        for pid in [-1] if whole_namespace else _children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return
        time.sleep(0.01)


def run(channel: int, outputs: dict[str, int], argv: list[str], whole_namespace: bool) -> int:
    """Run the script `argv[0]` with its arguments in this folder; its exit code."""
    _protect()
    frames = Frames(channel)
    frames.header(ready=True)
    frames.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _become(argv, closed=(channel,))
    _, status = os.waitpid(pid, 0)
    code = _exit_code(status)
    _kill_leftovers(whole_namespace)
    for name, cap in outputs.items():
        frames.send(name, cap)
    frames.header(end=True, code=code)
    frames.flush()
    return code


def _wipe(modes: dict[str, int]) -> bool:
    """Empty the writable folders whatever modes a job left in them: each folder's own mode (`modes`, as the
    worker started) is put back, and every folder below is opened up before it is removed. False when anything
    is left."""
    from pathlib import Path

    clean = True
    for name, mode in modes.items():
        folder = Path(name)
        try:
            folder.chmod(mode)
            for path in folder.iterdir():
                _remove(path)
            clean = clean and not any(folder.iterdir())
        except (OSError, RecursionError):
            clean = False
    return clean


def _remove(entry: os.PathLike[str]) -> None:
    import shutil
    from pathlib import Path

    path = Path(entry)
    if not path.is_dir() or path.is_symlink():
        path.unlink()
        return
    path.chmod(0o700)
    for folder, children, _ in os.walk(path):  # top-down: a folder is opened up before it is entered
        for child in children:
            if not (below := Path(folder, child)).is_symlink():
                below.chmod(0o700)
    shutil.rmtree(path)


def _process_state() -> tuple[object, ...]:
    """What a forked job inherits from this process and could change in it from outside (`prlimit`,
    `sched_setaffinity`, `setpriority`, `sched_setscheduler`, `ioprio_set` and `oom_score_adj` on pid 1 work for
    the same user): compared after every job, and a worker whose state moved is retired."""
    import resource

    limits = tuple(resource.getrlimit(getattr(resource, name)) for name in dir(resource) if name.startswith("RLIMIT_"))
    with open("/proc/self/oom_score_adj") as adjustment:
        oom = adjustment.read()
    return (
        limits,
        os.sched_getaffinity(0),
        os.getpriority(os.PRIO_PROCESS, 0),
        os.sched_getscheduler(0),
        os.sched_getparam(0).sched_priority,
        _io_priority(),
        oom,
    )


_IOPRIO_GET = {"x86_64": 252, "aarch64": 31}
"""`ioprio_get`'s system call number (the C library has no wrapper)."""


def _io_priority() -> int | None:
    import platform

    number = _IOPRIO_GET.get(platform.machine())
    return None if number is None else int(ctypes.CDLL(None, use_errno=True).syscall(number, 1, 0))


def _ipc_objects() -> int:
    """SysV shared memory segments, message queues and semaphore sets in this worker's IPC namespace: a job's
    outlive it (there is no folder to wipe), so a worker that has any is retired."""
    count = 0
    for kind in ("shm", "msg", "sem"):
        with contextlib.suppress(OSError), open(f"/proc/sysvipc/{kind}") as listed:
            count += len(listed.readlines()) - 1
    return count


def _become(argv: list[str], *, closed: tuple[int, ...], logs: bool = False) -> None:
    """In the forked child: become `python SCRIPT ARGS` (`argv`) in the working folder, with its output in
    stdout.log and stderr.log there when `logs`; never returns. Whatever the supervisor holds is closed first."""
    import runpy
    import traceback

    code = 0
    try:
        for fd in closed:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        if logs:
            for fd, name in ((1, "stdout.log"), (2, "stderr.log")):
                log = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(log, fd)
                os.close(log)
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # a process like any other from here on
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.argv = list(argv)
        try:
            runpy.run_path(argv[0], run_name="__main__")
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
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve(requests_fd: int, replies_fd: int, imports: list[str]) -> None:
    import importlib
    from pathlib import Path

    for name in imports:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    # Whatever is alive now is the libraries: the collector of a forked job need never walk it (walking it would
    # write every object's header, copying the parent's pages one by one into the job).
    gc.collect()
    gc.freeze()
    _protect()
    os.set_inheritable(requests_fd, False)
    requests = os.fdopen(requests_fd, "rb")
    frames = Frames(replies_fd)
    frames.header(ready=True)
    frames.flush()
    baseline, modes = _process_state(), {folder: stat.S_IMODE(Path(folder).stat().st_mode) for folder in WIPED}
    for line in requests:
        request = json.loads(line)
        Path(JOB).mkdir()
        Path(JOB, "solution.py").write_text(request["script"], encoding="utf-8")
        sys.stdout.flush()
        sys.stderr.flush()
        os.chdir(JOB)
        pid = os.fork()
        if pid == 0:
            _become(["solution.py", *request["args"]], closed=(requests_fd, replies_fd), logs=True)
        _, status = os.waitpid(pid, 0)
        code = _exit_code(status)
        _kill_leftovers(whole_namespace=True)
        for name, cap in dict(request["outputs"]).items():
            frames.send(name, int(cap))
        for name in LOGS:
            frames.send(name, LOG_TAIL_BYTES, tail=True)
        os.chdir("/")
        # Whatever the next job would inherit must be as this worker started: else a fresh worker takes it.
        retire = not _wipe(modes) or _ipc_objects() > 0 or _process_state() != baseline
        frames.header(end=True, code=code, retire=retire)
        frames.flush()


def main(argv: list[str]) -> None:
    """`run --channel FD [--outputs JSON] [--whole-namespace] -- SCRIPT ARGS...` or `serve --requests FD --replies
    FD [--preload MODULES]`: parsed by hand, argparse alone costs a cold candidate 6 ms of its start."""
    mode, rest = argv[0], argv[1:]
    split = rest.index("--") if "--" in rest else len(rest)
    options: dict[str, str] = {}
    flags = rest[:split]
    while flags:
        name = flags.pop(0).removeprefix("--")
        options[name] = "yes" if name == "whole-namespace" else flags.pop(0)
    if mode == "run":
        outputs = json.loads(options.get("outputs", "{}"))
        sys.exit(run(int(options["channel"]), outputs, rest[split + 1 :], "whole-namespace" in options))
    if mode == "serve":
        preload = [m for m in options.get("preload", "").split(",") if m]
        serve(int(options["requests"]), int(options["replies"]), preload)
        return
    sys.exit(f"supervise: unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
