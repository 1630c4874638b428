"""Competition platforms: the `PlatformAdapter` protocol and its implementations, local and Kaggle.

The platform names load at once (the command line offers them); the protocol's models, on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from agent_k.platforms.base import (
        CompetitionNotFound,
        LeaderboardEntry,
        PlatformAdapter,
        PlatformError,
        Submission,
        SubmissionStatus,
    )

PlatformName = Literal["local", "kaggle"]
PLATFORMS: tuple[str, ...] = get_args(PlatformName)

_FROM_BASE = frozenset(
    {"CompetitionNotFound", "LeaderboardEntry", "PlatformAdapter", "PlatformError", "Submission", "SubmissionStatus"}
)

__all__ = [
    "PLATFORMS",
    "CompetitionNotFound",
    "LeaderboardEntry",
    "PlatformAdapter",
    "PlatformError",
    "PlatformName",
    "Submission",
    "SubmissionStatus",
]


def __getattr__(name: str) -> object:
    if name in _FROM_BASE:
        return getattr(import_module(f"{__name__}.base"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
