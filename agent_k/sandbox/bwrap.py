"""The bubblewrap sandbox: what a candidate's namespaces and mounts hold.

Inside: a new user (uid 65534, no capabilities, no further user namespaces), PID, IPC, UTS, network and cgroup
namespace; a fresh /proc whose `sys`, `sysrq-trigger`, `irq` and `bus` are read-only; the system libraries and
the Python environment read-only; the data read-only at /sandbox/data; a size-capped tmpfs at /sandbox/work
holding the script; everything else of the root read-only; a seccomp filter (`seccomp.REFUSED`).

A script a model wrote gets *copies* of its data and script, so that nothing it can read (`/proc/self/mountinfo`
above all) names a host path of AGENT-K's; our own templates get the data bound, which costs nothing on large
data. Started as root, bwrap itself runs as the sandbox user (`identity`): the launcher first binds what that
user could not reach (the interpreter under /root, say) under `STAGE` in a mount namespace of its own, then
drops its privileges.

Our supervisor (`_supervise.py`) is the sandbox's pid 1 (`--as-pid-1`: no bubblewrap init holds anything): it
runs the candidate, kills whatever it left behind, then sends the wanted outputs back as frames on a descriptor
that only it holds, and it is not dumpable, so no process of the sandbox can write its memory or reopen that
descriptor. The runner's stdout and stderr pipes are the candidate's logs; nothing else leaves the sandbox. The
root of the sandbox, /dev included, is read-only; the working folder and a small /dev/shm are capped tmpfs.
Where the host has NVIDIA GPUs, their device files are bound in (`gpu_devices`), so a network trains on them.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from agent_k.sandbox.seccomp import filter_fd

BWRAP = "bwrap"
"""The program run (found on PATH by the launcher)."""
WORK = "/sandbox/work"
DATA = "/sandbox/data"
SUPERVISOR = "/sandbox/supervise.py"
SUPERVISOR_SOURCE = Path(__file__).with_name("_supervise.py")
SHM_BYTES = 64 * 1024 * 1024
"""/dev/shm: private to the sandbox, and small (POSIX semaphores and shared memory need it to exist)."""
SANDBOX_UID = "65534"
STAGE = "/tmp"
"""Where a root launcher binds, in its own mount namespace, what the sandbox user may not reach on the host."""
MAX_COPIED_FILES = 256
"""A model's script gets copies of at most this many data files; a larger folder is bound (docs/security.md)."""
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
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")
"""Kernel knobs a fresh /proc leaves writable to whoever the kernel takes for their owner (bubblewrap covers
these only when it finds them writable at set-up, which `/proc/sys`, a read-only folder of writable files,
never looks)."""

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
    "--as-pid-1",
    "--uid",
    SANDBOX_UID,
    "--gid",
    SANDBOX_UID,
    "--cap-drop",
    "ALL",
    "--hostname",
    "sandbox",
)


@dataclass
class Launch:
    """What the launcher execs (a bwrap command line, or the basic sandbox's supervisor), what a root launcher
    must prepare before it drops privileges (`stage`: sources to bind under STAGE, in order; `rootfs`: the basic
    sandbox's namespaces and root, `agent_k.sandbox.basic`), the seccomp filter it loads itself (the basic
    sandbox: bubblewrap loads its own), the folder it starts in, and the descriptors the command reads (copies,
    filters): passed to it, then closed by the caller."""

    argv: list[str] = field(default_factory=list)
    stage: list[str] = field(default_factory=list)
    fds: list[int] = field(default_factory=list)
    rootfs: dict[str, object] | None = None
    seccomp: int | None = None
    cwd: Path | None = None

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()


def python() -> str:
    """This interpreter as an absolute path without `..` (not resolved: a venv is known by the path it is run at).
    Started as `../.venv/bin/python`, `sys.executable` names a folder that the sandbox does not hold."""
    return os.path.abspath(sys.executable)  # noqa: PTH100 (Path.resolve would follow the venv link)


@cache
def gpu_devices(dev: Path = Path("/dev")) -> tuple[str, ...]:
    """NVIDIA's device files on this host (the control and memory devices, one per GPU, MIG's capabilities); none
    where there is no GPU. A device node stays usable under the read-only /dev. Looked up once: every candidate's
    launch reads it."""
    found = [*dev.glob("nvidia*"), *dev.glob("nvidia-caps/*")]
    return tuple(sorted(str(path) for path in found if path.is_char_device()))


def python_roots() -> list[str]:
    """The folders this interpreter and its environment live in (a venv, and the Python it was made from)."""
    roots: list[str] = []
    for path in sorted({Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}, key=lambda p: len(p.parts)):
        if not any(path.is_relative_to(root) for root in [*map(Path, roots), *map(Path, SYSTEM)]):
            roots.append(str(path))
    return roots


