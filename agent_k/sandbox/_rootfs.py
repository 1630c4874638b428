"""Child-side, for the launcher (`_launch.py`) when it runs as root without bubblewrap: the basic sandbox's own
namespaces and root filesystem, so that its candidates run as the sandbox user too, and see what a bubblewrap
candidate sees.

New mount, PID, network, IPC and UTS namespaces; a read-only root (a tmpfs) holding only the system paths and the
Python environment (read-only binds), a fresh /proc, a read-only /dev of the usual devices (and the GPUs') with a
small /dev/shm, the data read-only at /sandbox/data and a size-capped tmpfs owned by the sandbox user at
/sandbox/work. A Python environment only its owner may read (a venv made under umask 027) is bound idmapped: the
sandbox user sees its files as its own, read-only. The calling process forks: the child is pid 1 of the new PID
namespace (the supervisor, once the launcher execs it), the parent waits outside and exits as the child did.
Standard library only; the spec comes as JSON from `agent_k.sandbox.basic`.
"""

from __future__ import annotations

import ctypes
import os
import signal
import stat
from pathlib import Path

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
CLONE_NEWUSER = 0x10000000
# The new mount API (Linux 5.12+); these syscall numbers are the same on every architecture.
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442
OPEN_TREE_CLONE, O_CLOEXEC, AT_EMPTY_PATH, AT_RECURSIVE, MOVE_MOUNT_F_EMPTY_PATH = 1, 0o2000000, 0x1000, 0x8000, 4
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_IDMAP = 0x1, 0x2, 0x100000
AT_FDCWD = -100
DEVICES = ("null", "zero", "full", "random", "urandom")
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus")
_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int, options: str | None = None) -> None:
    def encoded(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    _check(_libc.mount(encoded(source), target.encode(), encoded(kind), flags, encoded(options)), f"mount {target}")


def _read_only(target: str, extra: int = 0) -> None:
    _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | extra)


def _folders(path: Path) -> None:
    """`path` and its missing parents, each 0755 whatever the umask: the sandbox user must pass through every folder
    of the root (a runner under umask 027 would make them 0750, root's own, and the interpreter unreachable)."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir()
        folder.chmod(0o755)


def _mount_point(path: str, directory: bool) -> None:
    target = Path(path)
    _folders(target if directory else target.parent)
    if not directory:
        target.touch()
        target.chmod(0o644)


def _bind(fd: int, target: str) -> None:
    _mount_point(target, stat.S_ISDIR(os.fstat(fd).st_mode))
    _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
    _read_only(target)


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64),
                ("userns_fd", ctypes.c_uint64)]  # fmt: skip


def _syscall(number: int, *args: object) -> int:
    result = int(_libc.syscall(number, *args))
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"syscall {number}: {os.strerror(error)}")
    return result


def _idmap(owner: os.stat_result, uid: int, gid: int) -> int:
    """A user namespace mapping `owner`'s uid and gid to the sandbox user's, as an fd: an idmapped mount's ids.

    A child enters a new user namespace and waits; this process (root) writes its maps and keeps its namespace."""
    ready_r, ready_w = os.pipe()
    hold_r, hold_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(ready_r)
        os.close(hold_w)
        status = 0 if _libc.unshare(CLONE_NEWUSER) == 0 else 1
        os.write(ready_w, bytes([status]))
        os.read(hold_r, 1)
        os._exit(status)
    os.close(ready_w)
    os.close(hold_r)
    try:
        if os.read(ready_r, 1) != b"\0":
            raise OSError("could not create a user namespace for the idmapped environment")
        Path(f"/proc/{child}/uid_map").write_text(f"{owner.st_uid} {uid} 1\n")
        Path(f"/proc/{child}/gid_map").write_text(f"{owner.st_gid} {gid} 1\n")
        return os.open(f"/proc/{child}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(hold_w)
        os.close(ready_r)
        os.waitpid(child, 0)


def _bind_owned(fd: int, target: str, userns: int) -> None:
    """Bind `fd`'s tree read-only at `target`, its ids mapped by the user namespace `userns` (an idmapped mount)."""
    tree = _syscall(SYS_OPEN_TREE, fd, b"", OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE)
    try:
        attr = _MountAttr(attr_set=MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, userns_fd=userns)
        _syscall(SYS_MOUNT_SETATTR, tree, b"", AT_EMPTY_PATH | AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr))
        _mount_point(target, directory=True)
        _syscall(SYS_MOVE_MOUNT, tree, b"", AT_FDCWD, target.encode(), MOVE_MOUNT_F_EMPTY_PATH)
    finally:
        os.close(tree)


