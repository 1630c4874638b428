"""What AGENT-K knows about a platform, declared once (docs/architecture.md, "Platforms").

A `Platform` says how to open the platform's adapter, how to check that it can be used from here (credentials)
and how to check cheaply that a competition exists. The built-in ones are declared beside their adapters
(`<platform>/declaration.py`); `agent_k.platforms.registry` finds them by their folder, and `declare` adds one
from anywhere else (a plug-in, a test's toy platform).
Nothing outside a declaration asks for a platform by name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

    from agent_k.config import Settings
    from agent_k.platforms.base import PlatformAdapter


def _usable(settings: Settings) -> None:
    """A platform with nothing to check."""


@dataclass(frozen=True, kw_only=True)
class Platform:
    name: str
    summary: str
    """One line for `--help`: what the platform is and what it needs."""
    open: Callable[[Settings, httpx.AsyncClient], PlatformAdapter]
    """The adapter; a remote one sends its requests through the client."""
    verify: Callable[[Settings, str], Awaitable[None]]
    """Raise `CompetitionNotFound` (or another `PlatformError`) unless the competition exists; cheap: nothing is
    downloaded or materialised."""
    check: Callable[[Settings], None] = _usable
    """Raise `CredentialsMissing` (or another `PlatformError`) when the platform cannot be used from here."""
    daily_submissions: int | None = None
    """The usual daily submission limit, for a competition that does not say its own (None: no limit)."""
