"""The candidate sandbox (docs/security.md): bubblewrap where it can run, else the basic isolation; cgroups, rlimits,
a scrubbed environment, an unprivileged host user when the runner is root; and the reading of whatever a
candidate leaves behind, in disposable processes."""

from agent_k.sandbox.bwrap import gpu_devices
from agent_k.sandbox.launcher import gpu_usable
from agent_k.sandbox.policy import (
    SandboxChoice,
    SandboxKind,
    SandboxSetting,
    SandboxUnavailable,
    bwrap_problem,
    choose,
    resolve,
)
from agent_k.sandbox.reader import (
    OutputReader,
    TableShape,
    UntrustedOutput,
    read_regular,
    read_tail,
    shared_reader,
)
from agent_k.sandbox.run import (
    MAX_FILE_MB,
    Job,
    Limits,
    Runner,
    SandboxResult,
    network_isolation_available,
    run_sandboxed,
)

__all__ = [
    "MAX_FILE_MB",
    "Job",
    "Limits",
    "OutputReader",
    "Runner",
    "SandboxChoice",
    "SandboxKind",
    "SandboxResult",
    "SandboxSetting",
    "SandboxUnavailable",
    "TableShape",
    "UntrustedOutput",
    "bwrap_problem",
    "choose",
    "gpu_devices",
    "gpu_usable",
    "network_isolation_available",
    "read_regular",
    "read_tail",
    "resolve",
    "run_sandboxed",
    "shared_reader",
]