def _devices(root: str, shm_bytes: int, gpus: list[str]) -> None:
    dev = root + "/dev"
    _folders(Path(dev))
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for name in dict.fromkeys([*DEVICES, *gpus]):
        _mount_point(f"{dev}/{name}", directory=False)
        _mount(f"/dev/{name}", f"{dev}/{name}", None, MS_BIND)
    Path(dev, "fd").symlink_to("/proc/self/fd")
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        Path(dev, name).symlink_to(f"/proc/self/fd/{fd}")
    _folders(Path(dev, "shm"))
    _mount("tmpfs", f"{dev}/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"mode=1777,size={shm_bytes}")
    _mount(None, dev, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC)


def _mirror(child: int) -> None:
    """The launcher's original process: hold nothing, wait for the sandbox's pid 1, exit as it did."""
    os.closerange(3, os.sysconf("SC_OPEN_MAX") if os.sysconf("SC_OPEN_MAX") > 0 else 1024)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def enter(spec: dict[str, object], pdeathsig: int) -> None:
    """Build the sandbox of `spec` and move into it; returns in the new PID namespace's pid 1, chrooted, still
    root (the launcher then drops to the sandbox user). `spec`: root (an empty mount point), binds (source,
    destination) read-only, owned (the destinations among them to bind idmapped), files (source, destination)
    copied, data, work_bytes, shm_bytes, uid, gid, gpus (the GPUs' device files, relative to /dev)."""
    binds = [(str(s), str(d)) for s, d in spec["binds"]]  # type: ignore[attr-defined]
    owned = {str(d) for d in spec.get("owned", [])}  # type: ignore[attr-defined]
    files = [(str(s), str(d)) for s, d in spec["files"]]  # type: ignore[attr-defined]
    root = str(spec["root"])
    uid, gid, size = int(spec["uid"]), int(spec["gid"]), int(spec["work_bytes"])  # type: ignore[call-overload]
    # Before the new PID namespace, whose pids the host's /proc (where the maps are written) does not know.
    idmaps = {dest: _idmap(Path(source).stat(), uid, gid) for source, dest in binds if dest in owned}
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    # Open every source before anything is covered: the root's mount point may hide some of them.
    opened = [(os.open(source, os.O_PATH | os.O_CLOEXEC), dest) for source, dest in binds]
    data = os.open(str(spec["data"]), os.O_PATH | os.O_CLOEXEC)
    contents = [(_read(source), dest) for source, dest in files]
    child = os.fork()
    if child:
        _mirror(child)
    _libc.prctl(1, pdeathsig, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the waiting launcher
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    for fd, dest in [*opened, (data, "/sandbox/data")]:
        if dest in idmaps:
            _bind_owned(fd, root + dest, idmaps[dest])
            os.close(idmaps[dest])
        else:
            _bind(fd, root + dest)
        os.close(fd)  # no descriptor of the host's tree may survive the chroot
    _folders(Path(root, "proc"))
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in PROC_READ_ONLY:
        path = f"{root}/proc/{name}"
        if Path(path).exists():
            _mount(path, path, None, MS_BIND | MS_REC)
            _read_only(path, MS_NODEV | MS_NOEXEC)
    _devices(root, int(spec["shm_bytes"]), [str(name) for name in spec["gpus"]])  # type: ignore[call-overload,attr-defined]
    work = root + "/sandbox/work"
    _folders(Path(work))
    _mount("tmpfs", work, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0700,uid={uid},gid={gid},size={size}")
    for content, dest in contents:
        Path(root + dest).write_bytes(content)
        Path(root + dest).chmod(0o644)
    _mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _libc.sethostname(b"sandbox", 7)
    os.chroot(root)
    os.chdir("/sandbox/work")


def _read(path: str) -> bytes:
    return Path(path).read_bytes()
