"""The bubblewrap sandbox: what a candidate's mount namespace holds, and whether bwrap can run here at all.

Inside: new user (uid 65534, no capabilities, no further user namespaces), PID, IPC, UTS, network and cgroup
namespaces; a fresh /proc showing only the candidate's processes; read-only system libraries and Python
environment; the data read-only at /sandbox/data; a size-capped tmpfs at /sandbox/work holding the script. A
small shell runs the candidate, kills whatever it left behind, then writes the wanted outputs as a tar stream
to its stdout: the only thing that leaves the sandbox.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

WORK = "/sandbox/work"
DATA = "/sandbox/data"
SANDBOX_UID = "65534"
SYSTEM = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/lib32",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
)
"""System paths bound read-only where they exist; nothing else of /etc (it can hold secrets)."""
LOGS = ("stdout.log", "stderr.log")

_NAMESPACES = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--unshare-cgroup",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--uid",
    SANDBOX_UID,
    "--gid",
    SANDBOX_UID,
    "--cap-drop",
    "ALL",
    "--hostname",
    "sandbox",
)


def python_roots() -> list[str]:
    """The folders this interpreter and its environment live in (a venv, and the Python it was made from)."""
    roots: list[str] = []
    for path in sorted({Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}, key=lambda p: len(p.parts)):
        if not any(path.is_relative_to(root) for root in [*map(Path, roots), *map(Path, SYSTEM)]):
            roots.append(str(path))
    return roots


def _mounts() -> list[str]:
    argv = ["--proc", "/proc", "--dev", "/dev"]
    for path in SYSTEM:
        argv += ["--ro-bind-try", path, path]
    for root in python_roots():
        argv += ["--ro-bind", root, root]
    return argv


def _sandbox(script: Path, name: str, data: Path, disk_bytes: int, binds: tuple[str, ...] = ()) -> list[str]:
    """bwrap up to `--`: namespaces, the read-only system, Python and data, a capped tmpfs holding `script`."""
    return [
        "bwrap",
        *_NAMESPACES,
        *_mounts(),
        *("--ro-bind", str(data), DATA),
        *binds,
        *("--size", str(disk_bytes), "--tmpfs", WORK),
        *("--ro-bind", str(script), f"{WORK}/{name}"),
        *("--chdir", WORK),
        "--",
    ]


def command(argv: list[str], *, script: Path, data: Path, disk_bytes: int, outputs: tuple[str, ...]) -> list[str]:
    """bwrap running `argv` (paths as the sandbox sees them) in /sandbox/work, then streaming `outputs` out."""
    wanted = " ".join(shlex.quote(name) for name in (*outputs, *LOGS))
    inner = (
        '"$@" >stdout.log 2>stderr.log </dev/null; code=$?; kill -KILL -1 2>/dev/null; '
        f'found=; for f in {wanted}; do if [ -e "$f" ] || [ -L "$f" ]; then found="$found $f"; fi; done; '
        "tar -cf - $found 2>/dev/null; exit $code"
    )
    return [*_sandbox(script, "solution.py", data, disk_bytes), "/bin/sh", "-c", inner, "sandbox", *argv]


def serve_command(
    argv: list[str], *, script: Path, data: Path, disk_bytes: int, writable: Path, mount: str
) -> list[str]:
    """bwrap running a long-lived `argv` (a warm worker) with its stdin and stdout as the channel: the data
    read-only, `script` as /sandbox/work/<its name>, and `writable` bound read-write at `mount`."""
    return [*_sandbox(script, script.name, data, disk_bytes, ("--bind", str(writable), mount)), *argv]


@cache
def problem() -> str | None:
    """Why bubblewrap cannot sandbox a candidate here, in one line; None when it can (checked once)."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    if any(root.startswith("/sandbox") for root in python_roots()):
        return f"the Python environment lives under /sandbox ({sys.prefix}), where the sandbox mounts its own folders"
    probe = ["bwrap", *_NAMESPACES, *_mounts(), "--", sys.executable, "-I", "-S", "-c", "pass"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be started: {exc}"
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return f"bwrap cannot create its sandbox here ({said}); user namespaces may be disabled"
    return None
