"""The basic sandbox, where bubblewrap cannot run (missing, user namespaces off, or `AGENT_K_SANDBOX=basic`).

Its candidate runs under the same supervisor as in bubblewrap (`_supervise.py`: the outputs leave as frames on a
descriptor only it holds), with the seccomp filter loaded by the launcher, rlimits and cgroups. What differs is
who it runs as:

- **as root**, the launcher builds what bubblewrap would (`_rootfs.py`): new mount, PID, network, IPC and UTS
  namespaces, a read-only root of the system paths and the Python environment, the data read-only at
  /sandbox/data, a capped tmpfs at /sandbox/work, and drops to the sandbox user before the supervisor starts.
  Nothing of a candidate runs as root; where these namespaces cannot be made, candidates do not run at all
  (`policy.basic_problem`).
- **as anyone else**, there is no uid to drop to and no namespace to make: the candidate runs as the runner's
  user, in a private folder of its own candidate folder (docs/security.md says what that leaves open).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

from agent_k.sandbox import bwrap
from agent_k.sandbox.identity import Identity
from agent_k.sandbox.seccomp import SeccompUnavailable, filter_fd

PRIVATE = ".sandbox"
"""The folder a non-root basic candidate works in, inside its candidate folder (removed after the run)."""


def command(
    args: list[str],
    *,
    script: Path,
    data: Path,
    workdir: Path,
    disk_bytes: int,
    outputs: dict[str, int],
    channel: int,
    identity: Identity | None,
) -> bwrap.Launch:
    """The supervised `python solution.py --data DATA ARGS` of the basic sandbox; `identity`: the account a root
    runner drops to (None: not root)."""
    launch = bwrap.Launch()
    try:
        launch.seccomp = filter_fd()
        launch.fds.append(launch.seccomp)
    except SeccompUnavailable:
        pass  # the probe at the mission's start said so (`policy.basic_problem`)
    if identity is not None:
        launch.rootfs = rootfs(script=script, data=data, disk_bytes=disk_bytes, identity=identity)
        candidate = ["solution.py", "--data", bwrap.DATA, *args]
        launch.argv = [*bwrap.supervised(channel, outputs), "--whole-namespace", "--", *candidate]
        launch.cwd = Path("/")
        return launch
    private = workdir / PRIVATE
    shutil.rmtree(private, ignore_errors=True)
    private.mkdir(mode=0o700)
    shutil.copyfile(script, private / "solution.py")
    candidate = ["solution.py", "--data", str(data), *args]
    launch.argv = [*bwrap.supervised(channel, outputs, str(bwrap.SUPERVISOR_SOURCE)), "--", *candidate]
    launch.cwd = private
    return launch


def rootfs(*, script: Path | None, data: Path, disk_bytes: int, identity: Identity) -> dict[str, object]:
    """The root a root launcher builds: what bubblewrap binds, the supervisor and the script copied in."""
    roots = bwrap.python_roots()
    binds = [(path, path) for path in bwrap.SYSTEM if os.path.lexists(path)] + [(root, root) for root in roots]
    unreadable = [Path(path) for path, _ in unreadable_roots()]
    owned = [root for root in roots if any(path.is_relative_to(root) for path in unreadable)]
    files = [(str(bwrap.SUPERVISOR_SOURCE), bwrap.SUPERVISOR)]
    if script is not None:
        files.append((str(script), f"{bwrap.WORK}/solution.py"))
    return {
        "root": bwrap.STAGE,
        "binds": binds,
        "owned": owned,
        "files": files,
        "data": str(data),
        "work_bytes": disk_bytes,
        "shm_bytes": bwrap.SHM_BYTES,
        "gpus": [os.path.relpath(device, "/dev") for device in bwrap.gpu_devices()],
        "uid": identity.uid,
        "gid": identity.gid,
    }


def unreadable_roots() -> list[tuple[str, int]]:
    """The Python environment's folders (and its interpreter) that others cannot read, with their modes: a venv
    made under umask 027 is its owner's alone. The basic sandbox binds them idmapped, as the sandbox user's own."""
    readable = stat.S_IROTH | stat.S_IXOTH  # folders to enter and list, the interpreter to run
    found = []
    for root in [*bwrap.python_roots(), str(Path(sys.executable).resolve())]:
        mode = Path(root).stat().st_mode
        if mode & readable != readable:
            found.append((root, stat.S_IMODE(mode)))
    return found


def cleanup(workdir: Path) -> None:
    shutil.rmtree(workdir / PRIVATE, ignore_errors=True)
