"""The candidate sandbox (DESIGN §8): bubblewrap where it can run, else the basic isolation; cgroups, rlimits,
a scrubbed environment; and safe reading of whatever a candidate leaves behind."""

from agent_k.ml.sandbox.outputs import UntrustedOutput, parse_output, read_regular
from agent_k.ml.sandbox.policy import SandboxChoice, SandboxSetting, SandboxUnavailable, choose
from agent_k.ml.sandbox.run import (
    MAX_FILE_MB,
    Job,
    Limits,
    Runner,
    SandboxKind,
    SandboxResult,
    network_isolation_available,
    resolve,
    run_sandboxed,
)

__all__ = [
    "MAX_FILE_MB",
    "Job",
    "Limits",
    "Runner",
    "SandboxChoice",
    "SandboxKind",
    "SandboxResult",
    "SandboxSetting",
    "SandboxUnavailable",
    "UntrustedOutput",
    "choose",
    "network_isolation_available",
    "parse_output",
    "read_regular",
    "resolve",
    "run_sandboxed",
]
