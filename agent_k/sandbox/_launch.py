"""Child-side half of the sandbox: join the candidate's cgroups, apply resource limits, and, when started as root,
stage what the sandbox user cannot reach (bubblewrap) or build the basic sandbox's namespaces and root
(`_rootfs.py`), then drop to that user; load the seccomp filter where bubblewrap does not; then exec the command
(bubblewrap, or the supervisor in the basic sandbox).

Run as a script with the standard library only (`python -I -S _launch.py --as MB ... -- argv...`), so it starts
in milliseconds. Doing this in the child (instead of `preexec_fn`) keeps the parent free of fork-unsafe
callbacks while it runs threads.

Staging (root, bubblewrap): in a mount namespace of its own, the launcher opens each `--stage` source (as root,
so /root and other private folders are no obstacle), covers STAGE with a small tmpfs and binds source i at
STAGE/i. Bubblewrap, started afterwards as the unprivileged user, binds from there. Nothing of this reaches the
host's mount table.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import signal
import stat
import sys
from pathlib import Path

_PR_SET_PDEATHSIG, _PR_SET_SECCOMP, _PR_SET_NO_NEW_PRIVS, _SECCOMP_MODE_FILTER = 1, 22, 38, 2
_CLONE_NEWNS = 0x00020000
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
_libc = ctypes.CDLL(None, use_errno=True)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _limit(kind: int, value: int) -> None:
    _soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, value if hard == resource.RLIM_INFINITY else hard))


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _encoded(text: str | None) -> bytes | None:
    return None if text is None else text.encode()


def _mount(source: str | None, target: str, kind: str | None, flags: int, options: str | None = None) -> None:
    done = _libc.mount(_encoded(source), target.encode(), _encoded(kind), flags, _encoded(options))
    _check(done, f"mount {target}")


def _stage(sources: list[str], root: str) -> None:
    """Bind each source at root/<index> in a private mount namespace (sources opened before root is covered)."""
    _check(_libc.unshare(_CLONE_NEWNS), "unshare")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    opened = [os.open(source, os.O_PATH | os.O_CLOEXEC) for source in sources]
    _mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=64k")
    for index, fd in enumerate(opened):
        target = f"{root}/{index}"
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            Path(target).mkdir()
        else:
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
        _mount(f"/proc/self/fd/{fd}", target, None, _MS_BIND | _MS_REC)
        os.close(fd)
    os.chdir("/")


def _drop(user: str) -> None:
    uid, gid = (int(part) for part in user.split(":"))
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() == 0 or os.geteuid() == 0:
        raise OSError("the launcher is still root after dropping its privileges")


def _seccomp(fd: int) -> None:
    """Load the compiled filter read from `fd` (bubblewrap loads it itself; the basic sandbox comes here)."""
    with os.fdopen(fd, "rb") as source:
        program = source.read()
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    _check(_libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "prctl(PR_SET_SECCOMP)")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--as", dest="address_space_mb", type=int, required=True, help="0: no address-space cap")
    parser.add_argument("--cpu", type=int, required=True)
    parser.add_argument("--fsize", type=int, required=True)
    parser.add_argument("--nproc", type=int, required=True, help="0: a pids cgroup caps the tasks instead")
    parser.add_argument("--cgroup", action="append", default=[], help="join this cgroup (repeatable)")
    parser.add_argument("--user", help="UID:GID to drop to before the command (the launcher runs as root)")
    parser.add_argument("--stage", action="append", default=[], help="a source to bind under --stage-root")
    parser.add_argument("--stage-root", default="/tmp")
    parser.add_argument("--rootfs", help="JSON: build the basic sandbox's namespaces and root first (root only)")
    parser.add_argument("--seccomp", type=int, help="a descriptor to read a compiled seccomp filter from")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    for group in args.cgroup:
        Path(group, "cgroup.procs").write_text(str(os.getpid()))
    if args.address_space_mb:
        _limit(resource.RLIMIT_AS, args.address_space_mb * 1024 * 1024)
    _limit(resource.RLIMIT_CPU, args.cpu)
    _limit(resource.RLIMIT_FSIZE, args.fsize * 1024 * 1024)
    if sys.platform == "linux":
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # die with the runner (again after the drop, which clears it)
        if os.getppid() == 1:
            os._exit(137)
    if args.stage:
        _stage(args.stage, args.stage_root)
    if args.rootfs:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import _rootfs  # type: ignore[import-not-found]  # beside this script, which runs outside the package

        _rootfs.enter(json.loads(args.rootfs), signal.SIGKILL)
    if args.user:
        _drop(args.user)
    if args.nproc:
        _limit(resource.RLIMIT_NPROC, args.nproc)  # counts all the user's processes; the cgroup is exact
    if sys.platform == "linux":
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if args.seccomp is not None:
        _seccomp(args.seccomp)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
