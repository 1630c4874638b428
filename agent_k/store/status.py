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


class FailureReason(StrEnum):
    """Why a mission failed (`missions.result`'s `error`, `mission.failed`'s `reason`)."""

    no_matching_competition = "no_matching_competition"
    agent_failed = "agent_failed"
    """The model failed in agent mode, where nothing falls back."""
    research_failed = "research_failed"
    no_valid_baseline = "no_valid_baseline"
    generation_failed = "generation_failed"
    no_candidate = "no_candidate"
    invalid_submission = "invalid_submission"
    submission_failed = "submission_failed"
    """The platform kept failing the submit call."""
    submission_error = "submission_error"
    """The platform scored the submission as an error."""
    submission_quota_exhausted = "submission_quota_exhausted"
    repair_failed = "repair_failed"
    illegal_phase_transition = "illegal_phase_transition"
    node_error = "node_error"
    """A step raised something no strategy recovers."""
    budget_exceeded = "budget_exceeded"
    incompatible_version = "incompatible_version"
    """The snapshot was written by code whose graph this code cannot continue (`agent_k.mission.versions`)."""
    cancelled = "cancelled"
    rejected = "rejected"
    """Rejected at the approval gate."""


TERMINAL: frozenset[MissionStatus] = frozenset({MissionStatus.succeeded, MissionStatus.failed, MissionStatus.cancelled})
UNFINISHED: frozenset[MissionStatus] = frozenset(MissionStatus) - TERMINAL
CLAIMABLE: frozenset[MissionStatus] = frozenset({MissionStatus.queued, MissionStatus.running})
"""What a worker may claim: queued, or running under a lease that expired (its process died)."""
RESUMABLE_FAILURES: frozenset[FailureReason] = frozenset(
    {
        FailureReason.node_error,
        FailureReason.submission_failed,
        FailureReason.submission_quota_exhausted,
        FailureReason.incompatible_version,
    }
)
"""Failure reasons worth another try: a node that raised or a platform that kept failing (maybe a transient
fault), a quota that resets daily, a snapshot that the code which wrote it can still continue."""
CONTROLS: dict[str, frozenset[MissionStatus]] = {
    "cancel": UNFINISHED,
    "resume": frozenset({MissionStatus.failed, MissionStatus.cancelled}),
    "approve": frozenset({MissionStatus.awaiting_approval}),
    "reject": frozenset({MissionStatus.awaiting_approval}),
}
"""The statuses each control of `agent_k.mission.control` can act on: the page offers a control only then (the
control itself still checks the rest, such as a failure's reason)."""
