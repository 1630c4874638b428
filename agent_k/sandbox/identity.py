"""Who a candidate runs as on the host.

Inside bubblewrap a candidate is uid 65534 of its own user namespace; what matters is the host uid that maps
to. Started by an ordinary user, bubblewrap maps it to that user, who holds no privilege to give away. Started
by root, it would map to root: the kernel then lets the candidate write `/proc/sys` (763 sysctls, among them
`kernel.core_pattern`, a way to run code as host root). So as root the launcher drops to a dedicated
unprivileged uid before bubblewrap starts, and the namespace maps to that uid instead.

That uid is the `agent-k-sandbox` system user where the install made one (`useradd --system --no-create-home
--shell /usr/sbin/nologin agent-k-sandbox`), else `nobody`; `AGENT_K_SANDBOX_USER` names another. It must own
nothing of AGENT-K's: the launcher refuses uid 0 and the runner's own uid.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass
from functools import cache

DEDICATED_USER = "agent-k-sandbox"
FALLBACK_USER = "nobody"
NOBODY_UID = 65534


class SandboxUserError(Exception):
    """The configured sandbox user cannot be used; the message says why."""


@dataclass(frozen=True)
class Identity:
    """The unprivileged host account a root runner's candidates run as."""

    uid: int
    gid: int
    name: str

    def launcher_arg(self) -> str:
        return f"{self.uid}:{self.gid}"


@cache
def sandbox_identity(user: str | None = None) -> Identity | None:
    """The account candidates run as, or None when the runner is not root (they then run as its own user, which
    cannot switch to another). `user` is a name or a numeric uid; None picks the dedicated user, else nobody."""
    if os.geteuid() != 0:
        return None
    identity = _lookup(user) if user else (_known(DEDICATED_USER) or _known(FALLBACK_USER))
    if identity is None:
        identity = Identity(NOBODY_UID, NOBODY_UID, str(NOBODY_UID))
    if identity.uid == 0 or identity.gid == 0:
        raise SandboxUserError(f"the sandbox user {identity.name!r} is root; candidates must run unprivileged")
    return identity


def _known(name: str) -> Identity | None:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    return Identity(entry.pw_uid, entry.pw_gid, entry.pw_name)


def _lookup(user: str) -> Identity:
    if user.isdigit():
        try:
            entry = pwd.getpwuid(int(user))
        except KeyError:
            return Identity(int(user), int(user), user)  # an account need not exist for the kernel
        return Identity(entry.pw_uid, entry.pw_gid, entry.pw_name)
    found = _known(user)
    if found is None:
        raise SandboxUserError(f"AGENT_K_SANDBOX_USER={user!r}: no such user on this machine")
    return found
