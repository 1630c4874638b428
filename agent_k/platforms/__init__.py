"""Competition platforms: the `PlatformAdapter` protocol, the declarations that name them, and the local and Kaggle
adapters.

Light at import: the protocol's models and the declarations load on first use of their names.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_k.platforms.base import (
        CompetitionNotFound,
        CredentialsMissing,
        LeaderboardEntry,
        PlatformAdapter,
        PlatformError,
        Submission,
        SubmissionStatus,
    )
    from agent_k.platforms.declaration import Platform
    from agent_k.platforms.registry import PlatformName, declare, platform_named, platform_names

_LAZY = {
    **dict.fromkeys(
        (
            "CompetitionNotFound",
            "CredentialsMissing",
            "LeaderboardEntry",
            "PlatformAdapter",
            "PlatformError",
            "Submission",
            "SubmissionStatus",
        ),
        "base",
    ),
    "Platform": "declaration",
    **dict.fromkeys(("PlatformName", "declare", "platform_named", "platform_names"), "registry"),
}

__all__ = [
    "CompetitionNotFound",
    "CredentialsMissing",
    "LeaderboardEntry",
    "Platform",
    "PlatformAdapter",
    "PlatformError",
    "PlatformName",
    "Submission",
    "SubmissionStatus",
    "declare",
    "platform_named",
    "platform_names",
]


def __getattr__(name: str) -> object:
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
