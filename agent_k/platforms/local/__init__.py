"""The embedded, offline competition platform (docs/architecture.md, "Local platform").

Light at import (its declaration is read whenever a platform is named): the platform loads on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_k.platforms.local.platform import LocalPlatform

__all__ = ["LocalPlatform"]


def __getattr__(name: str) -> object:
    if name == "LocalPlatform":
        return import_module("agent_k.platforms.local.platform").LocalPlatform
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
