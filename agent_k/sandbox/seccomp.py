"""The system calls a candidate is refused (bubblewrap's `--seccomp`), compiled by libseccomp once per process.

A model-training script reads files, allocates memory, starts threads and processes, and nothing more. What is
refused here is what an escape needs: another process's memory, the kernel's own interfaces, and a new mount or
namespace (where a kernel bug usually starts). Each entry says why; docs/security.md carries the same list.
"""

from __future__ import annotations

import errno
import os
import tempfile
from functools import cache

REFUSED: dict[str, str] = {
    "ptrace": "read or steer another process (the sandbox's init, a sibling candidate)",
    "process_vm_readv": "read another process's memory without ptrace",
    "process_vm_writev": "write another process's memory without ptrace",
    "pidfd_getfd": "take an open file from another process",
    "kcmp": "compare kernel objects of other processes (an address-layout probe)",
    "bpf": "load programs into the kernel",
    "perf_event_open": "kernel profiling: a side channel and a long history of kernel bugs",
    "userfaultfd": "stall the kernel at a chosen page fault (the classic way to win a kernel race)",
    "io_uring_setup": "a second system-call interface that seccomp cannot see into",
    "keyctl": "the kernel keyring, which is not namespaced",
    "add_key": "the kernel keyring, which is not namespaced",
    "request_key": "the kernel keyring, which is not namespaced",
    "mount": "change what the sandbox sees",
    "umount2": "uncover what a mount hides",
    "pivot_root": "change the sandbox's root",
    "chroot": "change the sandbox's root",
    "open_tree": "the new mount API: copy a mount",
    "move_mount": "the new mount API: attach a mount",
    "fsopen": "the new mount API: make a filesystem",
    "fsconfig": "the new mount API: configure a filesystem",
    "fsmount": "the new mount API: mount a filesystem",
    "fspick": "the new mount API: reconfigure a mounted filesystem",
    "mount_setattr": "change a mount's flags (read-only to writable)",
    "unshare": "a new namespace, where the candidate would hold every capability",
    "setns": "join another namespace",
    "open_by_handle_at": "open a host file by its handle, around the mount namespace",
    "name_to_handle_at": "learn the handles open_by_handle_at needs",
    "init_module": "load a kernel module",
    "finit_module": "load a kernel module",
    "delete_module": "unload a kernel module",
    "kexec_load": "replace the running kernel",
    "kexec_file_load": "replace the running kernel",
    "reboot": "restart the machine",
    "swapon": "change the machine's swap",
    "swapoff": "change the machine's swap",
    "acct": "process accounting, host-wide",
    "syslog": "read the kernel's log",
    "iopl": "raw I/O ports",
    "mq_open": "POSIX message queues: no training script needs one, and a queue outlives a warm job unseen",
    "ioperm": "raw I/O ports",
}
CLONE3 = "clone3"
"""Its flags sit in memory, beyond seccomp's reach: it answers ENOSYS, so the C library falls back to clone."""
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
    "CLONE_NEWTIME": 0x00000080,
}
"""clone() with any of these makes a namespace (as unshare does): refused; plain fork and threads are not."""


class SeccompUnavailable(Exception):
    """libseccomp (or its Python binding) cannot build the filter here; the message says why."""


@cache
def filter_bpf() -> bytes:
    """The compiled filter (classic BPF for this machine's architecture) that bubblewrap loads from a file
    descriptor. Calls of another architecture's ABI (i386 from an x86-64 process) kill the caller."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # OSError: the binding found no libseccomp.so.2
        raise SeccompUnavailable(f"libseccomp is not available ({exc})") from None
    refused = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in REFUSED:
        try:
            rules.add_rule(refused, name)
        except (OSError, ValueError, RuntimeError):
            continue  # a call this kernel's architecture does not have: nothing to refuse
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), CLONE3)
    for flag in NAMESPACE_FLAGS.values():
        rules.add_rule(refused, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    with tempfile.TemporaryFile() as compiled:
        rules.export_bpf(compiled)
        compiled.seek(0)
        return compiled.read()


def filter_fd() -> int:
    """A descriptor to read the compiled filter from (a pipe: a few hundred bytes fit its buffer), for bubblewrap's
    `--seccomp` or the basic sandbox's launcher. The caller passes it on, then closes it."""
    read, write = os.pipe()
    os.set_inheritable(read, False)
    os.write(write, filter_bpf())
    os.close(write)
    return read