class _Builder:
    """Assembles one `Launch`; `staged`: the launcher runs as root and binds non-system sources under STAGE."""

    def __init__(self, staged: bool) -> None:
        self.staged = staged
        self.launch = Launch(argv=[BWRAP, *_NAMESPACES])
        self._add("--proc", "/proc")
        for path in PROC_READ_ONLY:
            self._add("--ro-bind-try", path, path)
        self._add("--dev", "/dev", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm")
        for device in gpu_devices():
            self._add("--dev-bind", device, device)
        self._add("--remount-ro", "/dev")
        for path in SYSTEM:
            self._add("--ro-bind-try", path, path)
        for root in python_roots():
            self.bind(root, root)

    def _add(self, *args: str) -> None:
        self.launch.argv.extend(args)

    def _fd(self, fd: int) -> str:
        self.launch.fds.append(fd)
        return str(fd)

    def bind(self, source: str, dest: str) -> None:
        if self.staged:
            self.launch.stage.append(source)
            source = f"{STAGE}/{len(self.launch.stage) - 1}"
        self._add("--ro-bind", source, dest)

    def copy(self, path: Path, dest: str) -> None:
        """`path`'s content as a file at `dest`, read through a descriptor (no host path inside)."""
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        self._add("--file", self._fd(fd), dest)

    def data(self, folder: Path, *, copied: bool) -> None:
        files = _regular_files(folder) if copied else None
        if files is None or len(files) > MAX_COPIED_FILES:
            self.bind(str(folder), DATA)
            return
        self._add("--dir", DATA)
        for relative in sorted({p.parent for p in files} - {Path()}, key=lambda p: len(p.parts)):
            self._add("--dir", f"{DATA}/{relative}")
        for relative in files:
            self.copy(folder / relative, f"{DATA}/{relative}")

    def work(self, disk_bytes: int) -> None:
        """The capped working folder, and the supervisor beside it on the root (read-only once sealed)."""
        self._add("--size", str(disk_bytes), "--tmpfs", WORK)
        self.copy(SUPERVISOR_SOURCE, SUPERVISOR)

    def finish(self, command: list[str]) -> Launch:
        """Seal the root read-only, load the seccomp filter, then run `command` in the work folder."""
        self._add("--remount-ro", "/", "--chdir", WORK, "--seccomp", self._fd(filter_fd()), "--", *command)
        return self.launch


def _regular_files(folder: Path) -> list[Path] | None:
    """The regular files under `folder` (relative), links and anything odd left out; None past the copy limit."""
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not Path(root, d).is_symlink()]
        for name in files:
            path = Path(root, name)
            if stat.S_ISREG(path.lstat().st_mode):
                found.append(path.relative_to(folder))
                if len(found) > MAX_COPIED_FILES:
                    return None
    return found


def command(
    args: list[str],
    *,
    script: Path,
    data: Path,
    disk_bytes: int,
    outputs: dict[str, int],
    channel: int,
    untrusted: bool,
    staged: bool,
) -> Launch:
    """bwrap running `solution.py ARGS` (paths as the sandbox sees them) in /sandbox/work under the supervisor,
    which sends `outputs` (name: cap) back as frames on descriptor `channel`. `untrusted`: a model's script
    (copies, not binds)."""
    builder = _Builder(staged)
    builder.data(data, copied=untrusted)
    builder.work(disk_bytes)
    builder.copy(script, f"{WORK}/solution.py")
    return builder.finish([*supervised(channel, outputs), "--whole-namespace", "--", "solution.py", *args])


def supervised(channel: int, outputs: dict[str, int], supervisor: str = SUPERVISOR) -> list[str]:
    """The supervisor's command line for one run, before its `--` and the candidate's script and arguments."""
    return [python(), "-I", supervisor, "run", "--channel", str(channel), "--outputs", json.dumps(outputs)]


def serve_command(
    *, requests: int, replies: int, preload: tuple[str, ...], data: Path, disk_bytes: int, staged: bool
) -> Launch:
    """bwrap running the supervisor as a warm worker, spoken to on descriptors `requests` and `replies`: the data
    bound read-only, nothing of the host writable."""
    builder = _Builder(staged)
    builder.data(data, copied=False)
    builder.work(disk_bytes)
    serve = [python(), "-I", SUPERVISOR, "serve", "--requests", str(requests), "--replies", str(replies)]
    return builder.finish([*serve, "--preload", ",".join(preload)])


def probe_command(data: Path, *, staged: bool) -> Launch:
    """The smallest sandbox the interpreter starts in: whether bubblewrap works here at all."""
    builder = _Builder(staged)
    builder.data(data, copied=True)
    builder.work(1 << 20)
    return builder.finish([python(), "-I", "-S", "-c", "pass"])
