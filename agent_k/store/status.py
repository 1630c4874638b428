"""Every status the store records, with the sets the runner, the workers and the control operations decide by.

They are `StrEnum`s: a value read back from a column compares equal to its member.
"""

from __future__ import annotations

from enum import StrEnum


class MissionStatus(StrEnum):
    queued = "queued"
    running = "running"
    awaiting_approval = "awaiting_approval"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"


class StepStatus(StrEnum):
    """A snapshot's status: the step it opens is running until it ends one of these ways."""

    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"
    interrupted = "interrupted"
    """Its process died; the step re-runs from the snapshot."""
    waiting = "waiting"
    """Parked at the approval gate."""
    forked = "forked"
    """A fork's first snapshot: its parent's state where the fork starts; the fork's first step runs from it."""


class CandidateStatus(StrEnum):
    succeeded = "succeeded"
    failed = "failed"
    screened_out = "screened_out"
    """Its cheap first estimate fell short, so it was not evaluated in full."""


TERMINAL: frozenset[MissionStatus] = frozenset({MissionStatus.succeeded, MissionStatus.failed, MissionStatus.cancelled})
UNFINISHED: frozenset[MissionStatus] = frozenset(MissionStatus) - TERMINAL
CLAIMABLE: frozenset[MissionStatus] = frozenset({MissionStatus.queued, MissionStatus.running})
"""What a worker may claim: queued, or running under a lease that expired (its process died)."""
RESUMABLE_FAILURES: frozenset[str] = frozenset(
    {"node_error", "submission_failed", "submission_quota_exhausted", "incompatible_version"}
)
"""Failure reasons worth another try: a node that raised or a platform that kept failing (maybe a transient
fault), a quota that resets daily, a snapshot that the code which wrote it can still continue."""
